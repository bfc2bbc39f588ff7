"""`benchsmith validate`: the rank correlation of a benchmark with the user's labelled questions,
its bootstrap interval, the judges' agreement with the human labels, and the command end to end
on a tiny benchmark (hashing embedder, offline baseline judge)."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
from html import escape
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

import benchsmith
from benchsmith.agents.label_seam import LabelSeam
from benchsmith.cli import app
from benchsmith.evals.measures.agreement import cohen_kappa, krippendorff_alpha_nominal
from benchsmith.evals.measures.intervals import Interval
from benchsmith.evals.measures.separability import difference_interval
from benchsmith.evals.measures.validity import (
    Verdict,
    kendall_tau_b,
    paired_configurations,
    per_query_matrix,
    relevance_agreement,
    tau_interval,
    top1_agrees,
    verdict,
)
from benchsmith.graphs.runtime.resources import register_embedder, register_model
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from tests.embedders import HashingEmbedder
from tests.evaluate_fixtures import ASPECTS, TOPICS, write_benchmark

runner = CliRunner(env={"COLUMNS": "200"})
FEW_RETRIEVERS = ["bm25", "dense", "hybrid:rrf(dense,bm25)", "hybrid:wsum(dense=0.8,bm25=0.2)"]


def write_labelled_questions(path: Path, chunk_id=lambda topic, aspect: f"{topic}-{aspect}") -> Path:
    """Standalone questions over the corpus of tests.test_evaluate_graph.write_benchmark, worded
    unlike its conversations, each with its one gold chunk."""
    lines = []
    for topic in TOPICS:
        for aspect, words in ASPECTS.items():
            lines.append(
                {
                    "id": f"h-{topic}-{aspect}",
                    "question": f"Which notes on {words.split()[-1]} concern the {topic}?",
                    "gold": [{"chunk_id": chunk_id(topic, aspect), "document": topic, "evidence": words}],
                }
            )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def sets(tmp_path):
    return write_benchmark(tmp_path / "synthetic"), write_labelled_questions(tmp_path / "human.jsonl")


# --- Measures -------------------------------------------------------------------------------------


def test_tau_b_is_scipys_on_the_per_configuration_values():
    human = [0.41, 0.38, 0.52, 0.52, 0.30, 0.47]
    synthetic = [0.60, 0.61, 0.70, 0.66, 0.50, 0.58]  # ties on the human side, one swap
    expected = stats.kendalltau(human, synthetic, variant="b")
    result = kendall_tau_b(human, synthetic)
    assert result.tau == pytest.approx(expected.statistic) and result.p_value == pytest.approx(expected.pvalue)
    assert kendall_tau_b([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]).tau == pytest.approx(-1.0)
    assert kendall_tau_b([0.5, 0.5, 0.5], [1.0, 2.0, 3.0]).tau is None  # no order on one side


def test_the_bootstrap_interval_contains_tau_and_is_reproducible_with_the_seed():
    rng = np.random.default_rng(7)
    configurations = 6
    human = rng.random((40, configurations)) + np.linspace(0.0, 0.15, configurations)
    synthetic = rng.random((60, configurations)) + np.linspace(0.0, 0.1, configurations)
    first = tau_interval(human, synthetic, resamples=300, seed=3)
    assert first == tau_interval(human, synthetic, resamples=300, seed=3)
    assert first != tau_interval(human, synthetic, resamples=300, seed=4)
    assert first.mean == pytest.approx(stats.kendalltau(human.mean(axis=0), synthetic.mean(axis=0)).statistic)
    assert first.low <= first.mean <= first.high and first.low < first.high
    assert first.n == 300
    # The resamples redraw each set's own queries: one query per set leaves nothing to resample.
    assert tau_interval(human[:1], synthetic, resamples=50).low is None


def test_the_interval_widens_when_queries_disagree_more():
    rng = np.random.default_rng(1)
    order = np.linspace(0.0, 0.5, 6)
    quiet = tau_interval(rng.normal(order, 0.05, (50, 6)), rng.normal(order, 0.05, (50, 6)), 300, 0)
    noisy = tau_interval(rng.normal(order, 1.0, (50, 6)), rng.normal(order, 1.0, (50, 6)), 300, 0)
    assert quiet.high - quiet.low < noisy.high - noisy.low


def test_the_verdict_names_the_configurations_each_set_ranks_first():
    human = {"bm25": 0.5, "dense": 0.3, "rrf": 0.4}
    agrees = verdict(human, {"bm25": 0.7, "dense": 0.5, "rrf": 0.6}, 1.0, Interval(1.0, 0.6, 1.0, 100))
    assert agrees == Verdict("agrees", agrees.text) and "both rank bm25 first" in agrees.text
    reversed_scores = {"bm25": 0.3, "dense": 0.7, "rrf": 0.5}
    said = verdict(human, reversed_scores, -1.0, Interval(-1.0, -1.0, -0.3, 100))
    assert said.label == "disagrees"
    assert "synthetic benchmark ranks dense first, your questions rank bm25 first" in said.text
    assert not top1_agrees(human, reversed_scores)
    weak = verdict(human, {"bm25": 0.7, "dense": 0.5, "rrf": 0.6}, 0.33, Interval(0.33, -0.3, 1.0, 100))
    assert weak.label == "weak agreement" and "0 or below" in weak.text
    assert (
        verdict(human, {"bm25": 0.5, "dense": 0.5, "rrf": 0.5}, None, Interval(None, None, None, 0)).label
        == "undetermined"
    )
    # The text gives the reasons, not the label again (the report's heading and the command print the label).
    for given in (agrees, said, weak):
        assert not given.text.startswith(given.label)
    with pytest.raises(dataclasses.FrozenInstanceError):
        agrees.label = "disagrees"  # type: ignore[misc]


def test_the_verdict_names_each_sets_first_as_it_ran_there():
    """Standalone questions run with the full history where the synthetic set runs the oracle rewrite."""
    human = {"bm25@oracle": 0.5, "dense@oracle": 0.3, "rrf@oracle": 0.4}
    names = {name: name.replace("@oracle", "@full") for name in human}
    reversed_scores = {"bm25@oracle": 0.3, "dense@oracle": 0.7, "rrf@oracle": 0.5}
    said = verdict(human, reversed_scores, -1.0, Interval(-1.0, -1.0, -0.3, 100), human_names=names)
    assert "the synthetic benchmark ranks dense@oracle first, your questions rank bm25@full first" in said.text
    agrees = verdict(
        human,
        {"bm25@oracle": 0.7, "dense@oracle": 0.5, "rrf@oracle": 0.6},
        1.0,
        Interval(1.0, 0.6, 1.0, 100),
        human_names=names,
    )
    assert "both rank bm25@oracle (bm25@full on your questions) first" in agrees.text


def test_judge_agreement_is_kappa_and_alpha_with_the_confusion_matrix():
    human = [True] * 5 + [False] * 5
    judge = [True, True, True, True, False, True, False, False, False, False]
    result = relevance_agreement(human, judge)
    assert result["confusion"] == {
        "relevant": {"relevant": 4, "not relevant": 1},
        "not relevant": {"relevant": 1, "not relevant": 4},
    }
    # p_o = 0.8, p_e = 0.5·0.5 + 0.5·0.5 = 0.5: κ = 0.6 (Cohen, 1960)
    assert result["cohen_kappa"] == pytest.approx(0.6) and result["agreement"] == pytest.approx(0.8)
    assert result["krippendorff_alpha"] == pytest.approx(
        krippendorff_alpha_nominal([[a, b] for a, b in zip(human, judge)])
    )
    perfect = relevance_agreement(human, list(human))
    assert perfect["cohen_kappa"] == 1.0 and perfect["krippendorff_alpha"] == 1.0
    assert cohen_kappa(human, judge) == result["cohen_kappa"]


def test_configurations_pair_by_retriever_when_the_human_set_is_asked_standalone():
    synthetic = [
        {"name": "bm25@oracle", "retriever": "bm25", "rerank": False, "history": "oracle"},
        {"name": "dense@oracle", "retriever": "dense", "rerank": False, "history": "oracle"},
        {"name": "mine.trec", "retriever": "run file /x/mine.trec", "rerank": False, "history": "as is"},
    ]
    human = [
        {"name": "dense@full", "retriever": "dense", "rerank": False, "history": "full"},
        {"name": "bm25@full", "retriever": "bm25", "rerank": False, "history": "full"},
        {"name": "mine.trec", "retriever": "run file /x/mine.trec", "rerank": False, "history": "as is"},
    ]
    assert paired_configurations(synthetic, human, match_history=False) == [
        ("bm25@oracle", "bm25@full"),
        ("dense@oracle", "dense@full"),
        ("mine.trec", "mine.trec"),
    ]
    per_query = {"a": {"q1": {"m": 1.0}, "q2": {"m": 0.0}}, "b": {"q2": {"m": 0.5}, "q1": {"m": 0.25}}}
    assert per_query_matrix(per_query, ["a", "b"], "m").tolist() == [[1.0, 0.25], [0.0, 0.5]]


# --- The job --------------------------------------------------------------------------------------


def test_validate_ranks_every_configuration_on_both_sets_and_measures_the_judges(sets, tmp_path):
    synthetic, human = sets
    embedder = register_embedder(HashingEmbedder())
    labels = {f"h-{topic}-{aspect}": {f"{topic}-{aspect}": 1} for topic in TOPICS for aspect in ASPECTS}
    oracle = register_model("human-labels", LabelSeam(labels, "human-labels"))  # agrees with the labels by design
    result = benchsmith.validate(
        synthetic,
        human=human,
        embedder=embedder,
        depth=20,
        workspace=tmp_path / "ws",
        judges=["baseline", oracle],
        bootstrap=200,
        seed=5,
        run_id="check",
    )
    validity = result.results()
    assert validity["measure"] == "nDCG@10" and len(validity["configurations"]) >= 6  # the default configurations
    human_scores = [row["human"] for row in validity["configurations"]]
    synthetic_scores = [row["synthetic"] for row in validity["configurations"]]
    assert len(set(human_scores)) > 1 and len(set(synthetic_scores)) > 1
    expected = stats.kendalltau(human_scores, synthetic_scores, variant="b")
    assert validity["kendall_tau_b"] == pytest.approx(expected.statistic)
    assert validity["p_value"] == pytest.approx(expected.pvalue)
    # The interval is the seeded bootstrap over the two evaluations' per-query values.
    evaluations = {
        record["set"]: json.loads(Path(record["results"]).read_text(encoding="utf-8"))
        for record in map(json.loads, (result.run_dir / "evaluations.jsonl").read_text().splitlines())
    }
    names = [(row["name"], row["human_configuration"]) for row in validity["configurations"]]
    recomputed = tau_interval(
        per_query_matrix(evaluations["human"]["per_query"], [h for _, h in names], "nDCG@10"),
        per_query_matrix(evaluations["synthetic"]["per_query"], [s for s, _ in names], "nDCG@10"),
        resamples=200,
        seed=5,
    )
    assert (validity["interval"]["low"], validity["interval"]["high"]) == (recomputed.low, recomputed.high)
    assert validity["interval"]["low"] <= validity["kendall_tau_b"] <= validity["interval"]["high"]
    assert validity["human"]["queries"] == len(TOPICS) * len(ASPECTS)
    assert [row["human"] for row in validity["configurations"]] == pytest.approx(
        [evaluations["human"]["aggregate"][h]["nDCG@10"] for _, h in names]
    )
    # Separability: each adjacent pair of the human ranking, its interval over the human per-query values.
    separability = validity["separability"]
    assert separability["queries"] == validity["human"]["queries"] and separability["resamples"] == 200
    ranked = [pair for pair in separability["pairs"] if pair["ranking"].startswith("yours")]
    assert len(ranked) == len({h for _, h in names}) - 1
    per_query = evaluations["human"]["per_query"]
    for pair in separability["pairs"]:
        values = per_query_matrix(per_query, [pair["first"], pair["second"]], "nDCG@10")
        expected = difference_interval(values[:, 0], values[:, 1], resamples=200, seed=5)
        assert (pair["difference"], pair["low"], pair["high"]) == pytest.approx(
            (expected.mean, expected.low, expected.high)
        )
        assert pair["separated"] == (pair["low"] > 0 or pair["high"] < 0)
    # Judges: the gold pairs and as many non-gold; the label judge agrees on every one.
    sample = validity["judge_sample"]
    assert sample["gold"] == len(TOPICS) * len(ASPECTS) and 0 < sample["non_gold"] <= sample["gold"]
    perfect = validity["judge_agreement"][oracle]
    assert perfect["cohen_kappa"] == 1.0 and perfect["krippendorff_alpha"] == 1.0
    assert perfect["confusion"]["relevant"]["not relevant"] == perfect["confusion"]["not relevant"]["relevant"] == 0
    baseline = validity["judge_agreement"]["baseline"]
    assert sum(sum(row.values()) for row in baseline["confusion"].values()) == sample["gold"] + sample["non_gold"]
    html = result.report["html"].read_text(encoding="utf-8")
    assert "data:image/png;base64," in html
    # The verdict: a small frozen dataclass on the result, {label, text} in validity.json; the
    # report's callout gives the label once, as its heading, and the reasons below it.
    assert result.verdict == Verdict(**validity["verdict"]) and set(validity["verdict"]) == {"label", "text"}
    label = result.verdict.label
    heading, text = re.search(r'<p class="callout-heading">(.*?)</p><p>(.*?)</p>', html).groups()
    assert heading == label[:1].upper() + label[1:] and text == escape(result.verdict.text)
    assert not text.lower().startswith(label)
    again = benchsmith.validate(
        synthetic,
        human=human,
        embedder=embedder,
        depth=20,
        workspace=tmp_path / "ws",
        judges=["baseline", oracle],
        bootstrap=200,
        seed=5,
        run_id="check",
    )
    assert again.already_finished and again.kendall_tau_b == result.kendall_tau_b


def test_a_human_beir_directory_and_a_run_file_over_both_sets(sets, tmp_path):
    """The human set as BEIR over a byte-for-byte copy of the corpus (what benchmarks/validity.py
    writes), and the user's own run file, which ranks every gold chunk of both sets first."""
    synthetic, labelled = sets
    human = tmp_path / "human-beir"
    (human / "qrels").mkdir(parents=True)
    shutil.copyfile(synthetic / "corpus.jsonl", human / "corpus.jsonl")
    questions = [json.loads(line) for line in labelled.read_text(encoding="utf-8").splitlines()]
    (human / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q["id"], "text": q["question"]}) + "\n" for q in questions), encoding="utf-8"
    )
    (human / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q['id']}\t{q['gold'][0]['chunk_id']}\t1\n" for q in questions),
        encoding="utf-8",
    )
    gold = {q["id"]: q["gold"][0]["chunk_id"] for q in questions}
    for line in (synthetic / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        query_id, doc_id, _ = line.split("\t")
        gold[query_id] = doc_id
    perfect = tmp_path / "perfect.trec"
    perfect.write_text(
        "".join(f"{query_id} Q0 {doc_id} 1 9.0 perfect\n" for query_id, doc_id in gold.items()), encoding="utf-8"
    )
    result = benchsmith.validate(
        synthetic,
        human=human,
        retrievers=["bm25", "dense"],
        runs=[perfect],
        embedder=register_embedder(HashingEmbedder()),
        depth=20,
        bootstrap=50,
        workspace=tmp_path / "ws",
    )
    by_name = {row["name"]: row for row in result.configurations}
    assert set(by_name) == {"perfect.trec", "bm25@oracle", "dense@oracle"}
    assert by_name["perfect.trec"]["human"] == by_name["perfect.trec"]["synthetic"] == 1.0
    assert by_name["perfect.trec"]["human_rank"] == by_name["perfect.trec"]["synthetic_rank"] == 1
    assert result.top1_agrees and result.judge_agreement == {}
    # Standalone questions are asked as they are: each set's configuration is named as it ran there.
    bm25 = by_name["bm25@oracle"]
    assert (bm25["human_configuration"], bm25["human_history"], bm25["synthetic_history"]) == (
        "bm25@full",
        "full",
        "oracle",
    )
    assert bm25["label"] == "bm25 (yours @full, synthetic @oracle)"
    assert by_name["perfect.trec"]["label"] == "perfect.trec"
    markdown = result.report["markdown"].read_text(encoding="utf-8")
    assert "| on your questions | nDCG@10 | rank | on the synthetic benchmark | nDCG@10 | rank |" in markdown
    assert re.search(r"\| bm25@full \| [0-9.]+ \| \d \| bm25@oracle \|", markdown)


class FailsOnce(LabelSeam):
    """Answers from the labels, except the first call, which fails as a crash mid-run would."""

    def __init__(self, labels):
        super().__init__(labels, "fails-once")
        self.failed = False

    def run(self, agent, **inputs):
        if not self.failed:
            self.failed = True
            raise RuntimeError("injected judge failure")
        return super().run(agent, **inputs)


def test_a_run_that_stops_while_judging_resumes_without_redoing_the_evaluations(sets, tmp_path):
    synthetic, human = sets
    labels = {f"h-{topic}-{aspect}": {f"{topic}-{aspect}": 1} for topic in TOPICS for aspect in ASPECTS}
    judge = register_model("fails-once", FailsOnce(labels))
    arguments = dict(
        human=human,
        retrievers=FEW_RETRIEVERS[:3],
        embedder=register_embedder(HashingEmbedder()),
        depth=20,
        bootstrap=50,
        judges=[judge],
        workspace=tmp_path / "ws",
        run_id="stops",
    )
    with pytest.raises(RuntimeError, match="injected"):
        benchsmith.validate(synthetic, **arguments)
    run_dir = RunDirectory(Workspace(tmp_path / "ws"), "stops").path
    assert (
        len((run_dir / "evaluations.jsonl").read_text().splitlines()) == 2 and not (run_dir / "validity.json").exists()
    )
    result = benchsmith.validate(synthetic, **arguments)
    assert result.resumed and result.judge_agreement[judge]["cohen_kappa"] == 1.0
    assert len((run_dir / "evaluations.jsonl").read_text().splitlines()) == 2
    judged = [json.loads(line)["item"] for line in (run_dir / "judgments.jsonl").read_text().splitlines()]
    assert len(judged) == len(set(judged)) == len(TOPICS) * len(ASPECTS)  # one record per judge and question


def test_mismatched_corpora_are_refused_naming_the_ids_before_any_run(sets, tmp_path):
    synthetic, _ = sets
    workspace = tmp_path / "ws"
    stray = write_labelled_questions(tmp_path / "stray.jsonl", lambda topic, aspect: f"{topic}/{aspect}-v2")
    with pytest.raises(InputError) as raised:
        benchsmith.validate(synthetic, human=stray, workspace=workspace, run_id="stray")
    message = str(raised.value)
    assert str(stray) in message and "'zebra/history-v2'" in message and f"{len(TOPICS) * len(ASPECTS)}:" in message
    assert not RunDirectory(Workspace(workspace), "stray").exists()

    other = tmp_path / "other-beir"
    shutil.copytree(synthetic, other)
    corpus = (other / "corpus.jsonl").read_text(encoding="utf-8").replace('"zebra-history"', '"zebra-history-2"')
    (other / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    result = runner.invoke(
        app, ["validate", str(synthetic), "--human", str(other), "-w", str(workspace), "--run-id", "other"]
    )
    assert result.exit_code == 2, result.output
    assert "'zebra-history-2'" in result.output and "'zebra-history'" in result.output
    assert not RunDirectory(Workspace(workspace), "other").exists()


def test_fewer_than_three_configurations_or_two_measures_are_refused(sets, tmp_path):
    synthetic, human = sets
    with pytest.raises(InputError, match="at least 3 configurations"):
        benchsmith.validate(synthetic, human=human, retrievers=["bm25", "dense"], workspace=tmp_path / "ws")
    with pytest.raises(InputError, match="nDCG@x"):
        benchsmith.validate(synthetic, human=human, measure="nDCG@x", workspace=tmp_path / "ws")


def test_the_command_end_to_end_with_the_baseline_judge(sets, tmp_path):
    synthetic, human = sets
    embedder = register_embedder(HashingEmbedder())
    workspace = tmp_path / "ws"
    arguments = [
        "validate",
        str(synthetic),
        "--human",
        str(human),
        "--embedder",
        embedder,
        "--depth",
        "20",
        "--bootstrap",
        "100",
        "--judge",
        "baseline",
        "-w",
        str(workspace),
        *(option for spec in FEW_RETRIEVERS for option in ("--retriever", spec)),
    ]
    dry = runner.invoke(app, [*arguments, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "dry run" in dry.output and "4 configurations" in dry.output
    assert not any(Workspace(workspace).runs_dir.iterdir())  # nothing ran
    result = runner.invoke(app, [*arguments, "--run-id", "cli"])
    assert result.exit_code == 0, result.output
    validity = json.loads((RunDirectory(Workspace(workspace), "cli").path / "validity.json").read_text())
    assert [row["name"] for row in validity["configurations"]] == [f"{spec}@oracle" for spec in FEW_RETRIEVERS]
    for row in validity["configurations"]:
        assert f"{row['human']:.3f}" in result.output and f"{row['synthetic']:.3f}" in result.output
        assert row["human_configuration"] in result.output and row["name"] in result.output
        assert row["human_configuration"].endswith("@full")  # the human set's standalone questions: full history
    assert "Kendall's tau-b" in result.output
    assert f"verdict: {validity['verdict']['label']}: {validity['verdict']['text'][:30]}" in " ".join(
        result.output.split()
    )
    assert "judge baseline: Cohen's kappa" in result.output
    apart = [pair for pair in validity["separability"]["pairs"] if not pair["separated"]]
    output = " ".join(result.output.split())  # one line, whatever the terminal wrapped
    assert (f"not separated by your {validity['human']['queries']} questions" in output) == bool(apart)
    for pair in apart:
        assert f"{pair['first']} vs {pair['second']}" in output
    resumed = runner.invoke(app, [*arguments, "--run-id", "cli"])
    assert resumed.exit_code == 0 and "already finished" in resumed.output
    assert math.isclose(
        json.loads((RunDirectory(Workspace(workspace), "cli").path / "validity.json").read_text())["kendall_tau_b"]
        or 0.0,
        validity["kendall_tau_b"] or 0.0,
    )
