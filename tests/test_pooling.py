"""Pooling: fusion sorts each run before fusing, and the pool is the union of each technique's
top documents at the given depth; support judgments become filters and qrels."""

import pytest

from benchsmith.tools.benchmark.nugget_support import (
    NO_SUPPORTED_NUGGET,
    UNSUPPORTED_NUGGET,
    collect_support,
    filter_questions,
    nugget_qrels,
    query_qrel_rows,
)
from benchsmith.tools.retrieval.pooling import batches, fuse_top, pool_documents, top_of


def freshstack_normalized_sum(runs, depth):
    """freshstack.util.fusion(method="normalized_sum"), restated: the first ``depth`` documents of
    each run in insertion order, min-max normalized (with its 1e-8), summed."""
    fused = {}
    for run in runs:
        for query_id, scores in run.items():
            documents = list(scores)[:depth]
            values = list(scores.values())[:depth]
            low, high = min(values), max(values)
            for doc_id, value in zip(documents, values):
                fused.setdefault(query_id, {}).setdefault(doc_id, 0.0)
                fused[query_id][doc_id] += (value - low) / (high - low + 1e-8)
    return fused


# Insertion order is ascending score: the worst documents first, as a run read from an
# unsorted source would be.
BM25 = {"q": {"d5": 1.0, "d4": 2.0, "d3": 3.0, "d2": 4.0, "d1": 5.0}}
DENSE = {"q": {"e3": 0.1, "d1": 0.2, "e2": 0.3, "e1": 0.9}}


def test_fusion_sorts_each_run_before_keeping_its_top_and_normalizing():
    # Top 2 of each run by score: d1, d2 (BM25, normalized 1 and 0) and e1, e2 (dense, 1 and 0).
    # Fused, d1 and e1 score 1 and lead; the depth keeps them.
    assert fuse_top([BM25, DENSE], "combsum", depth=2)["q"] == pytest.approx({"d1": 1.0, "e1": 1.0})
    # At depth 3, BM25's d3 (normalized 0) and dense's d1 (0) enter: d1 now sums both runs.
    assert fuse_top([BM25, DENSE], "combsum", depth=3)["q"] == pytest.approx({"d1": 1.0, "e1": 1.0, "d2": 0.5})
    # The reference keeps the first two inserted (the two worst) of each run instead.
    reference = freshstack_normalized_sum([BM25, DENSE], depth=2)["q"]
    assert set(reference) == {"d5", "d4", "e3", "d1"}
    # Sorted first, the reference agrees with us.
    agreed = freshstack_normalized_sum([top_of(BM25, 5), top_of(DENSE, 4)], depth=2)["q"]
    assert {doc for doc, score in agreed.items() if score > 0.5} == {"d1", "e1"}


def test_fusion_depth_caps_the_fused_run_and_rrf_is_offered():
    assert len(fuse_top([BM25, DENSE], "combsum", depth=3)["q"]) == 3
    rrf = fuse_top([BM25, DENSE], "rrf", depth=10)["q"]
    assert next(iter(rrf)) == "d1"  # rank 1 and rank 3: the only document both runs found
    assert set(rrf) == set(BM25["q"]) | set(DENSE["q"])
    with pytest.raises(ValueError, match="unknown pool fusion"):
        fuse_top([BM25, DENSE], "wsum", depth=3)


def test_the_pool_is_the_union_of_each_techniques_top_depth():
    fused = {"question": ["a", "b", "c", "d"], "answer": ["c", "e", "a", "f"], "nuggets": ["g", "b"]}
    pool = pool_documents(fused, depth=2)
    assert set(pool) == {"a", "b", "c", "e", "g"}  # d and f are below depth 2 in their techniques
    assert len(pool) == len(set(pool))
    # Best rank first, then technique order: a (0, question), c (0, answer), g (0, nuggets), b, e.
    assert pool == ["a", "c", "g", "b", "e"]
    assert pool_documents(fused, depth=10) == ["a", "c", "g", "b", "e", "d", "f"]


def test_batches_hold_at_most_the_batch_size_and_cover_the_pool_in_order():
    pool = [f"d{n}" for n in range(45)]
    cut = batches(pool, 20)
    assert [len(batch) for batch in cut] == [20, 20, 5] and [pair for batch in cut for pair in batch] == pool
    with pytest.raises(ValueError):
        batches(pool, 21)


def test_support_becomes_filters_and_both_levels_of_qrels():
    judgments = [
        {"support": {"x": {"nuggets": ["q1_1", "q1_2"], "reason": "both"}, "y": {"nuggets": []}}},
        {"support": {"z": {"nuggets": ["q1_2"], "reason": "one"}}},
    ]
    full = collect_support("q1", ["q1_1", "q1_2", "q1_3"], ["x", "y", "z"], judgments)
    assert full.supporters == {"q1_1": ["x"], "q1_2": ["x", "z"], "q1_3": []}
    none = collect_support("q2", ["q2_1"], ["x"], [{"support": {"x": {"nuggets": []}}}])
    kept, dropped = filter_questions([full, none], all_nuggets_supported=False)
    assert [s.question_id for s in kept] == ["q1"] and dropped == [("q2", NO_SUPPORTED_NUGGET)]
    kept, dropped = filter_questions([full, none], all_nuggets_supported=True)
    assert kept == [] and dropped == [("q1", UNSUPPORTED_NUGGET), ("q2", NO_SUPPORTED_NUGGET)]
    assert query_qrel_rows([full]) == [("q1", "x", 2), ("q1", "y", 0), ("q1", "z", 1)]
    assert nugget_qrels([full])["q1"] == {
        "q1_1": {"x": 1, "y": 0, "z": 0},
        "q1_2": {"x": 1, "y": 0, "z": 1},
        "q1_3": {"x": 0, "y": 0, "z": 0},
    }
    with pytest.raises(ValueError, match="unknown nuggets"):
        collect_support("q3", ["q3_1"], ["x"], [{"support": {"x": {"nuggets": ["q3_10"]}}}])


def fused_by_hand(runs, method, depth):
    """The pool fusion restated plainly (as tools/retrieval/pooling.py computed it before it used
    tools/retrieval/fusion.py): each run sorted (descending score, ties by id) and cut to ``depth``; each
    document's share 1 / (60 + rank) or its min-max normalized score (0 when all are equal),
    added up run by run; the fused run sorted the same way and cut to ``depth``."""

    def top(ranking):
        return dict(sorted(ranking.items(), key=lambda item: (-item[1], item[0]))[:depth])

    fused = {}
    for query_id in sorted(set().union(*runs)):
        scores = {}
        for run in runs:
            ranked = top(run.get(query_id, {}))
            if method == "rrf":
                shares = {doc_id: 1 / (60 + rank) for rank, doc_id in enumerate(ranked, start=1)}
            else:
                high, low = max(ranked.values(), default=0.0), min(ranked.values(), default=0.0)
                shares = {
                    doc_id: (score - low) / (high - low) if high > low else 0.0 for doc_id, score in ranked.items()
                }
            for doc_id, share in shares.items():
                scores[doc_id] = scores.get(doc_id, 0.0) + share
        fused[query_id] = top(scores)
    return fused


@pytest.mark.parametrize("method", ["combsum", "rrf"])
def test_pool_fusion_keeps_its_depth_cut_before_and_after_fusing(method):
    import random

    generator = random.Random(7)
    documents = [f"d{n}" for n in range(30)]
    for trial in range(20):
        # Coarse scores: ties within a run; runs with queries of their own, and empty rankings.
        runs = [
            {
                f"q{q}": {
                    doc_id: float(generator.randint(0, 6))
                    for doc_id in generator.sample(documents, generator.randint(0, 12))
                }
                for q in range(5)
                if generator.random() < 0.8
            }
            for _ in range(generator.choice([2, 3, 4]))
        ]
        for depth in (1, 3, 10):
            ours, expected = fuse_top(runs, method, depth), fused_by_hand(runs, method, depth)
            assert list(ours) == list(expected)
            for query_id in expected:
                assert list(ours[query_id]) == list(expected[query_id]), (trial, depth, query_id)
                assert ours[query_id] == pytest.approx(expected[query_id])
    # The cut comes before fusing: normalized over the top 2 only, d2 ends level with d1 at depth 2.
    assert fuse_top([{"q": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}, {"q": {"d2": 5.0, "d9": 4.0}}], "combsum", 2)["q"] == (
        pytest.approx({"d1": 1.0, "d2": 1.0})
    )
