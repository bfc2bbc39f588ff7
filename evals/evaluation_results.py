"""The evaluation's results from per-query values: aggregates, the recall curve, per-turn and
per-switch breakdowns, and paired significance tests with Holm correction.

Per-query values come first (evals/measures.py); everything here is derived from them, so
the same summary serves built-in retrievers and a user's own run files alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchsmith.evals.breakdown import mean_by_group
from benchsmith.evals.significance import DEFAULT_ALPHA, DEFAULT_RESAMPLES, TestName, compare_all, describe

PREFERRED_PRIMARY_MEASURES = ("nDCG@10", "nDCG@3", "RR@10", "AP")
RECALL_CUTOFFS = (1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000)

PerQuery = Mapping[str, Mapping[str, Mapping[str, float]]]  # {configuration: {query: {measure: value}}}


def primary_measure(measures: Sequence[str]) -> str:
    """The measure the comparison leads with: the first preferred one asked for, else the first."""
    return next((m for m in PREFERRED_PRIMARY_MEASURES if m in measures), measures[0])


def recall_cutoffs(depth: int) -> list[str]:
    """The recall@k measures of the recall curve, up to the retrieval depth."""
    return [f"R@{k}" for k in RECALL_CUTOFFS if k <= depth]


def summarize_scores(per_query: PerQuery, aggregate: Mapping[str, Mapping[str, float]], measures: Sequence[str],
                     recall_curve: Mapping[str, Mapping[str, float]], turn_of: Mapping[str, int],
                     switch_of: Mapping[str, str], test: TestName = "randomization",
                     resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> dict[str, Any]:
    """The measured part of ``results.json``: measures, primary measure, aggregate, per-query
    values, recall curve, per-turn and per-switch means, and the significance tests."""
    primary = primary_measure(measures)
    comparisons = compare_all(per_query, [primary], test, DEFAULT_ALPHA, resamples, seed) if len(per_query) > 1 else []
    pairs = len(per_query) * (len(per_query) - 1) // 2
    return {
        "measures": list(measures),
        "primary_measure": primary,
        "aggregate": {name: dict(values) for name, values in aggregate.items()},
        "per_query": {name: {query: dict(values) for query, values in queries.items()}
                      for name, queries in per_query.items()},
        "recall_curve": {name: dict(values) for name, values in recall_curve.items()},
        "by_turn": {name: mean_by_group(values, turn_of, measures) for name, values in per_query.items()}
        if turn_of else {},
        "by_switch": {name: mean_by_group(values, switch_of, measures) for name, values in per_query.items()}
        if switch_of else {},
        "significance": {"description": describe(test, resamples, DEFAULT_ALPHA, pairs),
                         "measures": [primary] if comparisons else [],
                         "comparisons": [comparison.to_json() for comparison in comparisons]},
    }
