"""The measures of multi-condition retrieval with hard negatives (MultiConIR: Lu et al., 2025,
"MultiConIR: Towards multi-condition Information Retrieval", arXiv:2503.08046; definitions as
in the metric scripts of github.com/EIT-NLP/MultiConIR, evaluation/metrics/task1-3).

Every measure reads a score table: one row per dataset row (a source document), one column
per (query, candidate) pair, higher = more relevant. Each function first computes the value of
every row, then aggregates (the mean over rows), so that intervals resample rows.

* Task 1, complexity robustness: for the query with k conditions, does the positive (meets
  all k) outscore the single-miss negative (misses exactly one of the k)?
* Task 2, relevance monotonicity: with the query of all N conditions, does each document
  outscore the next one down the graded ladder Positive, HN1, …, HN_N (HN_j misses
  conditions 1..j)?
* Task 3, format sensitivity: how often does a Task 2 outcome change when the instruction-style
  query is replaced by the descriptive-style one?

A tie counts as a loss everywhere (the reference scripts compare with a strict ``>``): a model
that gives every document the same score wins nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from benchsmith.evals.defaults import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES
from benchsmith.evals.measures.intervals import bootstrap_interval

ArrayLike = Sequence[Sequence[float]] | np.ndarray


def _matrix(values: ArrayLike, name: str) -> np.ndarray:
    matrix = np.asarray(values, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(f"{name}: expected a rows × columns table, got shape {matrix.shape}")
    if np.isnan(matrix).any():
        raise ValueError(f"{name}: the table has missing (NaN) scores")
    return matrix


def strict_wins(higher: ArrayLike, lower: ArrayLike) -> np.ndarray:
    """Per cell, 1.0 where ``higher`` > ``lower`` and 0.0 otherwise: win(a, b) = [a > b],
    a tie (a = b) loses (Lu et al., 2025; the reference scripts' ``df[a] > df[b]``)."""
    a, b = _matrix(higher, "higher"), _matrix(lower, "lower")
    if a.shape != b.shape:
        raise ValueError(f"tables of different shapes: {a.shape} and {b.shape}")
    return (a > b).astype(float)


# ---------------------------------------------------------------------------------------
# Task 1: complexity robustness.


def task1_wins(positive: ArrayLike, negative: ArrayLike) -> np.ndarray:
    """Rows × K: w_{r,k} = [s(Q_k, P_r) > s(Q_k, N_{r,k})], the positive of row r against its
    single-miss negative for the query with k conditions (Lu et al., 2025, Task 1)."""
    return strict_wins(positive, negative)


def task1_win_rates(positive: ArrayLike, negative: ArrayLike) -> list[float]:
    """Win rate per k: WR_k = (1/R) Σ_r [s(Q_k, P_r) > s(Q_k, N_{r,k})], ties lose (Lu et al.,
    2025, Task 1; task1_complexity_robustness.py: ``(df[Query{k}_Positive] > df[Query{k}_HN1]).mean()``)."""
    return [float(rate) for rate in task1_wins(positive, negative).mean(axis=0)]


def task1_tie_rates(positive: ArrayLike, negative: ArrayLike) -> list[float]:
    """Share of rows per k where the two scores are equal, T_k = (1/R) Σ_r [s(Q_k, P_r) = s(Q_k, N_{r,k})]:
    the part of 1 − WR_k that is not a preference for the negative (e.g. a change the scorer
    cannot see: a sentence past a dense model's input window, a word its tokenizer drops)."""
    a, b = _matrix(positive, "positive"), _matrix(negative, "negative")
    if a.shape != b.shape:
        raise ValueError(f"tables of different shapes: {a.shape} and {b.shape}")
    return [float(rate) for rate in (a == b).mean(axis=0)]


def task1_differences(positive: ArrayLike, negative: ArrayLike) -> np.ndarray:
    """Rows × K: d_{r,k} = s(Q_k, P_r) − s(Q_k, N_{r,k})."""
    a, b = _matrix(positive, "positive"), _matrix(negative, "negative")
    if a.shape != b.shape:
        raise ValueError(f"tables of different shapes: {a.shape} and {b.shape}")
    result: np.ndarray = a - b
    return result


def task1_mean_differences(positive: ArrayLike, negative: ArrayLike) -> list[float]:
    """Mean score difference per k: D_k = (1/R) Σ_r (s(Q_k, P_r) − s(Q_k, N_{r,k})) (Lu et al.,
    2025; task1_complexity_robustness.py's ``Query{k}_AvgDiff``). In the scorer's own units:
    compare it across k, not across scorers."""
    return [float(value) for value in task1_differences(positive, negative).mean(axis=0)]


# ---------------------------------------------------------------------------------------
# Task 2: relevance monotonicity.


def ladder_pair_names(negatives: int) -> list[str]:
    """``Positive_vs_HN1``, ``HN1_vs_HN2``, …, ``HN{N-1}_vs_HN{N}`` (the reference's names)."""
    names = ["Positive", *[f"HN{j}" for j in range(1, negatives + 1)]]
    return [f"{first}_vs_{second}" for first, second in pairwise(names)]


def monotonicity_wins(ladder: ArrayLike) -> np.ndarray:
    """Rows × N from a rows × (N + 1) table whose columns are s(Q_N, P), s(Q_N, HN_1), …,
    s(Q_N, HN_N): m_{r,i} = [s_{r,i} > s_{r,i+1}], i = 0..N−1, ties lose (Lu et al., 2025, Task 2)."""
    scores = _matrix(ladder, "ladder")
    if scores.shape[1] < 2:
        raise ValueError("a ladder needs the positive and at least one hard negative")
    return (scores[:, :-1] > scores[:, 1:]).astype(float)


def monotonicity_win_rates(ladder: ArrayLike) -> dict[str, float]:
    """Win rate of every adjacent pair of the ladder: MR_i = (1/R) Σ_r [s_{r,i} > s_{r,i+1}]
    (Lu et al., 2025, Task 2; task2_relevance_monotonicity.py), keyed by :func:`ladder_pair_names`."""
    wins = monotonicity_wins(ladder)
    return dict(zip(ladder_pair_names(wins.shape[1]), (float(rate) for rate in wins.mean(axis=0))))


# ---------------------------------------------------------------------------------------
# Task 3: format sensitivity.


def format_flips(instruction_ladder: ArrayLike, descriptive_ladder: ArrayLike) -> np.ndarray:
    """Rows × N: f_{r,i} = 1 where the Task 2 outcome of pair i in row r differs between the
    instruction-style and the descriptive-style query, m^inst_{r,i} ≠ m^desc_{r,i} (Lu et al., 2025, Task 3)."""
    instruction, descriptive = monotonicity_wins(instruction_ladder), monotonicity_wins(descriptive_ladder)
    if instruction.shape != descriptive.shape:
        raise ValueError(
            f"instruction and descriptive tables differ in shape: {instruction.shape} and {descriptive.shape}"
        )
    result: np.ndarray = (instruction != descriptive).astype(float)
    return result


def row_flip_rates(instruction_ladder: ArrayLike, descriptive_ladder: ArrayLike) -> np.ndarray:
    """Per row, the share of its N pairs whose outcome flips: c_r = (1/N) Σ_i f_{r,i}."""
    result: np.ndarray = format_flips(instruction_ladder, descriptive_ladder).mean(axis=1)
    return result


def change_rate(instruction_ladder: ArrayLike, descriptive_ladder: ArrayLike) -> float:
    """The change (flip) rate: C = Σ_{r,i} f_{r,i} / (R · N), the share of (row, pair) outcomes
    that differ between the two query styles (Lu et al., 2025, Task 3;
    task3_format_invariant.py's ``compute_change_rate``). Every row has N pairs, so C is
    also the mean over rows of c_r (:func:`row_flip_rates`)."""
    flips = format_flips(instruction_ladder, descriptive_ladder)
    return float(flips.mean()) if flips.size else 0.0


# ---------------------------------------------------------------------------------------
# Summaries with bootstrap intervals over rows.


def _interval(values: np.ndarray, confidence: float, resamples: int, seed: int) -> dict[str, Any]:
    return bootstrap_interval(values, confidence=confidence, resamples=resamples, seed=seed).to_json()


def task1_summary(
    positive: ArrayLike,
    negative: ArrayLike,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, Any]:
    """``{"win_rate": {k: interval}, "avg_diff": {k: interval}, "tie_rate": {k: share}}`` (k as a
    string from "1"), each interval a percentile bootstrap over rows of the per-row values."""
    wins, differences = task1_wins(positive, negative), task1_differences(positive, negative)
    keys = [str(k) for k in range(1, wins.shape[1] + 1)]
    return {
        "win_rate": {key: _interval(wins[:, i], confidence, resamples, seed) for i, key in enumerate(keys)},
        "avg_diff": {key: _interval(differences[:, i], confidence, resamples, seed) for i, key in enumerate(keys)},
        "tie_rate": dict(zip(keys, task1_tie_rates(positive, negative))),
    }


def task2_summary(
    ladder: ArrayLike, confidence: float = DEFAULT_CONFIDENCE, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> dict[str, Any]:
    """``{"pairs": {pair name: interval}}``, bootstrap over rows."""
    wins = monotonicity_wins(ladder)
    return {
        "pairs": {
            name: _interval(wins[:, i], confidence, resamples, seed)
            for i, name in enumerate(ladder_pair_names(wins.shape[1]))
        }
    }


def task3_summary(
    instruction_ladder: ArrayLike,
    descriptive_ladder: ArrayLike,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, Any]:
    """``{"change_rate": interval, "pairs": {pair name: flip rate}}``; the interval resamples rows
    of c_r, whose mean is the pooled change rate."""
    flips = format_flips(instruction_ladder, descriptive_ladder)
    return {
        "change_rate": _interval(flips.mean(axis=1), confidence, resamples, seed),
        "pairs": {name: float(rate) for name, rate in zip(ladder_pair_names(flips.shape[1]), flips.mean(axis=0))},
    }


def reference_json(
    task1: tuple[ArrayLike, ArrayLike] | None = None,
    task2: ArrayLike | None = None,
    task3: tuple[ArrayLike, ArrayLike] | None = None,
) -> dict[str, Any]:
    """The measures with exactly the reference's keys: ``task1.win_rate`` and ``task1.avg_diff``
    ({"1": …, "K": …}), ``task2.pairs`` ({"Positive_vs_HN1": …}), ``task3.change_rate``; a task
    not given is left out. ``task3`` is (instruction ladder, descriptive ladder)."""
    result: dict[str, Any] = {}
    if task1 is not None:
        rates, differences = task1_win_rates(*task1), task1_mean_differences(*task1)
        result["task1"] = {
            "win_rate": {str(k): rate for k, rate in enumerate(rates, start=1)},
            "avg_diff": {str(k): value for k, value in enumerate(differences, start=1)},
        }
    if task2 is not None:
        result["task2"] = {"pairs": monotonicity_win_rates(task2)}
    if task3 is not None:
        result["task3"] = {"change_rate": change_rate(*task3)}
    return result


def worst_task1_cells(positive: ArrayLike, negative: ArrayLike, count: int) -> list[tuple[int, int, float]]:
    """The ``count`` (row, k, margin) cells where the single-miss negative beat or tied the positive
    by the largest margin s(Q_k, N) − s(Q_k, P) ≥ 0, at most one per row (its worst k); k from 1."""
    differences = -task1_differences(positive, negative)
    worst = []
    for row, margins in enumerate(differences):
        k = int(np.argmax(margins))
        if margins[k] >= 0:
            worst.append((row, k + 1, float(margins[k])))
    return sorted(worst, key=lambda cell: (-cell[2], cell[0]))[:count]


def worst_ladder_cells(ladder: ArrayLike, count: int) -> list[tuple[int, int, float]]:
    """The ``count`` (row, pair index i from 0, margin) where the less relevant document of pair i
    beat or tied the more relevant one by the largest margin s_{i+1} − s_i ≥ 0, one per row."""
    scores = _matrix(ladder, "ladder")
    margins = scores[:, 1:] - scores[:, :-1]
    worst = []
    for row, row_margins in enumerate(margins):
        i = int(np.argmax(row_margins))
        if row_margins[i] >= 0:
            worst.append((row, i, float(row_margins[i])))
    return sorted(worst, key=lambda cell: (-cell[2], cell[0]))[:count]
