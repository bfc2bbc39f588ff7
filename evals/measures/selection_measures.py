"""Measures of a configuration search over a judged pool (SEARA: Zou et al., 2025, "SPEAR /
SEARA: Subset-sampled Performance Evaluation via Automated Ground Truth Generation for RAG",
arXiv:2507.06554).

Per configuration and query q, from its top K chunks (ranks 1..k, fewer if it returned fewer):

* ``retrieved_q(k)``: chunks at ranks ≤ k; ``relevant_q(k)``: those the judges found relevant;
* ``covered_q(k)``: distinct facts those relevant chunks carry (facts matched across chunks
  and chunkings, tools/benchmark/fact_matching.py); ``F_q``: distinct facts of the whole pool of q, the
  pseudo ground truth.

Per-query values come first; the aggregates pool them over the queries (micro averaging),
as SEARA's proof assumes:

    P@k = Σ_q relevant_q(k) / Σ_q retrieved_q(k),    R@k = Σ_q covered_q(k) / Σ_q |F_q|.

P@k counts every retrieved chunk, so it is the true precision wherever the judges are right:
each retrieved chunk is in the pool and judged. R@k divides by the pool's facts, a subset of
all true facts; the divisor is the same for every configuration, so R@k orders configurations
exactly as true recall does (SEARA, appendix). A per-query mean would not: each query's divisor
weighs it differently. The per-query means (over the queries that retrieved anything for
precision, over the queries with facts for recall) are reported beside the micro values.

    PR-AUC = Σ_{k=1..K} (R@k − R@(k−1)) · P@k,   R@0 = 0,

the step-wise area under the precision–recall curve traced by k = 1..K, the form average
precision takes (Manning, Raghavan and Schütze, 2008, Introduction to Information Retrieval,
§8.4; scikit-learn's ``average_precision_score``), not the trapezoid, which overstates the
area between points (Davis and Goadrich, ICML 2006). For one query whose relevant chunks each
carry one distinct fact and whose facts are all its relevant documents, it is trec_eval's
AP@K. SEARA ranks configurations by it.

    F_β@k = (1 + β²) · P@k · R@k / (β² · P@k + R@k)   (0 when both are 0)

(van Rijsbergen, 1979, Information Retrieval, ch. 7): β < 1 weighs precision more, β > 1 recall.

Intervals: the percentile bootstrap over queries (Efron and Tibshirani, 1993, An Introduction
to the Bootstrap, ch. 13): B resamples of the queries with replacement, each measure computed
on each resample as on the sample, the interval between the (1 − c)/2 and (1 + c)/2 quantiles
of the B values (evals.measures.intervals.resample_weights and percentile_interval, the package's one
percentile bootstrap). All configurations share the resamples, so their values are paired.

A winner is named only when its PR-AUC interval does not overlap the runner-up's
(:func:`intervals_overlap`); otherwise the configurations whose intervals overlap the top one's
are tied, and :func:`queries_to_separate` estimates how many queries would separate the top two:
with bootstrap standard errors se₁, se₂ (the standard deviations of the resampled PR-AUCs) and
the observed difference d, normal intervals of half-width z·seᵢ stop overlapping once
d > z·(se₁ + se₂); each seᵢ shrinks as 1/√n, so at n' queries they separate when

    n' ≥ n · (z · (se₁ + se₂) / d)²,   z = Φ⁻¹((1 + c)/2),

assuming the difference and the per-query spread stay what they are (an estimate, not a promise;
identical results, d = 0, are separated by no number of queries).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

# percentile_interval: the package's one percentile bootstrap (evals/measures/intervals.py).
from benchsmith.evals.defaults import DEFAULT_CONFIDENCE, DEFAULT_SELECTION_BETAS
from benchsmith.evals.measures.intervals import percentile_interval

Ranking = Sequence[tuple[bool, frozenset[str] | set[str]]]  # per rank: (relevant, its facts)


@dataclass(frozen=True)
class QueryCounts:
    """Per query (rows) and cutoff k = 1..K (columns): the counts the measures are made of."""

    retrieved: np.ndarray  # (Q, K)
    relevant: np.ndarray  # (Q, K)
    covered: np.ndarray  # (Q, K)
    facts: np.ndarray  # (Q,): |F_q|

    @property
    def depth(self) -> int:
        result: int = self.retrieved.shape[1]
        return result


def query_counts(
    rankings: Mapping[str, Ranking], facts_per_query: Mapping[str, int], query_ids: Sequence[str], depth: int
) -> QueryCounts:
    """Counts at k = 1..``depth`` for every query of ``query_ids`` (a query without a ranking
    retrieved nothing)."""
    shape = (len(query_ids), depth)
    retrieved, relevant, covered = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    for row, query_id in enumerate(query_ids):
        ranking = list(rankings.get(query_id, ()))[:depth]
        seen: set[str] = set()
        hits = 0
        for rank in range(depth):
            if rank < len(ranking):
                is_relevant, facts = ranking[rank]
                if is_relevant:
                    hits += 1
                    seen |= set(facts)
            retrieved[row, rank] = min(rank + 1, len(ranking))
            relevant[row, rank] = hits
            covered[row, rank] = len(seen)
    pooled = np.array([facts_per_query.get(query_id, 0) for query_id in query_ids], dtype=float)
    if depth and np.any(covered[:, -1] > pooled):
        raise ValueError("a query's ranking covers more facts than its pool has")
    return QueryCounts(retrieved, relevant, covered, pooled)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    ratio: np.ndarray = np.divide(
        numerator,
        denominator,
        out=np.zeros(np.broadcast_shapes(numerator.shape, denominator.shape)),
        where=denominator > 0,
    )
    return ratio


def micro_precision_recall(counts: QueryCounts, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """P@k and R@k for k = 1..K, pooled over the queries. ``weights`` (B, Q): how often each
    query is drawn in each of B resamples; the result is then (B, K)."""
    if weights is None:
        weights = np.ones((1, len(counts.facts)))
        squeeze = True
    else:
        squeeze = False
    precision = _ratio(weights @ counts.relevant, weights @ counts.retrieved)
    recall = _ratio(weights @ counts.covered, (weights @ counts.facts)[:, None])
    return (precision[0], recall[0]) if squeeze else (precision, recall)


def per_query_mean_precision_recall(counts: QueryCounts) -> tuple[np.ndarray, np.ndarray]:
    """Mean over the queries of each query's P@k (queries that retrieved anything) and R@k
    (queries whose pool has facts)."""
    answered = counts.retrieved[:, 0] > 0
    with_facts = counts.facts > 0
    precision = (
        _ratio(counts.relevant[answered], counts.retrieved[answered]).mean(axis=0)
        if answered.any()
        else np.zeros(counts.depth)
    )
    recall = (
        _ratio(counts.covered[with_facts], counts.facts[with_facts][:, None]).mean(axis=0)
        if with_facts.any()
        else np.zeros(counts.depth)
    )
    return precision, recall


def pr_auc(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    """Σ_k (R@k − R@(k−1)) · P@k over the last axis (k = 1..K), R@0 = 0."""
    gains = np.diff(recall, axis=-1, prepend=0.0)
    result: np.ndarray = np.sum(gains * precision, axis=-1)
    return result


def f_beta(precision: np.ndarray, recall: np.ndarray, beta: float) -> np.ndarray:
    """(1 + β²) P R / (β² P + R), 0 where P = R = 0."""
    if beta <= 0:
        raise ValueError(f"beta must be positive, got {beta}")
    squared = beta * beta
    return _ratio((1 + squared) * precision * recall, squared * precision + recall)


def configuration_scores(
    counts: QueryCounts,
    weights: np.ndarray,
    betas: Sequence[float] = DEFAULT_SELECTION_BETAS,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[str, Any]:
    """Every measure of one configuration, with bootstrap intervals from the shared ``weights``."""
    precision, recall = micro_precision_recall(counts)
    mean_precision, mean_recall = per_query_mean_precision_recall(counts)
    resampled_precision, resampled_recall = micro_precision_recall(counts, weights)
    resampled_auc = pr_auc(resampled_precision, resampled_recall)
    queries = len(counts.facts)
    depth = counts.depth
    f_scores = {}
    for beta in betas:
        curve = f_beta(precision, recall, beta)
        best = int(np.argmax(curve)) if depth else 0
        resampled_best = f_beta(resampled_precision, resampled_recall, beta)[:, best] if depth else np.zeros(0)
        f_scores[_beta_key(beta)] = {
            "at_k": _by_k(curve),
            "best": float(curve[best]) if depth else 0.0,
            "best_k": best + 1,
            "interval": percentile_interval(
                float(curve[best]) if depth else 0.0, resampled_best, queries, confidence
            ).to_json(),
        }
    auc = float(pr_auc(precision, recall))
    return {
        "pr_auc": auc,
        "pr_auc_interval": percentile_interval(auc, resampled_auc, queries, confidence).to_json(),
        "precision_at_k": _by_k(precision),
        "recall_at_k": _by_k(recall),
        "precision_at_k_per_query_mean": _by_k(mean_precision),
        "recall_at_k_per_query_mean": _by_k(mean_recall),
        "precision_interval": percentile_interval(
            float(precision[-1]), resampled_precision[:, -1], queries, confidence
        ).to_json()
        if depth
        else None,
        "recall_interval": percentile_interval(
            float(recall[-1]), resampled_recall[:, -1], queries, confidence
        ).to_json()
        if depth
        else None,
        "f_beta": f_scores,
        "resampled_pr_auc": resampled_auc,  # for paired comparisons; dropped before writing
    }


def intervals_overlap(first: Mapping[str, Any], second: Mapping[str, Any]) -> bool:
    """Do two intervals (``{"low", "high"}``, as :meth:`Interval.to_json` writes them) share a
    point? An interval that could not be computed (one query) overlaps everything."""
    if None in (first.get("low"), first.get("high"), second.get("low"), second.get("high")):
        return True
    result: bool = first["low"] <= second["high"] and second["low"] <= first["high"]
    return result


def bootstrap_standard_error(resampled: np.ndarray) -> float:
    """The standard deviation of a measure over the bootstrap resamples (Efron and Tibshirani, ch. 6)."""
    return float(np.std(resampled, ddof=1)) if len(resampled) > 1 else float("nan")


def queries_to_separate(
    difference: float, first_error: float, second_error: float, queries: int, confidence: float = DEFAULT_CONFIDENCE
) -> int | None:
    """Queries in all at which two configurations' intervals would stop overlapping:
    ``ceil(n · (z · (se₁ + se₂) / |d|)²)`` (see the module docstring); None when ``d`` is 0 or
    the errors are unknown."""
    if not difference or not queries or not np.isfinite(first_error + second_error):
        return None
    z = float(stats.norm.ppf((1 + confidence) / 2))
    return int(np.ceil(queries * (z * (first_error + second_error) / abs(difference)) ** 2))


def win_share(first: np.ndarray, second: np.ndarray) -> float:
    """Share of the shared resamples in which ``first`` scores strictly above ``second`` (ties count half)."""
    if not len(first):
        return float("nan")
    return float(np.mean((first > second) + 0.5 * (first == second)))


def _beta_key(beta: float) -> str:
    return f"{beta:g}"


def _by_k(values: np.ndarray) -> dict[str, float]:
    return {str(k): float(value) for k, value in enumerate(values, start=1)}


def main_effects(
    values: Mapping[str, float], settings: Mapping[str, Mapping[str, Any]], levels: Mapping[str, Sequence[Any]]
) -> list[dict[str, Any]]:
    """What changing only one dimension does, on average.

    For each dimension with several levels among the configurations, and each level L: the
    mean of ``values`` over the configurations at L, and the mean change from the dimension's
    reference level (its first level) to L over every pair of configurations that differ in this
    dimension only. On a full grid that change is the difference of the two levels' marginal
    means (a main effect, e.g. Montgomery, 2017, Design and Analysis of Experiments, ch. 5); on
    a staged search it uses the pairs the stages evaluated.
    """
    rows = []
    by_settings = {_frozen(setting): name for name, setting in settings.items()}
    for dimension, ordered in levels.items():
        present = [level for level in ordered if any(s[dimension] == level for s in settings.values())]
        if len(present) < 2:
            continue
        reference = present[0]
        for level in present:
            at_level = [values[name] for name, setting in settings.items() if setting[dimension] == level]
            changes = []
            for name, setting in settings.items():
                if setting[dimension] != reference or level == reference:
                    continue
                partner = by_settings.get(_frozen({**setting, dimension: level}))
                if partner is not None:
                    changes.append(values[partner] - values[name])
            rows.append(
                {
                    "dimension": dimension,
                    "level": level,
                    "reference": reference,
                    "configurations": len(at_level),
                    "mean": float(np.mean(at_level)),
                    "change": float(np.mean(changes)) if changes else (0.0 if level == reference else None),
                    "pairs": len(changes),
                }
            )
    return rows


def _frozen(setting: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((key, str(value)) for key, value in setting.items()))
