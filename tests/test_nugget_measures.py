"""Nugget measures against worked examples by hand and against ir_measures called directly."""

import math
import random

import ir_measures
import pytest

from benchsmith.evals.measures.nugget_measures import (
    UnknownNuggetMeasure,
    check_nugget_measures,
    coverage,
    nugget_measures,
    query_qrels,
)

# Question q1 has three nuggets and q10 two; the ids share prefixes (q1_1 / q1_10 ... and q1 / q10),
# which a prefix match would mix up.
#   q1_1:  supported by d1
#   q1_10: supported by d1 and d2      (d1 supports two nuggets)
#   q1_2:  judged against d3, supported by none
#   q10_1: supported by d4
#   q10_2: supported by d5
NUGGET_QRELS = {
    "q1": {"q1_1": {"d1": 1, "d2": 0, "d3": 0}, "q1_10": {"d1": 1, "d2": 1, "d3": 0}, "q1_2": {"d3": 0}},
    "q10": {"q10_1": {"d4": 1, "d5": 0}, "q10_2": {"d5": 1, "d4": 0}},
}
RUN = {"q1": {"d2": 3.0, "d1": 2.0, "d9": 1.0}, "q10": {"d4": 2.0, "d6": 1.5, "d7": 1.0, "d5": 0.5}}


def test_query_level_labels_count_the_nuggets_a_document_supports():
    assert query_qrels(NUGGET_QRELS) == {"q1": {"d1": 2, "d2": 1, "d3": 0}, "q10": {"d4": 1, "d5": 1}}


def test_coverage_by_hand_counts_an_unsupported_nugget_in_the_denominator():
    # q1 top 1 = d2 → covers q1_10 only: 1/3. Top 2 adds d1 → q1_1 too: 2/3; q1_2 never: at most 2/3.
    assert coverage(RUN, NUGGET_QRELS, 1)["q1"] == pytest.approx(1 / 3)
    assert coverage(RUN, NUGGET_QRELS, 2)["q1"] == pytest.approx(2 / 3)
    assert coverage(RUN, NUGGET_QRELS, 10)["q1"] == pytest.approx(2 / 3)
    # q10: d4 at rank 1 covers q10_1; d5 at rank 4 covers q10_2.
    assert coverage(RUN, NUGGET_QRELS, 3)["q10"] == pytest.approx(1 / 2)
    assert coverage(RUN, NUGGET_QRELS, 4)["q10"] == pytest.approx(1.0)


def test_nugget_ids_sharing_a_prefix_stay_apart():
    # A prefix match (FreshStack's nuggets_to_query_qrels) would give q1 the nuggets of q10, and
    # nugget q1_1 the support of q1_10.
    only_q1_1 = {"q1": {"q1_1": {"d1": 1}, "q1_10": {"d2": 1}}, "q10": {"q10_1": {"d2": 1}}}
    run = {"q1": {"d2": 2.0, "d1": 1.0}, "q10": {"d2": 1.0}}
    assert coverage(run, only_q1_1, 1) == {"q1": 0.5, "q10": 1.0}
    results = nugget_measures(run, only_q1_1, ["Coverage@1", "R@1"])
    assert results.per_query["q1"] == {"Coverage@1": 0.5, "R@1": 0.5}
    assert results.per_query["q10"] == {"Coverage@1": 1.0, "R@1": 1.0}


def test_alpha_ndcg_by_hand():
    # q1, alpha = 0.5. Ranking d2, d1, d9.
    #   rank 1, d2: q1_10 new → 1                          DCG = 1
    #   rank 2, d1: q1_1 new → 1, q1_10 seen once → 0.5    DCG += 1.5 / log2(3)
    # Ideal (greedy): d1 (gains 2), then d2 (q1_10 seen once → 0.5): 2 + 0.5 / log2(3).
    dcg = 1 + 1.5 / math.log2(3)
    ideal = 2 + 0.5 / math.log2(3)
    results = nugget_measures(RUN, NUGGET_QRELS, ["alpha_nDCG@10", "alpha_nDCG@1"])
    assert results.per_query["q1"]["alpha_nDCG@10"] == pytest.approx(dcg / ideal)
    assert results.per_query["q1"]["alpha_nDCG@1"] == pytest.approx(1 / 2)
    # q10: d4 (1) at rank 1, d5 (1) at rank 4; ideal d4, d5 at ranks 1, 2.
    q10 = (1 + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert results.per_query["q10"]["alpha_nDCG@10"] == pytest.approx(q10)
    assert results.aggregate["alpha_nDCG@10"] == pytest.approx((dcg / ideal + q10) / 2)


def test_recall_on_derived_query_qrels_by_hand():
    # q1's relevant documents: d1 and d2 (d3 supports nothing). q10's: d4 and d5.
    results = nugget_measures(RUN, NUGGET_QRELS, ["R@1", "R@3"])
    assert results.per_query["q1"] == {"R@1": 0.5, "R@3": 1.0}
    assert results.per_query["q10"] == {"R@1": 0.5, "R@3": 0.5}


def test_a_query_without_a_ranking_scores_zero_and_counts_in_the_mean():
    results = nugget_measures({"q1": RUN["q1"]}, NUGGET_QRELS, ["alpha_nDCG@10", "Coverage@20", "R@50"])
    assert results.per_query["q10"] == {"alpha_nDCG@10": 0.0, "Coverage@20": 0.0, "R@50": 0.0}
    assert results.aggregate["Coverage@20"] == pytest.approx((2 / 3 + 0) / 2)


def test_ties_are_broken_by_document_id_for_every_measure():
    qrels = {"q": {"q_1": {"a": 1}, "q_2": {"b": 1}}}
    tied = {"q": {"b": 1.0, "a": 1.0}}
    results = nugget_measures(tied, qrels, ["Coverage@1", "R@1", "alpha_nDCG@1"])
    # "a" comes first: it covers q_1 (1 of 2 nuggets), is 1 of 2 relevant documents, alpha-nDCG@1 = 1/1.
    assert results.per_query["q"] == {"Coverage@1": 0.5, "R@1": 0.5, "alpha_nDCG@1": 1.0}


def random_case(seed: int):
    rng = random.Random(seed)
    qrels, run = {}, {}
    for query in range(6):
        qid = f"q{query}"
        documents = [f"d{n}" for n in range(12)]
        qrels[qid] = {
            f"{qid}_{n}": {doc: int(rng.random() < 0.25) for doc in rng.sample(documents, 6)}
            for n in range(1, rng.randint(2, 5))
        }
        scores = rng.sample(range(1000), 10)  # distinct: no ties to order
        run[qid] = {doc: float(score) for doc, score in zip(rng.sample(documents, 10), scores)}
    return qrels, run


@pytest.mark.parametrize("seed", range(5))
def test_alpha_ndcg_equals_ir_measures_called_directly(seed):
    qrels, run = random_case(seed)
    rows = [
        ir_measures.Qrel(qid, doc, label, nugget)
        for qid, nuggets in qrels.items()
        for nugget, documents in nuggets.items()
        for doc, label in documents.items()
    ]
    for name in ("alpha_nDCG@10", "alpha_nDCG@20", "alpha_nDCG(alpha=0.9)@5"):
        direct = {
            metric.query_id: metric.value
            for metric in ir_measures.iter_calc([ir_measures.parse_measure(name)], rows, run)
        }
        ours = nugget_measures(run, qrels, [name]).per_query
        assert {qid: values[name] for qid, values in ours.items()} == pytest.approx(
            {qid: direct.get(qid, 0.0) for qid in qrels}
        )


def test_two_alphas_in_one_call_are_both_computed():
    # ir_measures shares one run iterator between pyndeval invocations: asked together, the
    # second alpha would score 0. Each is computed on its own.
    qrels, run = random_case(1)
    together = nugget_measures(run, qrels, ["alpha_nDCG@10", "alpha_nDCG(alpha=0.9)@10"]).aggregate
    assert together["alpha_nDCG@10"] == pytest.approx(
        nugget_measures(run, qrels, ["alpha_nDCG@10"]).aggregate["alpha_nDCG@10"]
    )
    alone = nugget_measures(run, qrels, ["alpha_nDCG(alpha=0.9)@10"]).aggregate["alpha_nDCG(alpha=0.9)@10"]
    assert together["alpha_nDCG(alpha=0.9)@10"] == pytest.approx(alone) and alone > 0


def test_coverage_matches_freshstacks_definition_on_its_own_inputs():
    # freshstack.retrieval.metrics.coverage: per query, the nuggets with a relevant document in
    # the top k over the query's nuggets, averaged over queries (its grouping by id prefix aside).
    qrels, run = random_case(3)
    for k in (1, 5, 10):
        expected = {}
        for qid, nuggets in qrels.items():
            top = [doc for doc, _ in sorted(run[qid].items(), key=lambda item: item[1], reverse=True)][:k]
            expected[qid] = sum(any(nuggets[n].get(doc, 0) > 0 for doc in top) for n in nuggets) / len(nuggets)
        assert coverage(run, qrels, k) == pytest.approx(expected)


@pytest.mark.parametrize("name", ["alpha_nDCG@30", "alpha_nDCG", "Coverage@0", "Coverage@x", "nonsense@3"])
def test_unusable_measures_are_refused_by_name(name):
    with pytest.raises(UnknownNuggetMeasure, match=r"alpha_nDCG|Coverage|unknown measure"):
        check_nugget_measures([name])


def test_an_evaluation_measures_nugget_measures_beside_its_own_a_batch_at_a_time():
    from benchsmith.evals.measures.nugget_measures import evaluate_batches_with_nuggets, split_measures
    from benchsmith.evals.measures.standard import parse_measures

    assert split_measures(["nDCG@10", "Coverage@20", "alpha_nDCG@10", "R@50"]) == (
        ["nDCG@10", "R@50"],
        ["Coverage@20", "alpha_nDCG@10"],
    )
    # The evaluation's own qrels judge q1, q10 and q99 (which the nugget qrels lack), not q5.
    qrels = {"q1": {"d1": 1}, "q10": {"d4": 1}, "q99": {"d1": 1}}
    run = {**RUN, "q99": {"d1": 1.0}, "q5": {"d1": 1.0}}
    expected = nugget_measures(RUN, NUGGET_QRELS, ["Coverage@2", "alpha_nDCG@10"]).per_query
    for size in (1, 2, 4):  # per-query values do not depend on the batching
        batches = [
            {query_id: run[query_id] for query_id in list(run)[start : start + size]}
            for start in range(0, len(run), size)
        ]
        results = evaluate_batches_with_nuggets(
            parse_measures(["R@1"]), ["Coverage@2", "alpha_nDCG@10"], qrels, NUGGET_QRELS, iter(batches)
        )
        assert results.measures == ["R@1", "Coverage@2", "alpha_nDCG@10"]
        assert results.query_ids == ["q1", "q10", "q99"] and results.unjudged_queries == 1  # q5
        per_query = results.per_query
        assert per_query["q1"]["Coverage@2"] == pytest.approx(2 / 3)  # worked by hand above
        for query_id in ("q1", "q10"):
            assert per_query[query_id]["alpha_nDCG@10"] == pytest.approx(expected[query_id]["alpha_nDCG@10"])
            assert per_query[query_id]["Coverage@2"] == pytest.approx(expected[query_id]["Coverage@2"])
        assert per_query["q10"]["R@1"] == 1.0 and per_query["q1"]["R@1"] == 0.0  # the evaluation's own qrels
        assert per_query["q99"] == {"R@1": 1.0, "Coverage@2": 0.0, "alpha_nDCG@10": 0.0}  # no nuggets: 0
        assert results.aggregate["Coverage@2"] == pytest.approx((2 / 3 + 1 / 2 + 0) / 3)
    only_nuggets = evaluate_batches_with_nuggets([], ["Coverage@2"], query_qrels(NUGGET_QRELS), NUGGET_QRELS, [RUN])
    assert only_nuggets.measures == ["Coverage@2"]
    assert only_nuggets.aggregate == {"Coverage@2": pytest.approx((2 / 3 + 1 / 2) / 2)}
