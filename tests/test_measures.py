"""IR measures, paired significance tests and per-group breakdowns.

The measures are checked against pytrec_eval (trec_eval) called directly on the same TREC
files, and against hand-worked values for the ones it lacks (Judged@k) or computes without a
cutoff (RR@k); the significance tests against scipy.stats and hand-worked Holm adjustments.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import pytrec_eval
from scipy import stats

from benchsmith.evals.measures.breakdown import mean_by_group
from benchsmith.evals.measures.significance import (
    compare_all,
    describe,
    holm_bonferroni,
    paired_p_value,
    randomization_p_value,
)
from benchsmith.evals.measures.standard import (
    DEFAULT_MEASURES,
    UnknownMeasure,
    evaluate_run,
    parse_measures,
)
from benchsmith.stores.formats.trec import read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run

# --- A small judged run --------------------------------------------------------------------
# Rankings best first; the score of rank r is 40 − 0.75·r (distinct, exact in the file's
# 6 significant digits). The dicts are built in *ascending* score order so that nothing can
# rely on dict order instead of scores.
RANKINGS = {
    "q1": [f"q1-{r:02d}" for r in range(1, 26)],  # 25 documents (more than 20)
    "q2": [f"q2-{r:02d}" for r in range(1, 31)],  # 30 documents, first relevant at rank 12
    "q3": [f"q3-{r:02d}" for r in range(1, 6)],  # 5 documents (fewer than every cutoff but R@1/R@5)
    "q5": ["q5-01", "q5-02", "q5-03"],  # in the run, not in the qrels: unjudged
}
QRELS = {
    # graded 0/1/2; q1-99 is relevant but never retrieved
    "q1": {"q1-01": 0, "q1-02": 0, "q1-03": 2, "q1-07": 1, "q1-12": 0, "q1-15": 1, "q1-22": 2, "q1-99": 1},
    "q2": {"q2-01": 0, "q2-05": 0, "q2-12": 1, "q2-25": 2},
    "q3": {"q3-02": 1, "q3-04": 0},
    "q4": {"q4-01": 1, "q4-02": 2},  # judged, absent from the run: 0 on every measure, part of the mean
}
PYTREC_NAMES = {
    "R@1": "recall_1",
    "R@5": "recall_5",
    "R@20": "recall_20",
    "R@100": "recall_100",
    "R@1000": "recall_1000",
    "nDCG@3": "ndcg_cut_3",
    "nDCG@10": "ndcg_cut_10",
    "nDCG@20": "ndcg_cut_20",
    "AP": "map",
}


def score_of(rank: int) -> float:
    return 40.0 - 0.75 * rank


@pytest.fixture
def judged_files(tmp_path):
    run = {
        qid: {doc: score_of(rank) for rank, doc in reversed(list(enumerate(docs, start=1)))}
        for qid, docs in RANKINGS.items()
    }
    write_trec_run(tmp_path / "run.txt", run, tag="test run")
    write_trec_qrels(tmp_path / "qrels.txt", [(q, d, rel) for q, judged in QRELS.items() for d, rel in judged.items()])
    read_run, read_qrels = read_trec_run(tmp_path / "run.txt"), read_trec_qrels(tmp_path / "qrels.txt")
    assert read_run == run and read_qrels == QRELS  # the files round-trip exactly
    return read_qrels, read_run


def top_k(ranking: dict[str, float], k: int) -> dict[str, float]:
    return dict(sorted(ranking.items(), key=lambda item: -item[1])[:k])


def test_default_measures_equal_pytrec_eval(judged_files):
    qrels, run = judged_files
    results = evaluate_run(parse_measures(DEFAULT_MEASURES), qrels, run)
    assert results.measures == list(DEFAULT_MEASURES)
    assert set(results.per_query) == {"q1", "q2", "q3", "q4"}  # the qrels' queries, not q5
    assert results.unjudged_queries == 1  # q5

    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"recall.1,5,20,100,1000", "ndcg_cut.3,10,20", "map"})
    reference = evaluator.evaluate(run)
    assert set(reference) == {"q1", "q2", "q3"}  # trec_eval skips q4 (no ranking) and q5 (no judgments)
    rr_evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"})
    for k in (10, 20):
        truncated = {qid: top_k(ranking, k) for qid, ranking in run.items()}
        for qid, values in rr_evaluator.evaluate(truncated).items():
            reference[qid][f"RR@{k}"] = values["recip_rank"]

    for qid in ("q1", "q2", "q3"):
        for ours, theirs in PYTREC_NAMES.items():
            assert results.per_query[qid][ours] == pytest.approx(reference[qid][theirs], abs=1e-12), (qid, ours)
        for k in (10, 20):
            assert results.per_query[qid][f"RR@{k}"] == pytest.approx(reference[qid][f"RR@{k}"], abs=1e-12)
    assert results.per_query["q4"] == dict.fromkeys(DEFAULT_MEASURES, 0.0)

    # The mean is over the four judged queries, q4 counted as 0.
    for ours, theirs in [*PYTREC_NAMES.items(), ("RR@10", "RR@10"), ("RR@20", "RR@20")]:
        expected = sum(reference[qid][theirs] for qid in ("q1", "q2", "q3")) / 4
        assert results.aggregate[ours] == pytest.approx(expected, abs=1e-12), ours


def test_hand_worked_values(judged_files):
    qrels, run = judged_files
    per_query = evaluate_run(parse_measures(DEFAULT_MEASURES), qrels, run).per_query

    # RR: first relevant (rel ≥ 1) document of q1 at rank 3, of q2 at rank 12, of q3 at rank 2.
    assert per_query["q1"]["RR@10"] == pytest.approx(1 / 3) and per_query["q1"]["RR@20"] == pytest.approx(1 / 3)
    assert per_query["q2"]["RR@10"] == 0.0  # rank 12 is beyond the cutoff 10
    assert per_query["q2"]["RR@20"] == pytest.approx(1 / 12)
    assert per_query["q3"]["RR@10"] == pytest.approx(1 / 2)

    # Judged@k: the fraction of the top k that appear in the qrels, judged relevant or not.
    # q1 top 10: judged 01, 02, 03, 07 → 4/10; top 20: also 12, 15 → 6/20.
    assert per_query["q1"]["Judged@10"] == pytest.approx(0.4)
    assert per_query["q1"]["Judged@20"] == pytest.approx(0.3)
    # q2 top 10: 01, 05 → 2/10; top 20: also 12 → 3/20.
    assert per_query["q2"]["Judged@10"] == pytest.approx(0.2)
    assert per_query["q2"]["Judged@20"] == pytest.approx(0.15)
    # q3 retrieved only 5: 02 and 04 judged → 2/5 (ir_measures divides by the documents
    # retrieved when there are fewer than k).
    assert per_query["q3"]["Judged@10"] == pytest.approx(0.4)

    # nDCG@3 of q1, gains = grades, discount log2(rank + 1):
    # DCG@3 = 0/1 + 0/log2(3) + 2/log2(4) = 1.0
    # ideal grades 2, 2, 1, 1, 1 (q1-99 counts though unretrieved):
    # IDCG@3 = 2/1 + 2/log2(3) + 1/log2(4) = 2 + 1.261860 + 0.5 = 3.761860
    assert per_query["q1"]["nDCG@3"] == pytest.approx(1.0 / (2 + 2 / math.log2(3) + 0.5))
    # R@5 of q1: 1 of 5 relevant (q1-03) → 0.2; R@20: 03, 07, 15 → 3/5 = 0.6; R@1000: 4/5 (99 missing).
    assert per_query["q1"]["R@5"] == pytest.approx(0.2)
    assert per_query["q1"]["R@20"] == pytest.approx(0.6)
    assert per_query["q1"]["R@1000"] == pytest.approx(0.8)
    # AP of q3: one relevant document, at rank 2 → precision 1/2, over R = 1.
    assert per_query["q3"]["AP"] == pytest.approx(0.5)

    # The means over the four judged queries (q4 = 0):
    aggregate = evaluate_run(parse_measures(["RR@20", "Judged@10"]), qrels, run).aggregate
    assert aggregate["RR@20"] == pytest.approx((1 / 3 + 1 / 12 + 1 / 2 + 0) / 4)
    assert aggregate["Judged@10"] == pytest.approx((0.4 + 0.2 + 0.4 + 0) / 4)


def test_rr_cutoff_on_a_minimal_ranking():
    # 15 documents, the only relevant one at rank 12.
    run = {"q": {f"d{r:02d}": 100.0 - r for r in range(1, 16)}}
    qrels = {"q": {"d12": 1, "d03": 0}}
    values = evaluate_run(parse_measures(["RR@10", "RR@20"]), qrels, run).per_query["q"]
    assert values == {"RR@10": 0.0, "RR@20": pytest.approx(1 / 12)}


def test_empty_ranking_of_a_judged_query_counts_as_zero():
    # bm25.search and fuse_runs both return {} for a query nothing matched; the module promises
    # such a query counts as 0 on every measure.
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    results = evaluate_run(parse_measures(DEFAULT_MEASURES), qrels, {"q1": {"a": 1.0}, "q2": {}})
    assert results.per_query["q2"] == dict.fromkeys(DEFAULT_MEASURES, 0.0)


def test_parse_measures_accepts_ir_measures_names_and_deduplicates(judged_files):
    measures = parse_measures(["P(rel=2)@5", "nDCG@10", "nDCG@10", "RR(rel=1)@10", "RR@10", "AP"])
    assert [str(m) for m in measures] == ["P(rel=2)@5", "nDCG@10", "RR@10", "AP"]
    qrels, run = judged_files
    # P(rel=2)@5 of q1: only q1-03 (grade 2) in the top 5 → 1/5; q1-07 (grade 1) does not count.
    assert evaluate_run(measures, qrels, run).per_query["q1"]["P(rel=2)@5"] == pytest.approx(0.2)


@pytest.mark.parametrize("name", ["Bogus@5", "nDCG@x", "P(rel=)@5", ""])
def test_unknown_measure_is_named(name):
    with pytest.raises(UnknownMeasure, match=re.escape(f"unknown measure {name!r}")):
        parse_measures(["nDCG@10", name])


def test_unknown_measure_parameter_is_an_unknown_measure():
    with pytest.raises(UnknownMeasure, match="P\\(foo=2\\)@5"):
        parse_measures(["P(foo=2)@5"])


# --- Significance ----------------------------------------------------------------------------


def test_holm_bonferroni_hand_worked():
    # sorted ascending: 0.005 (×4 = 0.02), 0.01 (×3 = 0.03), 0.03 (×2 = 0.06), 0.04 (×1 = 0.04 → running max 0.06)
    assert holm_bonferroni([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # capped at 1, and monotone: 2 × 0.5 = 1.0, then max(1.0, 1 × 0.6) = 1.0
    assert holm_bonferroni([0.6, 0.5]) == pytest.approx([1.0, 1.0])
    assert holm_bonferroni([0.02]) == pytest.approx([0.02])


def scipy_paired_p(first: np.ndarray, second: np.ndarray, n_resamples: int, seed: int = 0) -> float:
    return stats.permutation_test(
        (first, second),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        rng=np.random.default_rng(seed),
    ).pvalue


@pytest.mark.parametrize("kind", ["continuous", "tied grades"])
def test_randomization_exact_equals_scipy(kind):
    rng = np.random.default_rng(11)
    if kind == "continuous":
        first, second = rng.uniform(size=10), rng.uniform(size=10)
        first[:6] += 0.25
    else:  # RR-like values: many sign vectors give the same |mean| exactly
        levels = np.array([0.0, 1 / 3, 0.5, 1.0])
        first, second = rng.choice(levels, 10), rng.choice(levels, 10)
    ours = randomization_p_value(first - second, resamples=10_000)
    # 2^10 = 1024 ≤ 9999: scipy enumerates every sign vector too.
    theirs = scipy_paired_p(first, second, n_resamples=9999)
    assert ours == theirs
    assert ours * 1024 == round(ours * 1024)  # a count over the 1024 sign vectors
    assert 0 < ours < 1


def test_randomization_sampled_agrees_with_scipy():
    rng = np.random.default_rng(5)
    first = rng.uniform(size=40)
    second = first - 0.06 + rng.normal(scale=0.25, size=40)
    ours = randomization_p_value(first - second, resamples=20_000, seed=1)
    theirs = scipy_paired_p(first, second, n_resamples=20_000, seed=2)
    assert 0.01 < theirs < 0.9  # a p-value where sampling error shows
    # each has a standard error ≤ sqrt(0.25 / 20000) ≈ 0.0035; 0.02 is over four of their combined
    assert ours == pytest.approx(theirs, abs=0.02)
    assert ours * 20_001 == pytest.approx(round(ours * 20_001))  # (extreme + 1) / (resamples + 1)


def test_identical_systems_give_p_one():
    values = np.array([0.1, 0.5, 0.9, 0.3])
    assert paired_p_value(values, values.copy()) == 1.0
    assert paired_p_value(values, values.copy(), test="t-test") == 1.0
    assert randomization_p_value(np.zeros(12), resamples=100) == 1.0  # sampled branch: all ≥ 0


def test_t_test_is_scipy_ttest_rel():
    first = np.array([0.2, 0.5, 0.4, 0.9, 0.7, 0.3])
    second = np.array([0.1, 0.45, 0.5, 0.6, 0.65, 0.1])
    assert paired_p_value(first, second, test="t-test") == stats.ttest_rel(first, second).pvalue


def test_compare_all_finds_the_clearly_better_system():
    rng = np.random.default_rng(3)
    queries = [f"q{i}" for i in range(20)]
    base = rng.uniform(0.1, 0.6, size=20)
    per_query = {
        "good": {q: {"nDCG@10": v + 0.3, "R@5": v} for q, v in zip(queries, base)},
        "base": {q: {"nDCG@10": v, "R@5": v} for q, v in zip(queries, base)},
        "copy": {q: {"nDCG@10": v, "R@5": v} for q, v in zip(queries, base)},
    }
    comparisons = compare_all(per_query, ["nDCG@10", "R@5"], resamples=2000, seed=0)
    by_pair = {(c.measure, c.first, c.second): c for c in comparisons}
    assert len(comparisons) == 6  # 3 pairs × 2 measures

    good_vs_base = by_pair[("nDCG@10", "good", "base")]
    assert good_vs_base.mean_difference == pytest.approx(0.3)
    # every one of 20 differences is +0.3: only the all-+ and all-− sign vectors (2 of 2^20) are
    # as extreme, so p is (0 or 1 + 1) / 2001 and stays significant after ×2 or ×3 (Holm).
    assert good_vs_base.p_value <= 2 / 2001 and good_vs_base.significant
    assert by_pair[("nDCG@10", "good", "copy")].significant
    base_vs_copy = by_pair[("nDCG@10", "base", "copy")]
    assert (base_vs_copy.p_value, base_vs_copy.p_adjusted, base_vs_copy.significant) == (1.0, 1.0, False)
    # R@5 is the same for all three: nothing significant
    assert not any(c.significant for c in comparisons if c.measure == "R@5")
    # p_adjusted is Holm over the pairs of one measure
    ndcg = [c for c in comparisons if c.measure == "nDCG@10"]
    assert [c.p_adjusted for c in ndcg] == pytest.approx(holm_bonferroni([c.p_value for c in ndcg]))


def test_describe_names_the_test_and_the_correction():
    text = describe("randomization", 10_000, 0.05, 3)
    assert "paired randomization test (10,000 resamples)" in text
    assert "Holm–Bonferroni" in text and "3 pairs" in text and "< 0.05" in text
    assert "paired t-test" in describe("t-test", 10_000, 0.01, 1)


# --- Breakdown -----------------------------------------------------------------------------


def test_mean_by_group_means_counts_and_order():
    per_query = {
        "a": {"nDCG@10": 1.0, "R@5": 0.5},
        "b": {"nDCG@10": 0.5, "R@5": 0.0},
        "c": {"nDCG@10": 0.25, "R@5": 1.0},
        "d": {"nDCG@10": 0.0, "R@5": 1.0},
        "e": {"nDCG@10": 0.75, "R@5": 0.25},
        "single": {"nDCG@10": 0.9, "R@5": 0.9},  # no group: left out
    }
    turns = {"a": 10, "b": 2, "c": 2, "d": 1, "e": 10}
    by_turn = mean_by_group(per_query, turns, ["nDCG@10", "R@5"])
    assert list(by_turn) == ["1", "2", "10"]  # numeric, not "1" < "10" < "2"
    assert by_turn["2"] == {"nDCG@10": pytest.approx(0.375), "R@5": pytest.approx(0.5), "queries": 2}
    assert by_turn["10"] == {"nDCG@10": pytest.approx(0.875), "R@5": pytest.approx(0.375), "queries": 2}
    assert by_turn["1"] == {"nDCG@10": 0.0, "R@5": 1.0, "queries": 1}

    switches = {"a": "hard", "b": "start", "c": "soft", "d": "follow-up", "e": "hard", "single": None}
    by_switch = mean_by_group(per_query, switches, ["nDCG@10"])
    assert list(by_switch) == ["start", "follow-up", "soft", "hard"]  # conversation order, not alphabetical
    assert by_switch["hard"] == {"nDCG@10": pytest.approx(0.875), "queries": 2}
    assert sum(group["queries"] for group in by_switch.values()) == 5
