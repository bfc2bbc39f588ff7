"""Fusion (tools/retrieval/fusion.py) against ranx, the reference it replaced, and under threads.

The reference is ranx's own ``fuse`` fed as tools/retrieval/fusion.py's docstring says fusion behaves:
every run sorted by score with ties by document id, RRF given each document's rank as its
score (so ranx's unstable sort has no ties to order), queries aligned across runs, runs that
retrieved nothing left out; the fused run then sorted the same way. ranx is only a test
dependency: nothing in the package imports it.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from ranx import Run as RanxRun
from ranx import fuse

from benchsmith.tools.retrieval.fusion import RRF_K, fuse_runs, sort_run

# ranx's compiled RRF casts its rank counter from uint64 to int64: harmless here.
pytestmark = pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaTypeSafetyWarning")
RANX_METHODS = {"rrf": (None, "rrf"), "combsum": ("min-max", "sum"), "wsum": ("min-max", "wsum")}


def ranx_reference(runs, method, weights=None, depth=None):
    """The fused run as ranx computes it, ranked by descending score, ties by document id."""
    query_ids = sorted(set().union(*runs))
    kept = [index for index, run in enumerate(runs) if any(run.values())]
    prepared = []
    for index in kept:
        ranked = sort_run({query_id: dict(runs[index].get(query_id, {})) for query_id in query_ids})
        if method == "rrf":  # ranks as scores: no ties left for ranx to order arbitrarily
            ranked = {q: {doc: float(len(docs) - rank) for rank, doc in enumerate(docs)} for q, docs in ranked.items()}
        prepared.append(RanxRun(ranked))
    norm, ranx_method = RANX_METHODS[method]
    params = {"k": RRF_K} if method == "rrf" else {"weights": [weights[i] for i in kept]} if method == "wsum" else {}
    fused = fuse(prepared, norm=norm, method=ranx_method, params=params).to_dict()
    result = sort_run({query_id: dict(fused.get(query_id, {})) for query_id in query_ids})
    return {q: dict(list(docs.items())[:depth]) if depth else docs for q, docs in result.items()}


def assert_same_fusion(ours, reference):
    assert list(ours) == list(reference)
    for query_id, expected in reference.items():
        assert list(ours[query_id]) == list(expected), query_id  # identical rankings
        assert ours[query_id] == pytest.approx(expected, rel=1e-9, abs=1e-9), query_id


def random_run(rng, queries, documents, size, distinct_scores=None):
    """Rankings of ``size`` documents per query; scores from ``distinct_scores`` values make ties."""
    run = {}
    for query in queries:
        picked = rng.choice(documents, size=size, replace=False)
        scores = rng.integers(distinct_scores, size=size) / 4 if distinct_scores else rng.normal(size=size)
        run[query] = {f"d{doc:03d}": float(score) for doc, score in zip(picked, scores)}
    return run


# Worked examples: each names what it exercises.
RUN_A = {"q1": {"d1": 9.0, "d2": 7.0, "d3": 5.0}, "q2": {"d4": 2.0, "d5": 1.0}}
RUN_B = {"q1": {"d3": 0.9, "d1": 0.8, "d4": 0.1}}  # no q2: a one-run query
TIED = {"q1": {"b": 1.0, "a": 1.0, "c": 1.0, "d": 0.5}, "q2": {"x": 2.0, "y": 2.0}}
TIED_OTHER = {"q1": {"c": 3.0, "d": 3.0, "e": 1.0}, "q2": {"y": 1.0, "z": 1.0}}
SINGLE = {"q1": {"a": 4.0}, "q3": {"s": 1.0, "t": 1.0}}  # one document (min = max); q3 in this run only
EMPTY = {"q1": {}, "q2": {}}  # a run that retrieved nothing
PARTLY_EMPTY = {"q1": {"a": 0.3, "e": 0.2}, "q2": {}}
CASES = {
    "one-run queries": [RUN_A, RUN_B],
    "ties in every run": [TIED, TIED_OTHER],
    "single documents and a third run": [TIED, TIED_OTHER, SINGLE],
    "an empty run": [RUN_A, EMPTY, RUN_B],
    "a query empty in one run": [PARTLY_EMPTY, TIED],
}
WEIGHTS = {2: [0.7, 0.3], 3: [0.5, 0.2, 0.3]}


# The comparisons with ranx are slow: ranx JIT-compiles its fusion in each test process (8 to 42 s,
# 239 s once on a loaded machine), so the first comparison a worker runs pays for it.
@pytest.mark.slow
@pytest.mark.parametrize("method", ["rrf", "combsum", "wsum"])
@pytest.mark.parametrize("case", list(CASES))
def test_fusion_equals_ranx_on_worked_examples(case, method):
    runs = CASES[case]
    weights = WEIGHTS[len(runs)] if method == "wsum" else None
    assert_same_fusion(fuse_runs(runs, method, weights), ranx_reference(runs, method, weights))
    assert_same_fusion(fuse_runs(runs, method, weights, depth=2), ranx_reference(runs, method, weights, depth=2))


@pytest.mark.slow
@pytest.mark.parametrize("method", ["rrf", "combsum", "wsum"])
@pytest.mark.parametrize("distinct_scores", [None, 3])
def test_fusion_equals_ranx_on_larger_random_runs(method, distinct_scores):
    rng = np.random.default_rng(11)
    queries = [f"q{i}" for i in range(12)]
    runs = [random_run(rng, queries[: 12 - 3 * index], np.arange(200), 60, distinct_scores) for index in range(3)]
    weights = [0.2, 0.5, 0.3] if method == "wsum" else None
    assert_same_fusion(fuse_runs(runs, method, weights, depth=50), ranx_reference(runs, method, weights, depth=50))


def test_rrf_of_worked_example_by_hand():
    # q1 ranks with ties by id: TIED a 1, b 2, c 3, d 4; TIED_OTHER c 1, d 2, e 3.
    fused = fuse_runs([TIED, TIED_OTHER], "rrf")["q1"]
    assert fused == pytest.approx({"c": 1 / 63 + 1 / 61, "d": 1 / 64 + 1 / 62, "a": 1 / 61, "b": 1 / 62, "e": 1 / 63})
    assert list(fused) == ["c", "d", "a", "b", "e"]  # a (1/61) above b (1/62); e 1/63 below b


def test_no_run_retrieved_anything():
    assert fuse_runs([EMPTY, {"q3": {}}], "rrf") == {"q1": {}, "q2": {}, "q3": {}}


def test_fusion_from_eight_threads_equals_fusion_from_one():
    rng = np.random.default_rng(5)
    queries = [f"q{i:03d}" for i in range(40)]
    inputs = [
        [random_run(rng, queries, np.arange(400), 150, distinct_scores=6 if task % 2 else None) for _ in range(2)]
        for task in range(8)
    ]
    methods = ["rrf", "combsum", "wsum"]
    expected = {
        (task, method): fuse_runs(inputs[task], method, [0.6, 0.4], depth=100)
        for task in range(8)
        for method in methods
    }
    results: dict[tuple[int, str], list] = {key: [] for key in expected}
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def work(task: int) -> None:
        try:
            start.wait()  # all eight fuse at once
            for _ in range(5):
                for method in methods:
                    results[(task, method)].append(fuse_runs(inputs[task], method, [0.6, 0.4], depth=100))
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(task,)) for task in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for key, fused in results.items():
        assert len(fused) == 5 and all(result == expected[key] for result in fused), key
