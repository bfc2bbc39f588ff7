"""The evaluation's results from per-query values: aggregates, the recall curve, per-turn,
per-switch and per-label breakdowns (answerability, question type, standalone), paired
significance tests with Holm correction, and the top retrieved scores of the turns without
relevance judgments (unanswerable, underspecified) against the answerable turns'.

Per-query values come first (evals/measures/standard.py); everything here is derived from them, so
the same summary serves built-in retrievers and a user's own run files alike.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from benchsmith.evals.defaults import DEFAULT_SIGNIFICANCE_RESAMPLES
from benchsmith.evals.measures.breakdown import mean_by_group
from benchsmith.evals.measures.significance import DEFAULT_ALPHA, TestName, compare_all, describe

PREFERRED_PRIMARY_MEASURES = ("nDCG@10", "nDCG@3", "RR@10", "AP")
RECALL_CUTOFFS = (1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000)

PerQuery = Mapping[str, Mapping[str, Mapping[str, float]]]  # {configuration: {query: {measure: value}}}
LABEL_BREAKDOWNS = ("by_answerability", "by_question_type", "by_standalone")  # results.json keys, like by_switch


def primary_measure(measures: Sequence[str]) -> str:
    """The measure the comparison leads with: the first preferred one asked for, else the first."""
    return next((m for m in PREFERRED_PRIMARY_MEASURES if m in measures), measures[0])


def recall_cutoffs(depth: int) -> list[str]:
    """The recall@k measures of the recall curve, up to the retrieval depth."""
    return [f"R@{k}" for k in RECALL_CUTOFFS if k <= depth]


def summarize_scores(
    per_query: PerQuery,
    aggregate: Mapping[str, Mapping[str, float]],
    measures: Sequence[str],
    recall_curve: Mapping[str, Mapping[str, float]],
    turn_of: Mapping[str, int],
    switch_of: Mapping[str, str],
    test: TestName = "randomization",
    resamples: int = DEFAULT_SIGNIFICANCE_RESAMPLES,
    seed: int = 0,
    labels_of: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """The measured part of ``results.json``: measures, primary measure, aggregate, per-query
    values, recall curve, per-turn, per-switch and per-label means (``labels_of``: ``{key of
    LABEL_BREAKDOWNS: {query: label}}``), and the significance tests."""
    primary = primary_measure(measures)
    comparisons = compare_all(per_query, [primary], test, DEFAULT_ALPHA, resamples, seed) if len(per_query) > 1 else []
    pairs = len(per_query) * (len(per_query) - 1) // 2
    return {
        "measures": list(measures),
        "primary_measure": primary,
        "aggregate": {name: dict(values) for name, values in aggregate.items()},
        "per_query": {
            name: {query: dict(values) for query, values in queries.items()} for name, queries in per_query.items()
        },
        "recall_curve": {name: dict(values) for name, values in recall_curve.items()},
        "by_turn": {name: mean_by_group(values, turn_of, measures) for name, values in per_query.items()}
        if turn_of
        else {},
        "by_switch": {name: mean_by_group(values, switch_of, measures) for name, values in per_query.items()}
        if switch_of
        else {},
        **{
            key: {
                name: mean_by_group(values, (labels_of or {}).get(key) or {}, measures)
                for name, values in per_query.items()
            }
            if (labels_of or {}).get(key)
            else {}
            for key in LABEL_BREAKDOWNS
        },
        "significance": {
            "description": describe(test, resamples, DEFAULT_ALPHA, pairs),
            "measures": [primary] if comparisons else [],
            "comparisons": [comparison.to_json() for comparison in comparisons],
        },
    }


def score_distribution(scores: Sequence[float]) -> dict[str, float]:
    """Count, mean and quantiles of a set of scores (empty: the count alone)."""
    if not scores:
        return {"queries": 0}
    values = np.asarray(scores, dtype=float)
    p10, median, p90 = np.quantile(values, [0.1, 0.5, 0.9]).tolist()
    return {
        "queries": len(values),
        "mean": float(values.mean()),
        "min": float(values.min()),
        "p10": p10,
        "median": median,
        "p90": p90,
        "max": float(values.max()),
    }


def separability(answerable: Sequence[float], unjudged: Sequence[float]) -> float | None:
    """The chance that an answerable turn's top score beats an unjudged turn's (ties count half):
    the ROC AUC of the top score as a detector of answerable turns; 0.5 cannot tell them apart."""
    if not answerable or not unjudged:
        return None
    ordered = np.sort(np.asarray(unjudged, dtype=float))
    values = np.asarray(answerable, dtype=float)
    below = np.searchsorted(ordered, values, side="left")
    ties = np.searchsorted(ordered, values, side="right") - below
    return float((below + ties / 2).sum() / (len(values) * len(ordered)))


def unjudged_summary(
    top_scores: Mapping[str, Mapping[str, float]],
    unjudged: Collection[str],
    answerable: Collection[str],
    answerability_of: Mapping[str, str],
) -> dict[str, Any]:
    """The turns without relevance judgments (left out of every measure): how many, by
    answerability, and per configuration the distribution of their top-1 retrieved score beside
    the answerable turns' (``top_scores``: ``{configuration: {query: top score}}``; a query that
    retrieved nothing has none)."""
    by_label: dict[str, int] = {}
    for query_id in unjudged:
        label = answerability_of.get(query_id) or "unlabelled"
        by_label[label] = by_label.get(label, 0) + 1
    configurations = {}
    for name, tops in top_scores.items():
        unjudged_scores = [tops[q] for q in sorted(unjudged) if q in tops]
        answerable_scores = [tops[q] for q in sorted(answerable) if q in tops]
        configurations[name] = {
            "unjudged": score_distribution(unjudged_scores),
            "answerable": score_distribution(answerable_scores),
            "auc": separability(answerable_scores, unjudged_scores),
        }
    return {
        "queries": len(unjudged),
        "by_answerability": dict(sorted(by_label.items())),
        "top_score": configurations if unjudged else {},
    }
