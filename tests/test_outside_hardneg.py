"""The user's own retriever as a hardneg scorer: an HTTP endpoint served by a real web framework
searches its own index of the dataset's documents, each candidate is scored by its rank there
(the ones it did not rank tied last), each distinct query asked once, even across a crash and a
resume; documents the dataset lacks are named in the report."""

from __future__ import annotations

import threading
from collections import Counter

import numpy as np
import pytest

import benchsmith
from benchsmith.graphs.hardneg.outside import OUTSIDE_DEPTH, dataset_documents
from benchsmith.graphs.hardneg.scoring import load_dataset
from benchsmith.jobs.hardneg import estimate_scoring
from benchsmith.stores.formats.multiconir import read_ladder_scores, read_task1_scores
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.multicondition_scoring import ladder_groups, rank_scores, score_tables, task1_groups
from benchsmith.tools.retrieval.outside_retrievers import clear_retrievers
from tests.hardneg_fixtures import write_corpus
from tests.outside_systems import SearchEndpoint, overlap_search, serving

N = 3


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("hardneg-outside")
    built = benchsmith.build_hardneg([write_corpus(root / "corpus")], conditions=N, workspace=root / "ws", run_id="ds")
    _, rows, _ = load_dataset(built.run_dir, Workspace.resolve(root / "ws"))
    return built.run_dir, rows


@pytest.fixture(autouse=True)
def _forget_registered():
    yield
    clear_retrievers()


def distinct_queries(rows) -> set[str]:
    ladder = [row for row in rows if row.has_ladder]
    groups = task1_groups([row for row in rows if row.has_task1]) + ladder_groups(ladder, False)
    return {query for query, _ in groups + ladder_groups(ladder, True)}


def test_rank_scores_put_higher_places_first_and_unranked_candidates_tied_last():
    assert rank_scores(["b", "x", "a", "y"], ["a", "c", "b", "a"]) == [2.0, 0.0, 4.0, 0.0]


def test_an_http_endpoint_scores_each_candidate_by_its_rank_and_is_asked_each_query_once(dataset, tmp_path):
    run_dir, rows = dataset
    documents = {doc_id: text for doc_id, (_, text) in dataset_documents(rows).items()}
    endpoint = SearchEndpoint(documents, fail_every=5)  # every fifth request answers 503 first: retried
    with serving(endpoint) as url:
        arguments = dict(retrievers=[url, "bm25:row"], output_dir=tmp_path / "scores", workspace=tmp_path / "ws")
        estimate = estimate_scoring(run_dir, **arguments)
        assert any(url in note and f"{len(distinct_queries(rows))} requests" in note for note in estimate.notes)
        result = benchsmith.score_hardneg(run_dir, run_id="own", concurrency=3, **arguments)
        asked = Counter(request["query"] for request in endpoint.requests)
        again = benchsmith.score_hardneg(run_dir, run_id="own", concurrency=3, **arguments)
    assert result.scorers == [url, "bm25-row"]
    # Each distinct query answered once (a 503 is asked again at once); the finished run asks nothing.
    assert set(asked) == distinct_queries(rows) and len(endpoint.requests) == sum(asked.values())
    assert sum(count - 1 for count in asked.values()) == len(endpoint.requests) // 5
    assert again.already_finished and again.reference == result.reference

    def by_rank(groups):
        return [
            rank_scores(
                candidates, [documents[doc_id] for doc_id, _ in overlap_search(documents, query, OUTSIDE_DEPTH)]
            )
            for query, candidates in groups
        ]

    expected = score_tables(rows, by_rank)
    task1 = read_task1_scores(result.tables[url]["task1"])
    assert expected.task1 is not None and expected.task2 is not None
    assert np.array_equal(task1.positive, expected.task1.positive)
    assert np.array_equal(task1.negative, expected.task1.negative)
    assert np.array_equal(read_ladder_scores(result.tables[url]["task2"]).scores, expected.task2.scores)
    assert benchsmith.rescore_tables(*result.tables[url].values()) == result.reference[url]
    assert "its rank" in result.results()["scorers"][url]["description"]


class Searcher:
    """A callable retriever that also returns one document the dataset does not hold, and dies on
    its ``die_on``-th call (a bug in the user's system, not a transient failure)."""

    def __init__(self, documents: dict[str, str], die_on: int = 0):
        self.documents, self.die_on = documents, die_on
        self.answered: Counter[str] = Counter()
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, query, history, k):
        with self.lock:
            self.calls += 1
            if self.calls == self.die_on:
                raise RuntimeError("the search died mid-way")
            self.answered[query] += 1
        return [("elsewhere#7", 99.0), *overlap_search(self.documents, query, k - 1)]


def test_a_crashed_scoring_resumes_without_asking_finished_queries_and_names_unknown_documents(dataset, tmp_path):
    run_dir, rows = dataset
    documents = {doc_id: text for doc_id, (_, text) in dataset_documents(rows).items()}
    whole, cut = Searcher(documents), Searcher(documents, die_on=4)
    benchsmith.register_retriever("whole-search", whole)
    benchsmith.register_retriever("cut-search", cut)
    common = dict(output_dir=tmp_path / "scores", workspace=tmp_path / "ws", concurrency=1)
    uninterrupted = benchsmith.score_hardneg(run_dir, retrievers=["whole-search"], run_id="whole", **common)
    with pytest.raises(RuntimeError, match="died mid-way"):
        benchsmith.score_hardneg(run_dir, retrievers=["cut-search"], run_id="cut", **common)
    assert 3 <= sum(cut.answered.values()) < len(distinct_queries(rows))  # the dead call's query is not
    resumed = benchsmith.score_hardneg(run_dir, retrievers=["cut-search"], run_id="cut", **common)
    assert resumed.resumed
    assert set(cut.answered) == distinct_queries(rows) and set(cut.answered.values()) == {1}  # none asked twice
    assert resumed.reference["cut-search"] == uninterrupted.reference["whole-search"]
    notes = resumed.results()["notes"]
    assert any("'elsewhere#7'" in note and f"in {len(distinct_queries(rows))} queries" in note for note in notes)
    assert "elsewhere#7" in resumed.report["markdown"].read_text(encoding="utf-8")
