"""Figures of a benchmark audit report, each rendered to PNG bytes for embedding in HTML.

Built on ``matplotlib.figure.Figure`` directly, as ``evals.reports.plots`` builds its figures: no
global figure manager, no interactive backend, thread-safe rendering.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise
from typing import Any

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from benchsmith.evals.reports.plots import figure_png, literal_text

SCORES = (1, 2, 3, 4, 5)  # the judges' scale, 5 best
SUBPLOT_WIDTH = 3.6  # inches per dimension
GOLD_COLOR, CHOICE_COLOR = colormaps["tab10"](0), colormaps["tab10"](1)


def score_distributions(dimensions: Mapping[str, Mapping[str, Any]]) -> bytes:
    """How many instances got each score, one subplot per judged dimension.

    ``dimensions``: {dimension: {"label", "mean", "distribution": {score as a string: count}}};
    a score is the judges' mean for an instance, rounded to the nearest integer.
    """
    figure = Figure(figsize=(0.6 + SUBPLOT_WIDTH * len(dimensions), 3.8), layout="constrained")
    # One y scale for all: dimensions scored on the same instances compare bar for bar.
    subplots = figure.subplots(1, len(dimensions), sharey=True, squeeze=False)[0]
    tallest = max(
        (count for dimension in dimensions.values() for count in dimension["distribution"].values()), default=0
    )
    palette = colormaps["tab10"]
    for index, (axes, dimension) in enumerate(zip(subplots, dimensions.values())):
        counts = [int(dimension["distribution"].get(str(score), 0)) for score in SCORES]
        bars = axes.bar(SCORES, counts, color=palette(index % palette.N), width=0.7)
        axes.bar_label(bars, fontsize=8, padding=2)
        axes.set_xticks(SCORES)
        axes.set_xlabel("score (5 = best)")
        axes.set_title(literal_text(f"{dimension['label']}\nmean {dimension['mean']:.2f}"), fontsize=10)
        axes.grid(True, axis="y", alpha=0.3)
        axes.set_axisbelow(True)
    subplots[0].set_ylabel("instances")
    subplots[0].set_ylim(0, max(tallest, 1) * 1.15)  # room for the count above the tallest bar
    return figure_png(figure)


def position_counts(gold_counts: Mapping[str, int], choice_counts: Mapping[str, int], pool_size: int) -> bytes:
    """Where in the shuffled pool the gold document was shown against where the judges' picks
    fell, each as shares of its total (with several judges, picks outnumber instances), bars
    labelled with the counts. The gold's slots are shuffled, so near uniform: picks far less
    even than that hint at judges that follow the position rather than the content."""
    seen = [int(slot) for slot in (*gold_counts, *choice_counts)]
    slots = [str(slot) for slot in range(1, max([pool_size, 1, *seen]) + 1)]
    figure = Figure(figsize=(min(9.0, 3.5 + 0.9 * len(slots)), 4.2), layout="constrained")
    axes = figure.add_subplot()
    positions = np.arange(len(slots))
    uniform = 1 / len(slots)
    highest = uniform
    for by_slot, offset, color, label in (
        (gold_counts, -0.2, GOLD_COLOR, "gold document shown here"),
        (choice_counts, 0.2, CHOICE_COLOR, "judges' pick here"),
    ):
        counts = np.array([by_slot.get(slot, 0) for slot in slots], dtype=int)
        shares = counts / counts.sum() if counts.sum() else counts.astype(float)
        highest = max(highest, float(shares.max()))
        bars = axes.bar(positions + offset, shares, width=0.4, color=color, label=label)
        axes.bar_label(bars, labels=[str(count) for count in counts], fontsize=8, padding=2)
    axes.axhline(uniform, color="#57606a", linestyle="--", linewidth=1, label="uniform")
    axes.set_xticks(positions, slots)
    axes.set_xlabel("position in the pool")
    axes.set_ylabel("share")
    axes.yaxis.set_major_formatter("{x:.0%}")
    axes.set_ylim(0, highest * 1.2)  # room for the counts above the bars
    axes.set_title("Gold document and judges' picks by position")
    axes.grid(True, axis="y", alpha=0.3)
    axes.set_axisbelow(True)
    figure.legend(loc="outside right upper", fontsize=8, frameon=False)
    return figure_png(figure)


def overlap_histograms(histogram: Mapping[str, Any], reference: Mapping[str, Any], reference_label: str) -> bytes:
    """The benchmark's lexical overlap histogram beside the human reference's, each bin as a
    share of its turns (the two sets differ in size), counts on the bars. Overlap is the share
    of a question's content-word stems found in its gold passage: mass near 1 means questions
    copy their gold."""
    edges = [float(edge) for edge in histogram["edges"]]
    labels = [f"{low:.1f}–{high:.1f}" for low, high in pairwise(edges)]
    figure = Figure(figsize=(8.0, 4.0), layout="constrained")
    axes = figure.add_subplot()
    positions = np.arange(len(labels))
    highest = 0.0
    for counts, offset, color, label in (
        (histogram["counts"], -0.2, GOLD_COLOR, "this benchmark"),
        (reference["counts"], 0.2, CHOICE_COLOR, reference_label),
    ):
        values = np.array([int(count) for count in counts], dtype=int)
        shares = values / values.sum() if values.sum() else values.astype(float)
        highest = max(highest, float(shares.max(initial=0.0)))
        bars = axes.bar(positions + offset, shares, width=0.4, color=color, label=literal_text(label))
        axes.bar_label(bars, labels=[str(count) for count in values], fontsize=8, padding=2)
    axes.set_xticks(positions, labels, rotation=30, fontsize=8)
    axes.set_xlabel("lexical overlap of a question with its gold passage")
    axes.set_ylabel("share of turns")
    axes.yaxis.set_major_formatter("{x:.0%}")
    axes.set_ylim(0, max(highest, 0.05) * 1.2)  # room for the counts above the bars
    axes.set_title("Lexical overlap: this benchmark and human questions")
    axes.grid(True, axis="y", alpha=0.3)
    axes.set_axisbelow(True)
    figure.legend(loc="outside right upper", fontsize=8, frameon=False)
    return figure_png(figure)
