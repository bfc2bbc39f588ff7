"""Figures of the paraphrase report, rendered to PNG bytes (thread-safe ``Figure`` objects,
as in evals/reports/plots.py)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from benchsmith.evals.reports.plots import figure_png, literal_text

BLEU_LABELS = {
    "bleu_self_contained": "self-contained variants\nvs the turn's self-contained form",
    "bleu_raw": "raw variants\nvs the raw utterance",
    "bleu_rewrite_vs_raw": "the self-contained form\nvs the raw utterance",
}


def bleu_bars(groups: Mapping[str, Mapping[str, float | None]]) -> bytes:
    """Grouped bars of the three corpus-BLEU figures (0-100), one bar per group of variants
    (all kept, generated before and after filtering); a figure without data leaves a gap."""
    figure = Figure(figsize=(9, 4.6), layout="constrained")
    axes = figure.add_subplot()
    keys = list(BLEU_LABELS)
    positions = np.arange(len(keys))
    width = 0.8 / max(len(groups), 1)
    palette = colormaps["tab10"]
    for index, (label, figures) in enumerate(groups.items()):
        values = [figures.get(key) for key in keys]
        heights = [np.nan if value is None else value for value in values]
        bars = axes.bar(
            positions - 0.4 + width * (index + 0.5),
            heights,
            width=width,
            color=palette(index),
            label=literal_text(label),
        )
        axes.bar_label(bars, labels=["" if value is None else f"{value:.1f}" for value in values], fontsize=8)
    axes.set_xticks(positions, [BLEU_LABELS[key] for key in keys])
    axes.set_ylim(0, 105)
    axes.set_ylabel("corpus BLEU (0-100; lower = more diverse)")
    axes.set_title("Diversity of the variants")
    axes.grid(True, axis="y", alpha=0.3)
    axes.set_axisbelow(True)
    figure.legend(loc="outside right upper", fontsize=8, frameon=False)
    return figure_png(figure)


def filter_outcomes(kept: int, dropped: Mapping[str, int]) -> bytes:
    """Horizontal bars: generated variants kept, and dropped by each filter."""
    labels = ["kept", *(literal_text(reason) for reason in dropped)]
    counts = [kept, *dropped.values()]
    figure = Figure(figsize=(8, 1.2 + 0.45 * len(labels)), layout="constrained")
    axes = figure.add_subplot()
    colors = ["#2e7d32", *["#c62828"] * len(dropped)]
    bars = axes.barh(labels[::-1], counts[::-1], color=colors[::-1])
    axes.bar_label(bars, fontsize=8, padding=2)
    axes.set_xlabel("generated variants")
    axes.set_title("What the filters kept and dropped")
    axes.set_xlim(0, max(counts, default=1) * 1.15 + 1)
    return figure_png(figure)
