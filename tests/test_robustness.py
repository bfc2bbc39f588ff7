"""Robustness on a fixture with planted unjudged relevant documents: the variants' runs rank
them high, re-judging confirms them (two scripted judges, the audit's vote rule), and the
measures rise exactly as ir_measures computes them on the augmented qrels; Judged@k reaches 1.0.
Also the retrieval path through the evaluate job, and the report in headless Chromium."""

import json
from functools import partial
from pathlib import Path

import ir_measures
import pytest

from benchsmith.agents.models import ModelSeam, ScriptedBackend
from benchsmith.agents.relevance import RelevanceGrade
from benchsmith.evals.robustness import confirmed_grade, top_k
from benchsmith.graphs.jobs.paraphrase import paraphrase
from benchsmith.graphs.jobs.robustness import robustness
from benchsmith.graphs.resources import register_model
from benchsmith.stores.beir import read_beir_qrels
from benchsmith.stores.errors import InputError
from tests.chromium import chromium_or_skip, loaded_images
from tests.paraphrase_fixtures import section, write_cast_files

QRELS = {"31_1": {"d1": 2}, "31_2": {"d2": 3}, "81_2": {"d3": 1}}
DOCUMENTS = {"d1": "Throat cancer is cancer of the pharynx.", "d2": "Throat cancer is often treatable.",
             "d3": "Openers fail when the motor burns out.", "p1": "RELEVANT: throat cancer explained in full.",
             "p2": "RELEVANT: how throat cancer is treated.", "n1": "A recipe for bread.", "n2": "Football results.",
             "n3": "The weather in Lisbon.", "n4": "A history of the violin."}
RUNS = {  # turn: ranked documents, best first
    "original": {"31_1": ["d1", "n1", "n2"], "31_2": ["d2", "n1", "n3"], "81_2": ["d3", "n2", "n4"]},
    "R1": {"31_1": ["p1", "d1", "n1"], "31_2": ["n3", "p2", "d2"], "81_2": ["n4", "n2", "d3"]},
}
MEASURES = ["nDCG@3", "AP"]


def judge_reply(messages, schema, lenient=False):
    """Grade 4 documents marked RELEVANT, 0 the others (the lenient judge also gives 1 to them)."""
    document = section(messages, "document")[0]
    grade = 4 if document.startswith("RELEVANT") else (1 if lenient else 0)
    return RelevanceGrade(rationale="scripted", grade=grade)


def write_runs_fixture(tmp_path: Path) -> dict[str, Path]:
    files = write_cast_files(tmp_path / "cast")
    files["qrels"] = tmp_path / "qrels.txt"
    files["qrels"].write_text("".join(f"{turn} 0 {doc} {rel}\n" for turn, docs in QRELS.items()
                                      for doc, rel in docs.items()), encoding="utf-8")
    files["corpus"] = tmp_path / "corpus.jsonl"
    files["corpus"].write_text("".join(json.dumps({"_id": doc, "title": "", "text": text}) + "\n"
                                       for doc, text in DOCUMENTS.items()), encoding="utf-8")
    for name, ranked in RUNS.items():
        files[name] = tmp_path / f"{name}.trec"
        files[name].write_text("".join(f"{turn} Q0 {doc} {rank} {10 - rank} test\n" for turn, docs in ranked.items()
                                       for rank, doc in enumerate(docs, start=1)), encoding="utf-8")
    return files


def expected(run: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    """Means over the judged turns, as ir_measures computes them (the reference library)."""
    scored = {turn: {doc: float(10 - rank) for rank, doc in enumerate(docs, start=1)} for turn, docs in run.items()}
    return {str(measure): value for measure, value in
            ir_measures.calc_aggregate([ir_measures.parse_measure(m) for m in [*MEASURES, "Judged@3"]], qrels,
                                       scored).items()}


def register_judges() -> list[str]:
    register_model("judge-a", ModelSeam(ScriptedBackend(replier=judge_reply, model="judge-a")))
    register_model("judge-b", ModelSeam(ScriptedBackend(replier=partial(judge_reply, lenient=True), model="judge-b")))
    return ["judge-a", "judge-b"]


def test_rejudging_planted_unjudged_relevant_documents_raises_the_measures_as_expected(tmp_path):
    files = write_runs_fixture(tmp_path)
    workspace = tmp_path / "ws"
    made = paraphrase([files["2019"], files["resolved"], files["2020"]], import_ecast=files["ecast"], test_sets=1,
                      qrels=files["qrels"], workspace=workspace, run_id="para")
    result = robustness("para", runs={"original": files["original"], "R1": files["R1"]}, qrels=files["qrels"],
                        corpus=files["corpus"], judges=register_judges(), judge_depth=3, measures=MEASURES,
                        workspace=workspace, run_id="rob")
    before, after = result.means["run"]["before"], result.means["run"]["after"]
    # Both judges grade the planted documents 4; on the others they disagree (0 and 1): the
    # confirmed grade is 0 (both gave 0 or more, only one 1 or more).
    augmented = {turn: dict(docs) for turn, docs in QRELS.items()}
    augmented["31_1"].update(p1=4, n1=0, n2=0)
    augmented["31_2"].update(p2=4, n1=0, n3=0)
    augmented["81_2"].update(n2=0, n4=0)
    assert read_beir_qrels(result.augmented_qrels) == augmented
    for name, run in RUNS.items():
        assert before[name] == pytest.approx(expected(run, QRELS))
        assert after[name] == pytest.approx(expected(run, augmented))
    assert after["R1"]["nDCG@3"] > before["R1"]["nDCG@3"] and after["R1"]["AP"] > before["R1"]["AP"]
    # The original missed the documents the paraphrases found: its ideal ranking grows, its nDCG falls.
    assert after["original"]["nDCG@3"] < before["original"]["nDCG@3"]
    assert after["R1"]["nDCG@3"] - after["original"]["nDCG@3"] > before["R1"]["nDCG@3"] - before["original"]["nDCG@3"]
    assert before["R1"]["Judged@3"] < 1.0 and before["original"]["Judged@3"] < 1.0
    assert after["R1"]["Judged@3"] == after["original"]["Judged@3"] == 1.0
    assert (result.pooled, result.confirmed) == (8, 8)
    results = result.results()
    changes = {(row["set"], row["measure"]): row for row in results["by_configuration"]["run"]["changes"]["after"]}
    assert changes[("R1", "nDCG@3")]["difference"] == pytest.approx(after["R1"]["nDCG@3"] - after["original"]["nDCG@3"])

    markdown = result.report["markdown"].read_text()
    assert "| original |" in markdown.replace("**", "") and "nDCG@3 after" in markdown
    loaded, total = loaded_images(chromium_or_skip(), result.report["html"], tmp_path)
    assert total >= 2 and loaded == total

    resumed = robustness("para", runs={"original": files["original"], "R1": files["R1"]}, qrels=files["qrels"],
                         corpus=files["corpus"], judges=["judge-a", "judge-b"], judge_depth=3, measures=MEASURES,
                         workspace=workspace, run_id="rob")
    assert resumed.already_finished and resumed.means == result.means
    assert made.test_sets["R1"].is_dir()


def test_one_judge_confirms_nothing_under_the_audits_rule(tmp_path):
    files = write_runs_fixture(tmp_path)
    workspace = tmp_path / "ws"
    paraphrase([files["2020"]], import_ecast=files["ecast"], test_sets=1, qrels=files["qrels"], workspace=workspace,
               run_id="para")
    result = robustness("para", runs={"original": files["original"], "R1": files["R1"]}, corpus=files["corpus"],
                        judges=register_judges()[:1], judge_depth=3, measures=MEASURES, workspace=workspace,
                        run_id="rob")
    assert result.confirmed == 0 and result.means["run"]["after"] == result.means["run"]["before"]


def test_run_files_must_name_the_paraphrase_runs_test_sets(tmp_path):
    files = write_runs_fixture(tmp_path)
    workspace = tmp_path / "ws"
    paraphrase([files["2020"]], import_ecast=files["ecast"], test_sets=1, qrels=files["qrels"], workspace=workspace,
               run_id="para")
    with pytest.raises(InputError, match="no test set 'R7'"):
        robustness("para", runs={"original": files["original"], "R7": files["R1"]}, workspace=workspace)
    with pytest.raises(InputError, match="needs original=FILE"):
        robustness("para", runs={"R1": files["R1"]}, workspace=workspace)
    with pytest.raises(InputError, match="no corpus here"):
        robustness("para", workspace=workspace)


def test_confirmed_grade_and_pool_depth():
    assert confirmed_grade([0, 3, 4]) == 3  # the median of three judges
    assert confirmed_grade([4, 0]) == 0  # both agree it is at least 0, only one that it is relevant
    assert confirmed_grade([4]) is None and confirmed_grade([4], min_votes=1) == 4
    assert top_k({"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}, 2) == ["a", "b", "c"]  # ties at the k-th kept


def write_beir_benchmark(directory: Path) -> None:
    """Two conversations over a corpus where BM25 finds unjudged documents for the paraphrases."""
    directory.mkdir(parents=True)
    corpus = {"g1": "Violin strings are made of gut, steel or synthetic core.",
              "g2": "A violin bow is strung with horsehair.",
              "u1": "Cello strings and violin strings: steel core strings last longest.",
              "u2": "Horsehair for bows comes from horse tails; it is rosined before playing.",
              "x1": "Bread needs flour, water and yeast.", "x2": "Lisbon has mild winters."}
    (directory / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n"
                                                    for d, t in corpus.items()), encoding="utf-8")
    queries = [("c1_t0", "c1", 0, "What are violin strings made of?"), ("c1_t1", "c1", 1, "And the bow?")]
    (directory / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": text, "metadata": {
        "conversation_id": c, "turn": t, "question": text, "rewrite": text if t == 0 else "What is a violin bow strung "
        "with?"}}) + "\n" for q, c, t, text in queries), encoding="utf-8")
    (directory / "qrels").mkdir()
    (directory / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nc1_t0\tg1\t1\nc1_t1\tg2\t1\n",
                                                  encoding="utf-8")


def test_retrieval_path_evaluates_every_test_set_with_the_evaluate_job(tmp_path):
    write_beir_benchmark(tmp_path / "bench")
    workspace = tmp_path / "ws"
    paraphrase(tmp_path / "bench", per_turn=2, min_similarity=0, test_sets=2, workspace=workspace, run_id="para")
    result = robustness("para", retrievers=["bm25"], histories=["oracle"], judges=["baseline"], min_votes=1,
                        judge_depth=2, measures=["nDCG@3"], depth=10, workspace=workspace, run_id="rob")
    assert result.sets == ["original", "R1", "R2"]
    means = result.means["bm25@oracle"]
    assert set(means["before"]) == {"original", "R1", "R2"}
    assert all(values["Judged@2"] == 1.0 for values in means["after"].values())  # every pooled document graded
    assert result.pooled > 0
    evaluations = result.results()["evaluations"]
    assert all(Path(files["bm25@oracle"]).is_file() for files in evaluations.values())
    assert (workspace / "runs" / "rob-R2" / "report.html").is_file()  # each test set is an evaluate run
