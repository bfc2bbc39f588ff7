"""Figures of a multi-condition hard-negative report, each rendered to PNG bytes for embedding in
HTML (built on ``matplotlib.figure.Figure`` directly, as ``evals.reports.plots`` builds its figures)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from benchsmith.evals.reports.plots import MARKERS, figure_png, literal_text

# {scorer: {key: {"mean", "low", "high", "n"}}}: intervals by k (Task 1) or by pair (Task 2).
IntervalsByScorer = Mapping[str, Mapping[str, Mapping[str, Any]]]


def _bands(axes: Any, intervals: IntervalsByScorer, keys: list[str]) -> None:
    palette = colormaps["tab10"]
    positions = np.arange(len(keys))
    for index, (scorer, by_key) in enumerate(intervals.items()):
        color = palette(index % palette.N)
        means = np.array([by_key[key]["mean"] for key in keys], dtype=float)
        low = np.array([np.nan if by_key[key]["low"] is None else by_key[key]["low"] for key in keys], dtype=float)
        high = np.array([np.nan if by_key[key]["high"] is None else by_key[key]["high"] for key in keys], dtype=float)
        axes.plot(
            positions,
            means,
            color=color,
            marker=MARKERS[index % len(MARKERS)],
            markersize=4,
            linewidth=1.6,
            label=literal_text(scorer),
        )
        axes.fill_between(positions, low, high, color=color, alpha=0.15, linewidth=0)
    axes.set_ylim(-0.02, 1.02)
    axes.axhline(0.5, color="#888888", linewidth=0.8, linestyle=":")
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize=8, frameon=False, loc="lower left")


def win_rate_by_conditions(intervals: IntervalsByScorer) -> bytes:
    """Task 1: win rate against the number of conditions k, one line per scorer, its bootstrap
    interval shaded; the dotted line is a coin flip."""
    keys = sorted({key for by_key in intervals.values() for key in by_key}, key=int)
    figure = Figure(figsize=(8.5, 4.6), layout="constrained")
    axes = figure.add_subplot()
    _bands(axes, intervals, keys)
    axes.set_xticks(np.arange(len(keys)), keys)
    axes.set_xlabel("conditions in the query (k)")
    axes.set_ylabel("win rate: positive > single-miss negative")
    axes.set_title("Task 1: complexity robustness")
    return figure_png(figure)


def monotonicity_ladder(intervals: IntervalsByScorer) -> bytes:
    """Task 2: the win rate of every adjacent pair of the ladder with the query of all conditions."""
    keys = list(next(iter(intervals.values())).keys())
    figure = Figure(figsize=(9, 4.6), layout="constrained")
    axes = figure.add_subplot()
    _bands(axes, intervals, keys)
    axes.set_xticks(
        np.arange(len(keys)),
        [key.replace("_vs_", ">") for key in keys],
        rotation=35,
        ha="right",
        rotation_mode="anchor",
    )
    axes.set_xlabel("adjacent pair of the ladder (more relevant > less relevant)")
    axes.set_ylabel("win rate")
    axes.set_title("Task 2: relevance monotonicity")
    return figure_png(figure)


def flip_rates(intervals: Mapping[str, Mapping[str, Any]]) -> bytes:
    """Task 3: each scorer's change rate between query styles, with its bootstrap interval."""
    scorers = list(intervals)
    figure = Figure(figsize=(max(5.0, 1.2 + 1.1 * len(scorers)), 4.0), layout="constrained")
    axes = figure.add_subplot()
    palette = colormaps["tab10"]
    means = [intervals[scorer]["mean"] for scorer in scorers]
    lows = [
        intervals[scorer]["low"] if intervals[scorer]["low"] is not None else intervals[scorer]["mean"]
        for scorer in scorers
    ]
    highs = [
        intervals[scorer]["high"] if intervals[scorer]["high"] is not None else intervals[scorer]["mean"]
        for scorer in scorers
    ]
    errors = np.array(
        [[mean - low for mean, low in zip(means, lows)], [high - mean for mean, high in zip(means, highs)]]
    )
    axes.bar(
        np.arange(len(scorers)),
        means,
        color=[palette(i % palette.N) for i in range(len(scorers))],
        yerr=np.clip(errors, 0, None),
        capsize=4,
        width=0.6,
    )
    axes.set_xticks(
        np.arange(len(scorers)),
        [literal_text(scorer) for scorer in scorers],
        rotation=20,
        ha="right",
        rotation_mode="anchor",
    )
    axes.set_ylim(0, max(0.25, max(highs, default=0) * 1.15))
    axes.set_ylabel("change rate")
    axes.set_title("Task 3: outcomes that flip between query styles")
    axes.grid(True, axis="y", alpha=0.3)
    axes.set_axisbelow(True)
    return figure_png(figure)
