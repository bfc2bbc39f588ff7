"""`score_hardneg` on a baseline-built dataset: score tables in the reference layout that
re-score to the same measures, BM25 with corpus and per-row IDF, dense and cross-encoder
scorers, a report that names the condition that fooled a scorer, and the scoring run: bad input
refused before its record, a run killed inside a scorer resumed into the same bytes."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import benchsmith
from benchsmith.graphs.runtime.resources import register_embedder, register_scorer
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.multiconir import read_dataset, read_ladder_scores, read_task1_scores
from benchsmith.stores.persistence.runs import RunDirectory, list_runs
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.bm25 import BM25Index
from benchsmith.tools.retrieval.multicondition_scoring import dataset_corpus
from tests.embedders import HashingEmbedder
from tests.hardneg_fixtures import write_corpus

N = 4


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("hardneg-score")
    corpus = write_corpus(root / "corpus")
    return benchsmith.build_hardneg([corpus], conditions=N, workspace=root / "ws", run_id="dataset")


def constant(pairs):
    return [0.5] * len(pairs)


def test_score_tables_follow_the_reference_layout_and_rescore_to_the_same_measures(dataset, tmp_path):
    embedder = register_embedder(HashingEmbedder())
    register_scorer("constant", constant)
    result = benchsmith.score_hardneg(
        dataset.run_dir,
        retrievers=["bm25", f"dense:{embedder}"],
        rerankers=["constant"],
        output_dir=tmp_path / "scores",
        workspace=tmp_path / "ws",
    )
    assert result.scorers == ["bm25-corpus", "bm25-row", f"dense:{embedder}", "rerank:constant"]
    for label, paths in result.tables.items():
        with open(paths["task1"], newline="") as handle:
            header = next(csv.reader(handle))
        assert header == ["Index"] + [c for k in range(1, N + 1) for c in (f"Query{k}_Positive", f"Query{k}_HN1")]
        with open(paths["task2"], newline="") as handle:
            assert next(csv.reader(handle)) == (
                ["Index", f"Query{N}_Positive"] + [f"Query{N}_HN{j}" for j in range(1, N + 1)]
            )
        assert benchsmith.rescore_tables(paths["task1"], paths["task2"], paths["task3"]) == result.reference[label]
    # A scorer that ties everything wins nothing; ties lose.
    assert set(result.reference["rerank:constant"]["task1"]["win_rate"].values()) == {0.0}
    assert result.reference["rerank:constant"]["task3"]["change_rate"] == 0.0
    results = result.results()
    interval = results["scorers"]["bm25-row"]["task1"]["win_rate"]["1"]
    assert interval["low"] <= interval["mean"] <= interval["high"] and interval["n"] == 6
    worst = results["scorers"]["rerank:constant"]["worst_task1"]
    assert worst and worst[0]["sentence"] and worst[0]["negative"] != worst[0]["sentence"]
    markdown = result.report["markdown"].read_text(encoding="utf-8")
    for heading in (
        "Task 1: complexity robustness",
        "Task 2: relevance monotonicity",
        "Task 3: format sensitivity",
        "Worst rows",
        "bm25-row: BM25",
    ):
        assert heading in markdown
    assert worst[0]["negative"] in markdown  # the rewrite that fooled it is shown


def test_bm25_variants_take_document_frequencies_from_the_corpus_or_the_row(dataset, tmp_path):
    result = benchsmith.score_hardneg(
        dataset.run_dir, retrievers=["bm25"], output_dir=tmp_path / "scores", workspace=tmp_path / "ws"
    )
    rows = read_dataset(dataset.files["dataset"])
    row = rows[0]
    corpus_index = BM25Index([str(i) for i in range(len(dataset_corpus(rows)))], dataset_corpus(rows))
    corpus_texts = dataset_corpus(rows)
    by_corpus = read_task1_scores(result.tables["bm25-corpus"]["task1"])
    by_row = read_task1_scores(result.tables["bm25-row"]["task1"])
    for k in range(1, N + 1):
        query, miss = row.instruction[k - 1], row.single_miss[k - 1]
        expected = corpus_index.scores(query)
        assert by_corpus.positive[0, k - 1] == pytest.approx(expected[corpus_texts.index(row.positive)])
        assert by_corpus.negative[0, k - 1] == pytest.approx(expected[corpus_texts.index(miss)])
        pair = BM25Index(["p", "n"], [row.positive, miss]).scores(query)
        assert (by_row.positive[0, k - 1], by_row.negative[0, k - 1]) == pytest.approx(tuple(pair))
    assert not np.allclose(by_corpus.positive, by_row.positive)  # two different IDFs, two different tables
    ladder = read_ladder_scores(result.tables["bm25-row"]["task2"])
    expected = BM25Index([str(i) for i in range(N + 1)], [row.positive, *row.ladder]).scores(row.instruction[-1])
    assert ladder.scores[0] == pytest.approx(expected)


def test_bm25_index_scores_every_document_as_search_ranks_them():
    index = BM25Index(["a", "b", "c"], ["the tower is 31 metres tall", "the tower is 1031 metres tall", "a cafe"])
    scores = index.scores("tower 31 metres")
    ranked = index.search({"q": "tower 31 metres"}, 3)["q"]
    assert list(ranked) == ["a", "b"] and scores[2] == 0.0
    assert scores[:2] == pytest.approx([ranked["a"], ranked["b"]])
    assert index.scores("unseen words only").tolist() == [0.0, 0.0, 0.0]


def test_a_dataset_csv_scores_like_its_run_and_reads_conditions_off_the_documents(dataset, tmp_path):
    from_run = benchsmith.score_hardneg(
        dataset.run_dir, retrievers=["bm25:row"], output_dir=tmp_path / "run", workspace=tmp_path / "ws"
    )
    from_csv = benchsmith.score_hardneg(
        dataset.files["dataset"], retrievers=["bm25:row"], output_dir=tmp_path / "csv", workspace=tmp_path / "ws"
    )
    assert from_csv.reference == from_run.reference
    assert from_csv.tables["bm25-row"]["task1"].read_text() == from_run.tables["bm25-row"]["task1"].read_text()
    register_scorer("constant", constant)
    worst = benchsmith.score_hardneg(
        dataset.files["dataset"],
        rerankers=["constant"],
        retrievers=[],
        output_dir=tmp_path / "c",
        workspace=tmp_path / "ws",
    ).results()["scorers"]["rerank:constant"]["worst_task1"]
    assert worst[0]["sentence"] and worst[0]["negative"] and worst[0]["sentence"] != worst[0]["negative"]


def test_bad_scorers_and_datasets_are_refused_before_any_run_record(dataset, tmp_path):
    workspace = tmp_path / "ws"
    with pytest.raises(InputError, match="pairs are scored one by one"):
        benchsmith.score_hardneg(dataset.run_dir, retrievers=["hybrid:rrf(dense,bm25)"], workspace=workspace)
    with pytest.raises(InputError, match="at least one"):
        benchsmith.score_hardneg(dataset.run_dir, retrievers=[], workspace=workspace)
    with pytest.raises(InputError, match="neither"):
        benchsmith.score_hardneg(tmp_path / "nothing-here", retrievers=["bm25"], workspace=workspace)
    with pytest.raises(InputError, match="not on this machine"):
        benchsmith.score_hardneg(
            dataset.run_dir,
            retrievers=[],
            rerankers=["no-such-cross-encoder"],
            workspace=workspace,
            run_id="bad-reranker",
        )
    with pytest.raises(InputError, match="resamples"):
        benchsmith.score_hardneg(dataset.run_dir, retrievers=["bm25"], resamples=10, workspace=workspace)
    assert not list_runs(Workspace.resolve(workspace))


class FlakyScorer:
    """A reranker that counts its calls and, while ``fail_on_call`` is set, raises on that call
    (counted from when it was set): a scoring run that dies part-way through one scorer."""

    def __init__(self) -> None:
        self.calls = 0
        self.fail_on_call: int | None = None

    def __call__(self, pairs):
        self.calls += 1
        if self.fail_on_call is not None:
            self.fail_on_call -= 1
            if self.fail_on_call == 0:
                self.fail_on_call = None
                raise RuntimeError("scorer died mid-way")
        return [len(set(query.split()) & set(document.split())) / (1 + len(document)) for query, document in pairs]


def files_of(folder):
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_a_killed_run_resumes_only_its_unfinished_scorers_into_identical_files(dataset, tmp_path):
    steady, flaky = FlakyScorer(), FlakyScorer()
    register_scorer("steady", steady)
    register_scorer("flaky", flaky)
    workspace, out = tmp_path / "ws", tmp_path / "scores"
    arguments = dict(retrievers=["bm25:row"], rerankers=["steady", "flaky"], output_dir=out, workspace=workspace)
    whole = benchsmith.score_hardneg(dataset.run_dir, run_id="whole", **arguments)
    uninterrupted = files_of(out)
    calls_per_run = steady.calls
    assert whole.scorers == ["bm25-row", "rerank:steady", "rerank:flaky"] and calls_per_run == flaky.calls >= 1
    shutil.rmtree(out)

    flaky.fail_on_call = 1  # dies on its first batch of pairs, after bm25-row and steady have finished
    with pytest.raises(RuntimeError, match="died mid-way"):
        benchsmith.score_hardneg(dataset.run_dir, run_id="cut", **arguments)
    assert RunDirectory(Workspace.resolve(workspace), "cut").load().status == "crashed"
    assert steady.calls == 2 * calls_per_run
    assert (out / "rerank_steady_task1_results.csv").exists() and not (out / "rerank_flaky_task1_results.csv").exists()
    finished_table = (out / "bm25-row_task1_results.csv").stat()

    resumed = benchsmith.score_hardneg(dataset.run_dir, run_id="cut", **arguments)
    assert resumed.resumed and not resumed.already_finished
    assert steady.calls == 2 * calls_per_run  # not scored again
    assert (out / "bm25-row_task1_results.csv").stat().st_mtime_ns == finished_table.st_mtime_ns  # not rewritten
    assert flaky.calls == 1 + 2 * calls_per_run  # the dead attempt's call, then all of it once
    assert files_of(out) == uninterrupted  # tables, results JSON and report, byte for byte
    assert resumed.reference == whole.reference

    again = benchsmith.score_hardneg(dataset.run_dir, run_id="cut", **arguments)
    assert again.already_finished and (steady.calls, flaky.calls) == (2 * calls_per_run, 1 + 2 * calls_per_run)
    assert again.reference == resumed.reference and again.tables == resumed.tables and again.report == resumed.report
    with pytest.raises(InputError, match="other settings"):  # a run id names one run, never a mix of two
        benchsmith.score_hardneg(dataset.run_dir, run_id="cut", **{**arguments, "rerankers": ["steady"]})


def test_the_studio_graph_scores_with_no_context(dataset, tmp_path, monkeypatch):
    from benchsmith.graphs.hardneg.score import graph

    monkeypatch.setenv("BENCHSMITH_WORKSPACE", str(tmp_path / "ws"))
    output = graph.invoke(
        {
            "run_id": "studio",
            "dataset": str(dataset.run_dir),
            "scorers": ["bm25-row"],
            "output_dir": str(tmp_path / "scores"),
        }
    )
    assert output["scorers"] == ["bm25-row"] and set(output["tables"]["bm25-row"]) == {"task1", "task2", "task3"}
    assert output["reference"]["bm25-row"] == benchsmith.rescore_tables(*output["tables"]["bm25-row"].values())
    assert json.loads(Path(output["report"]["results"]).read_text())["settings"]["scorers"] == ["bm25-row"]
