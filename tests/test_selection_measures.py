"""Selection measures (evals/measures/selection_measures.py) against values worked out by hand and
against trec_eval's average precision."""

from __future__ import annotations

import ir_measures
import numpy as np
import pytest

from benchsmith.evals.measures.intervals import percentile_interval, resample_weights
from benchsmith.evals.measures.selection_measures import (
    configuration_scores,
    f_beta,
    intervals_overlap,
    main_effects,
    micro_precision_recall,
    per_query_mean_precision_recall,
    pr_auc,
    queries_to_separate,
    query_counts,
    win_share,
)

F = frozenset

# q1 retrieves: relevant (fact a), not relevant, relevant (fact b); its pool has facts a, b, c.
# q2 retrieves: not relevant, relevant (g), relevant (g again: the same fact through another chunk); pool: g.
RANKINGS = {
    "q1": [(True, F({"a"})), (False, F()), (True, F({"b"}))],
    "q2": [(False, F()), (True, F({"g"})), (True, F({"g"}))],
}
FACTS = {"q1": 3, "q2": 1}


def hand_counts():
    return query_counts(RANKINGS, FACTS, ["q1", "q2"], 3)


def test_micro_precision_and_recall_pool_the_counts_over_queries():
    precision, recall = micro_precision_recall(hand_counts())
    # k=1: 1 relevant of 2 retrieved, 1 of 4 facts; k=2: 2 of 4, 2 of 4; k=3: 4 of 6, 3 of 4 (g counts once).
    assert precision == pytest.approx([1 / 2, 2 / 4, 4 / 6])
    assert recall == pytest.approx([1 / 4, 2 / 4, 3 / 4])


def test_per_query_means_are_reported_beside():
    precision, recall = per_query_mean_precision_recall(hand_counts())
    assert precision == pytest.approx([(1 + 0) / 2, (1 / 2 + 1 / 2) / 2, (2 / 3 + 2 / 3) / 2])
    assert recall == pytest.approx([(1 / 3 + 0) / 2, (1 / 3 + 1) / 2, (2 / 3 + 1) / 2])


def test_pr_auc_is_the_step_area_under_the_curve():
    precision, recall = micro_precision_recall(hand_counts())
    # Σ (R@k − R@(k−1)) · P@k = 1/4 · 1/2 + 1/4 · 1/2 + 1/4 · 2/3 = 5/12.
    assert pr_auc(precision, recall) == pytest.approx(5 / 12)
    # A step that adds no recall adds no area, however precise.
    assert pr_auc(np.array([1.0, 1.0]), np.array([0.5, 0.5])) == pytest.approx(0.5)


def test_pr_auc_of_one_query_with_one_fact_per_relevant_document_is_trec_evals_ap_at_k():
    ranking = ["d3", "d7", "d1", "d9", "d4", "d2"]
    relevant = {"d7", "d1", "d2", "d5"}  # d5 is never retrieved
    counts = query_counts(
        {"q": [(doc in relevant, F({doc}) if doc in relevant else F()) for doc in ranking]},
        {"q": len(relevant)},
        ["q"],
        len(ranking),
    )
    ours = pr_auc(*micro_precision_recall(counts))
    qrels = [ir_measures.Qrel("q", doc, 1) for doc in relevant]
    run = [ir_measures.ScoredDoc("q", doc, float(len(ranking) - rank)) for rank, doc in enumerate(ranking)]
    reference = ir_measures.calc_aggregate([ir_measures.parse_measure("AP@6")], qrels, run)
    assert ours == pytest.approx(next(iter(reference.values())))
    assert ours == pytest.approx((1 / 2 + 2 / 3 + 3 / 6) / 4)  # by hand


def test_f_beta_by_hand():
    precision, recall = micro_precision_recall(hand_counts())
    assert f_beta(precision, recall, 1.0)[2] == pytest.approx(2 * (2 / 3) * (3 / 4) / (2 / 3 + 3 / 4))  # 12/17
    assert f_beta(precision, recall, 0.5)[0] == pytest.approx(1.25 * 0.5 * 0.25 / (0.25 * 0.5 + 0.25))  # 5/12
    assert f_beta(precision, recall, 2.0)[2] == pytest.approx(5 * (2 / 3) * (3 / 4) / (4 * (2 / 3) + 3 / 4))
    assert f_beta(np.array([0.0]), np.array([0.0]), 1.0)[0] == 0.0
    with pytest.raises(ValueError):
        f_beta(precision, recall, 0.0)


def test_bootstrap_interval_of_two_queries_by_hand():
    """Two queries, one relevant at rank 1 and one not: a resample draws both (P@1 = 1) with
    probability 1/4, one of each (1/2) with 1/2, neither (0) with 1/4. The 95% interval is [0, 1];
    the 30% interval, between the 35th and 65th percentiles, is [1/2, 1/2]."""
    counts = query_counts({"q1": [(True, F({"a"}))], "q2": [(False, F())]}, {"q1": 1, "q2": 1}, ["q1", "q2"], 1)
    weights = resample_weights(2, 4000, seed=3)
    resampled, _ = micro_precision_recall(counts, weights)
    values, frequencies = np.unique(resampled[:, 0], return_counts=True)
    assert values.tolist() == [0.0, 0.5, 1.0]
    assert frequencies / len(weights) == pytest.approx([0.25, 0.5, 0.25], abs=0.03)
    wide = percentile_interval(0.5, resampled[:, 0], n=2)
    assert (wide.low, wide.high) == (0.0, 1.0)
    narrow = percentile_interval(0.5, resampled[:, 0], n=2, confidence=0.3)
    assert (narrow.mean, narrow.low, narrow.high, narrow.n) == (0.5, 0.5, 0.5, 2)


def test_bootstrap_of_identical_queries_has_zero_width_and_one_query_has_none():
    counts = query_counts(
        {q: [(True, F({"a"})), (False, F())] for q in ("q1", "q2", "q3")},
        {q: 2 for q in ("q1", "q2", "q3")},
        ["q1", "q2", "q3"],
        2,
    )
    scores = configuration_scores(counts, resample_weights(3, 200, seed=0), betas=(1.0,))
    # P = [1, 1/2], R = [1/2, 1/2]: PR-AUC = 1/2 · 1; every resample is the same.
    assert scores["pr_auc"] == pytest.approx(0.5)
    assert scores["pr_auc_interval"]["low"] == pytest.approx(0.5) == scores["pr_auc_interval"]["high"]
    assert scores["f_beta"]["1"]["best"] == pytest.approx(2 / 3) and scores["f_beta"]["1"]["best_k"] == 1
    single = percentile_interval(0.4, np.array([0.4, 0.4]), n=1)
    assert single.low is None and single.high is None


def test_win_share_counts_paired_resamples():
    assert win_share(np.array([0.5, 0.6, 0.7, 0.2]), np.array([0.4, 0.6, 0.1, 0.3])) == pytest.approx(
        (1 + 0.5 + 1 + 0) / 4
    )


def test_a_ranking_cannot_cover_more_facts_than_its_pool_has():
    with pytest.raises(ValueError):
        query_counts({"q": [(True, F({"a", "b"}))]}, {"q": 1}, ["q"], 1)


def test_main_effects_on_a_full_grid_are_differences_of_marginal_means():
    values = {"a1b1": 0.2, "a1b2": 0.4, "a2b1": 0.5, "a2b2": 0.9}
    settings = {name: {"a": name[:2], "b": name[2:]} for name in values}
    rows = {
        (row["dimension"], row["level"]): row
        for row in main_effects(values, settings, {"a": ["a1", "a2"], "b": ["b1", "b2"]})
    }
    assert rows[("a", "a2")]["change"] == pytest.approx(((0.5 - 0.2) + (0.9 - 0.4)) / 2)  # 0.7 − 0.3
    assert rows[("a", "a2")]["mean"] == pytest.approx(0.7) and rows[("a", "a1")]["mean"] == pytest.approx(0.3)
    assert rows[("b", "b2")]["change"] == pytest.approx(((0.4 - 0.2) + (0.9 - 0.5)) / 2)
    assert rows[("a", "a1")]["change"] == 0.0 and rows[("a", "a2")]["pairs"] == 2


def test_main_effects_of_a_staged_search_use_the_pairs_it_evaluated():
    # Stage 1 varied a (b at b1) and kept a2; stage 2 varied b with a at a2.
    values = {"a1b1": 0.2, "a2b1": 0.5, "a2b2": 0.9}
    settings = {name: {"a": name[:2], "b": name[2:]} for name in values}
    rows = {
        (row["dimension"], row["level"]): row
        for row in main_effects(values, settings, {"a": ["a1", "a2"], "b": ["b1", "b2"]})
    }
    assert rows[("a", "a2")]["change"] == pytest.approx(0.3) and rows[("a", "a2")]["pairs"] == 1
    assert rows[("b", "b2")]["change"] == pytest.approx(0.4) and rows[("b", "b2")]["pairs"] == 1


def test_intervals_overlap_when_they_share_a_point_or_one_is_unknown():
    # The real run that named a winner although its interval overlapped the runner-up's:
    assert intervals_overlap({"low": 0.209, "high": 0.500}, {"low": 0.109, "high": 0.334})
    assert intervals_overlap({"low": 0.4, "high": 0.5}, {"low": 0.5, "high": 0.6})
    assert not intervals_overlap({"low": 0.87, "high": 0.98}, {"low": 0.36, "high": 0.71})
    assert intervals_overlap({"low": None, "high": None}, {"low": 0.1, "high": 0.2})


def test_queries_to_separate_worked_example():
    # n · (z · (se₁ + se₂) / d)² with z = 1.959964 (95%): 50 · (1.959964 · 0.05 / 0.1)² = 48.02 → 49 queries.
    assert queries_to_separate(0.1, 0.03, 0.02, 50) == 49
    assert queries_to_separate(-0.1, 0.03, 0.02, 50) == 49  # the order of the two does not matter
    # Halving the difference needs four times the queries: 5 · (1.959964 · 0.05 / 0.024)² = 83.4 → 84.
    assert queries_to_separate(0.024, 0.03, 0.02, 5) == 84
    assert queries_to_separate(0.05, 0.03, 0.02, 50) == 193  # 4 · 48.02 = 192.07 → 193
    assert queries_to_separate(0.0, 0.03, 0.02, 50) is None  # identical results: no number of queries separates them
    assert queries_to_separate(0.1, 0.03, 0.02, 50, confidence=0.9) == 34  # z = 1.644854: 33.82 → 34


def test_separation_names_a_winner_only_when_the_top_interval_clears_the_runner_ups():
    from benchsmith.graphs.select.results import separation

    rng = np.random.default_rng(0)
    spread = {name: rng.normal(value, 0.03, size=200) for name, value in (("a", 0.9), ("b", 0.88), ("c", 0.5))}
    scores = {name: {"resampled_pr_auc": values} for name, values in spread.items()}

    def ranked(*names):
        return [
            {
                "name": name,
                "pr_auc": float(np.mean(spread[name])),
                "pr_auc_interval": {
                    "low": float(np.quantile(spread[name], 0.025)),
                    "high": float(np.quantile(spread[name], 0.975)),
                },
            }
            for name in names
        ]

    tie = separation(ranked("a", "b", "c"), scores, 20, 0.95)
    assert tie["best"] is None and tie["tied"] == ["a", "b"] and tie["runner_up"] == "b"
    assert tie["queries_needed"] > 20 and tie["more_queries"] == tie["queries_needed"] - 20
    clear = separation(ranked("a", "c"), scores, 20, 0.95)
    assert clear["best"] == "a" and clear["tied"] == []
