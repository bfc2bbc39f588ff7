"""The top-score comparison of the turns without judgments (evals/measures/evaluation_results.py)."""

from __future__ import annotations

import pytest

from benchsmith.evals.measures.evaluation_results import separability, unjudged_summary


def test_separability_is_the_chance_an_answerable_top_score_beats_an_unjudged_one_ties_half():
    assert separability([3.0, 4.0], [1.0, 3.0]) == pytest.approx(3.5 / 4)
    assert separability([1.0], [2.0, 3.0]) == 0.0
    assert separability([], [1.0]) is None


def test_the_summary_counts_the_unjudged_turns_by_label_and_skips_queries_that_retrieved_nothing():
    tops = {"bm25": {"a1": 9.0, "a2": 7.0, "u1": 2.0}}
    summary = unjudged_summary(
        tops,
        unjudged={"u1", "u2"},
        answerable={"a1", "a2"},
        answerability_of={"u1": "unanswerable", "u2": "underspecified"},
    )
    assert summary["queries"] == 2
    assert summary["by_answerability"] == {"unanswerable": 1, "underspecified": 1}
    entry = summary["top_score"]["bm25"]
    assert entry["unjudged"] == {
        "queries": 1,
        "mean": 2.0,
        "min": 2.0,
        "p10": 2.0,
        "median": 2.0,
        "p90": 2.0,
        "max": 2.0,
    }
    assert entry["answerable"]["median"] == pytest.approx(8.0) and entry["auc"] == 1.0
    assert unjudged_summary(tops, set(), {"a1"}, {}) == {"queries": 0, "by_answerability": {}, "top_score": {}}
