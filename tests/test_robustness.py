"""Robustness on a fixture with planted unjudged relevant documents: the variants' runs rank
them high, re-judging confirms them (two scripted judges, the audit's vote rule), and the
measures rise exactly as ir_measures computes them on the augmented qrels; Judged@k reaches 1.0.
Also the retrieval path through the evaluate job, and the report in headless Chromium."""

import json
from functools import partial
from pathlib import Path

import ir_measures
import pytest
from typer.testing import CliRunner

from benchsmith.agents.relevance import RelevanceGrade, RelevanceJudge
from benchsmith.agents.seam.backends import ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.cli import app
from benchsmith.evals.measures.robustness import (
    RELEVANT_GRADE,
    confirmed_grade,
    is_binary_scale,
    on_benchmark_scale,
    top_k,
)
from benchsmith.graphs.runtime.resources import register_model
from benchsmith.jobs.paraphrase import paraphrase
from benchsmith.jobs.robustness import robustness
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import read_beir_qrels
from tests.chromium import chromium_or_skip, loaded_images
from tests.paraphrase_fixtures import section, write_cast_files

QRELS = {"31_1": {"d1": 2}, "31_2": {"d2": 3}, "81_2": {"d3": 1}}
DOCUMENTS = {
    "d1": "Throat cancer is cancer of the pharynx.",
    "d2": "Throat cancer is often treatable.",
    "d3": "Openers fail when the motor burns out.",
    "p1": "RELEVANT: throat cancer explained in full.",
    "p2": "RELEVANT: how throat cancer is treated.",
    "n1": "A recipe for bread.",
    "n2": "Football results.",
    "n3": "The weather in Lisbon.",
    "n4": "A history of the violin.",
}
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
    files["qrels"].write_text(
        "".join(f"{turn} 0 {doc} {rel}\n" for turn, docs in QRELS.items() for doc, rel in docs.items()),
        encoding="utf-8",
    )
    files["corpus"] = tmp_path / "corpus.jsonl"
    files["corpus"].write_text(
        "".join(json.dumps({"_id": doc, "title": "", "text": text}) + "\n" for doc, text in DOCUMENTS.items()),
        encoding="utf-8",
    )
    for name, ranked in RUNS.items():
        files[name] = tmp_path / f"{name}.trec"
        files[name].write_text(
            "".join(
                f"{turn} Q0 {doc} {rank} {10 - rank} test\n"
                for turn, docs in ranked.items()
                for rank, doc in enumerate(docs, start=1)
            ),
            encoding="utf-8",
        )
    return files


def expected(run: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    """Means over the judged turns, as ir_measures computes them (the reference library)."""
    scored = {turn: {doc: float(10 - rank) for rank, doc in enumerate(docs, start=1)} for turn, docs in run.items()}
    return {
        str(measure): value
        for measure, value in ir_measures.calc_aggregate(
            [ir_measures.parse_measure(m) for m in [*MEASURES, "Judged@3"]], qrels, scored
        ).items()
    }


def register_judges() -> list[str]:
    register_model("judge-a", ModelSeam(ScriptedBackend(replier=judge_reply, model="judge-a")))
    register_model("judge-b", ModelSeam(ScriptedBackend(replier=partial(judge_reply, lenient=True), model="judge-b")))
    return ["judge-a", "judge-b"]


def test_rejudging_planted_unjudged_relevant_documents_raises_the_measures_as_expected(tmp_path):
    files = write_runs_fixture(tmp_path)
    workspace = tmp_path / "ws"
    made = paraphrase(
        [files["2019"], files["resolved"], files["2020"]],
        import_ecast=files["ecast"],
        test_sets=1,
        qrels=files["qrels"],
        workspace=workspace,
        run_id="para",
    )
    result = robustness(
        "para",
        runs={"original": files["original"], "R1": files["R1"]},
        qrels=files["qrels"],
        corpus=files["corpus"],
        judges=register_judges(),
        judge_depth=3,
        measures=MEASURES,
        workspace=workspace,
        run_id="rob",
    )
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

    resumed = robustness(
        "para",
        runs={"original": files["original"], "R1": files["R1"]},
        qrels=files["qrels"],
        corpus=files["corpus"],
        judges=["judge-a", "judge-b"],
        judge_depth=3,
        measures=MEASURES,
        workspace=workspace,
        run_id="rob",
    )
    assert resumed.already_finished and resumed.means == result.means
    assert made.test_sets["R1"].is_dir()


def test_a_vote_rule_the_judges_cannot_meet_exits_2_before_any_run_record(tmp_path):
    files = write_runs_fixture(tmp_path)
    workspace = tmp_path / "ws"
    paraphrase(
        [files["2020"]],
        import_ecast=files["ecast"],
        test_sets=1,
        qrels=files["qrels"],
        workspace=workspace,
        run_id="para",
    )
    outcome = CliRunner().invoke(
        app,
        [
            "robustness",
            "para",
            "--run",
            f"original={files['original']}",
            "--run",
            f"R1={files['R1']}",
            "--corpus",
            str(files["corpus"]),
            "--judge",
            "baseline",
            "--workspace",
            str(workspace),
            "--run-id",
            "rob",
        ],
    )
    assert outcome.exit_code == 2, outcome.output
    message = " ".join(outcome.output.split())
    assert "--min-votes 2 needs at least 2 judges" in message and "--min-votes 1" in message
    assert not (workspace / "runs" / "rob").exists()
    with pytest.raises(InputError, match="--min-votes 3 needs at least 3 judges"):
        robustness(
            "para",
            runs={"original": files["original"], "R1": files["R1"]},
            corpus=files["corpus"],
            judges=register_judges(),
            min_votes=3,
            workspace=workspace,
            run_id="rob",
        )
    assert not (workspace / "runs" / "rob").exists()


BINARY_QRELS = {"31_1": {"d1": 1}, "31_2": {"d2": 1}, "81_2": {"d3": 1}}
RELEVANT_FIRST = {  # every run ranks the relevant documents (gold, then the planted unjudged ones) first
    "original": {"31_1": ["d1", "p1", "n2"], "31_2": ["d2", "p2", "n1"], "81_2": ["d3", "n2", "n4"]},
    "R1": {"31_1": ["d1", "p1", "n1"], "31_2": ["d2", "p2", "n3"], "81_2": ["d3", "n4", "n1"]},
}


def test_a_judge_that_agrees_with_a_binary_gold_leaves_ndcg_as_it_was(tmp_path):
    """The judges grade the planted relevant documents 4 on CAsT's scale; the gold says 1. Merged
    as they were, nDCG of a run that ranks every relevant document first would fall (to 0.84 here)."""
    files = write_runs_fixture(tmp_path)
    files["qrels"].write_text(
        "".join(f"{turn} 0 {doc} {rel}\n" for turn, docs in BINARY_QRELS.items() for doc, rel in docs.items()),
        encoding="utf-8",
    )
    for name, ranked in RELEVANT_FIRST.items():
        files[name].write_text(
            "".join(
                f"{turn} Q0 {doc} {rank} {10 - rank} test\n"
                for turn, docs in ranked.items()
                for rank, doc in enumerate(docs, start=1)
            ),
            encoding="utf-8",
        )
    workspace = tmp_path / "ws"
    paraphrase(
        [files["2019"], files["resolved"], files["2020"]],
        import_ecast=files["ecast"],
        test_sets=1,
        qrels=files["qrels"],
        workspace=workspace,
        run_id="para",
    )
    judges = ["judge-a", "judge-a2"]
    for judge in judges:
        register_model(judge, ModelSeam(ScriptedBackend(replier=judge_reply, model=judge)))
    result = robustness(
        "para",
        runs={"original": files["original"], "R1": files["R1"]},
        qrels=files["qrels"],
        corpus=files["corpus"],
        judges=judges,
        judge_depth=3,
        measures=MEASURES,
        workspace=workspace,
        run_id="rob",
    )
    before, after = result.means["run"]["before"], result.means["run"]["after"]
    augmented = read_beir_qrels(result.augmented_qrels)
    assert augmented["31_1"]["p1"] == augmented["31_2"]["p2"] == 1  # grade 4 on the gold's binary scale
    assert augmented["31_1"]["n1"] == 0
    for name in RELEVANT_FIRST:
        assert after[name]["nDCG@3"] == pytest.approx(before[name]["nDCG@3"]) == pytest.approx(1.0)
        assert after[name]["nDCG@3"] == pytest.approx(expected(RELEVANT_FIRST[name], augmented)["nDCG@3"])
    graded = {
        turn: {doc: (4 if doc.startswith("p") else rel) for doc, rel in docs.items()}
        for turn, docs in augmented.items()
    }
    assert expected(RELEVANT_FIRST["R1"], graded)["nDCG@3"] < 0.9  # what merging the grades as they were gives
    results = result.results()
    assert results["scale"]["benchmark"] == "binary"
    assert results["pool"]["relevant_by_judge"] == {"judge-a": 2, "judge-a2": 2}


def test_grades_go_on_the_benchmarks_scale():
    assert is_binary_scale({"q": {"a": 1, "b": 0}}) and not is_binary_scale({"q": {"a": 2}})
    confirmed = {"q": {"a": 4, "b": 2, "c": 1, "d": 0}}
    assert on_benchmark_scale(confirmed, binary=True) == {"q": {"a": 1, "b": 1, "c": 0, "d": 0}}
    assert on_benchmark_scale(confirmed, binary=False) == confirmed


def test_the_offline_judge_calls_few_of_the_documents_retrieval_brings_up_relevant():
    """What BM25 pools shares the question's words by construction: the lexical judge must ask
    more than that (most of the words in one sentence) or it calls most of the pool relevant."""
    question = "How long do violin strings with a steel core last?"
    answers = [
        "Violin strings with a steel core last about a year of daily playing.",
        "A steel core lasts longest: violin strings of that kind last for a year.",
    ]
    on_topic = [
        "Violin strings come in gut, synthetic and steel.",
        "Cello strings with a steel core last long.",
        "The core of a violin is its sound post.",
        "How long should a violin lesson last?",
        "Steel is an alloy of iron. Violin makers seldom use it. Strings are sold in sets.",
        "Violin strings are changed by the player, strings first, then the bridge is checked.",
        "A steel cable has a core of wire.",
        "Long violin concerts last two hours.",
    ]
    judge = RelevanceJudge()
    grades = [
        judge.baseline(history=[], question=question, rewrite=None, document=text).grade for text in answers + on_topic
    ]
    assert grades[: len(answers)]
    assert all(grade >= RELEVANT_GRADE for grade in grades[: len(answers)])
    called_relevant = sum(grade >= RELEVANT_GRADE for grade in grades[len(answers) :])
    assert called_relevant <= len(on_topic) // 4, grades  # was every one of them (grade 1 or more)


def test_run_files_must_name_the_paraphrase_runs_test_sets(tmp_path):
    files = write_runs_fixture(tmp_path)
    workspace = tmp_path / "ws"
    paraphrase(
        [files["2020"]],
        import_ecast=files["ecast"],
        test_sets=1,
        qrels=files["qrels"],
        workspace=workspace,
        run_id="para",
    )
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


# The robustness settings of the small BEIR fixture below: oracle history, one baseline judge, nDCG@3.
JUDGED_AT_3 = dict(histories=["oracle"], judges=["baseline"], min_votes=1, judge_depth=2, measures=["nDCG@3"], depth=10)


def write_beir_benchmark(directory: Path) -> None:
    """Two conversations over a corpus where BM25 finds unjudged documents for the paraphrases."""
    directory.mkdir(parents=True)
    corpus = {
        "g1": "Violin strings are made of gut, steel or synthetic core.",
        "g2": "A violin bow is strung with horsehair.",
        "u1": "Cello strings and violin strings: steel core strings last longest.",
        "u2": "Horsehair for bows comes from horse tails; it is rosined before playing.",
        "x1": "Bread needs flour, water and yeast.",
        "x2": "Lisbon has mild winters.",
    }
    (directory / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in corpus.items()), encoding="utf-8"
    )
    queries = [("c1_t0", "c1", 0, "What are violin strings made of?"), ("c1_t1", "c1", 1, "And the bow?")]
    (directory / "queries.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "_id": q,
                    "text": text,
                    "metadata": {
                        "conversation_id": c,
                        "turn": t,
                        "question": text,
                        "rewrite": text if t == 0 else "What is a violin bow strung with?",
                    },
                }
            )
            + "\n"
            for q, c, t, text in queries
        ),
        encoding="utf-8",
    )
    (directory / "qrels").mkdir()
    (directory / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nc1_t0\tg1\t1\nc1_t1\tg2\t1\n", encoding="utf-8"
    )


def test_retrieval_path_evaluates_every_test_set_with_the_evaluate_job(tmp_path):
    write_beir_benchmark(tmp_path / "bench")
    workspace = tmp_path / "ws"
    paraphrase(tmp_path / "bench", per_turn=2, min_similarity=0, test_sets=2, workspace=workspace, run_id="para")
    result = robustness(
        "para",
        retrievers=["bm25"],
        **JUDGED_AT_3,
        workspace=workspace,
        run_id="rob",
    )
    assert result.sets == ["original", "R1", "R2"]
    means = result.means["bm25@oracle"]
    assert set(means["before"]) == {"original", "R1", "R2"}
    assert means["after"]
    assert all(values["Judged@2"] == 1.0 for values in means["after"].values())  # every pooled document graded
    assert result.pooled > 0
    evaluations = result.results()["evaluations"]
    assert evaluations
    assert all(Path(files["bm25@oracle"]).is_file() for files in evaluations.values())
    assert (workspace / "runs" / "rob-R2" / "report.html").is_file()  # each test set is an evaluate run
    # ... a child of the robustness run: `benchsmith runs` lists it under its parent, not beside it.
    listed = CliRunner().invoke(app, ["runs", "--workspace", str(workspace)], env={"COLUMNS": "200"})
    assert listed.exit_code == 0, listed.output
    rows = [line for line in listed.output.splitlines() if "rob" in line and "para" not in line]
    children = [line for line in rows if "└ rob-" in line]
    assert len(children) == 3 and all("evaluate" in line for line in children), listed.output
    assert next(line for line in rows if "└" not in line).split("│")[1].strip() == "rob"
    assert rows.index(children[0]) == 1 + rows.index(next(line for line in rows if "└" not in line))


def test_a_robustness_run_stopped_inside_a_test_sets_evaluation_resumes_it_and_scores_as_one_run(tmp_path, monkeypatch):
    """The evaluate graph runs as a subgraph of robustness: a failure inside the second test
    set's evaluation leaves the robustness run resumable; the resumed run reuses the finished
    child, finishes the stopped one, and scores what an uninterrupted run scores."""
    import benchsmith.graphs.evaluate.nodes as evaluate_graph

    write_beir_benchmark(tmp_path / "bench")
    workspace = tmp_path / "ws"
    paraphrase(tmp_path / "bench", per_turn=2, min_similarity=0, test_sets=1, workspace=workspace, run_id="para")
    settings = dict(
        retrievers=["bm25"],
        **JUDGED_AT_3,
        workspace=workspace,
    )
    whole = robustness("para", **settings, run_id="whole")

    real_batches = evaluate_graph._run_batches

    def failing_in_r1(runtime, run_id, *rest):
        if run_id.endswith("-R1"):
            raise RuntimeError("the machine went away")
        return real_batches(runtime, run_id, *rest)

    monkeypatch.setattr(evaluate_graph, "_run_batches", failing_in_r1)
    with pytest.raises(RuntimeError, match="went away"):
        robustness("para", **settings, run_id="cut")
    original_report = workspace / "runs" / "cut-original" / "report.md"
    written_before = original_report.stat().st_mtime_ns
    monkeypatch.setattr(evaluate_graph, "_run_batches", real_batches)
    resumed = robustness("para", **settings, run_id="cut")
    assert resumed.resumed
    assert original_report.stat().st_mtime_ns == written_before  # the finished child was reused, not redone
    assert json.loads((workspace / "runs" / "cut-R1" / "run.json").read_text())["status"] == "finished"
    assert resumed.means == whole.means


def test_your_own_retriever_is_asked_the_original_and_the_paraphrased_turns_once(tmp_path):
    """An outside retriever (a callable) works in robustness as in evaluate: scored on the original
    benchmark and on each test set, its calls logged, so the same run again asks it nothing."""
    write_beir_benchmark(tmp_path / "bench")
    workspace = tmp_path / "ws"
    paraphrase(tmp_path / "bench", per_turn=2, min_similarity=0, test_sets=1, workspace=workspace, run_id="para")
    corpus = {
        json.loads(line)["_id"]: json.loads(line)["text"]
        for line in (tmp_path / "bench" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    }
    asked: list[str] = []

    def word_overlap(query, history, k):
        asked.append(query)
        words = set(query.lower().replace("?", "").split())
        scored = {doc_id: len(words & set(text.lower().rstrip(".").split())) for doc_id, text in corpus.items()}
        return sorted(scored.items(), key=lambda pair: (-pair[1], pair[0]))[:k]

    settings = dict(
        retrievers=[word_overlap],
        **JUDGED_AT_3,
        workspace=workspace,
        run_id="mine",
    )
    result = robustness("para", **settings)
    assert list(result.means) == ["word_overlap@oracle"]
    assert set(result.means["word_overlap@oracle"]) == {"before", "after"}  # judged before and after pooling
    originals = {"What are violin strings made of?", "What is a violin bow strung with?"}
    assert originals <= set(asked)
    assert set(asked) - originals  # the paraphrased turns were asked too
    asked.clear()
    again = robustness("para", **settings)
    assert asked == []  # finished: every answer is on file
    assert again.means == result.means
