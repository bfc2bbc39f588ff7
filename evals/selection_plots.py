"""Figures of a configuration-selection report, rendered to PNG bytes for embedding in HTML
(``matplotlib.figure.Figure`` directly, as ``evals.reports.plots``: thread-safe, no pyplot)."""

from __future__ import annotations

from collections.abc import Mapping

from matplotlib import colormaps
from matplotlib.figure import Figure

from benchsmith.evals.reports.plots import LINE_STYLES, MARKERS, figure_png, literal_text


def precision_recall_curves(curves: Mapping[str, tuple[Mapping[str, float], Mapping[str, float]]]) -> bytes:
    """Precision@k against recall@k (micro, over facts) for k = 1..K, one line per
    configuration, best first; each line starts at k = 1 and its last point is k = K, labelled.

    ``curves``: {configuration: (precision_at_k, recall_at_k)}, each {k as a string: value}.
    """
    figure = Figure(figsize=(9, 5.4), layout="constrained")
    axes = figure.add_subplot()
    handles, labels = [], []
    for index, (configuration, (precision, recall)) in enumerate(curves.items()):
        cutoffs = sorted(precision, key=int)
        xs, ys = [recall[k] for k in cutoffs], [precision[k] for k in cutoffs]
        color = colormaps["tab10" if len(curves) <= 10 else "tab20"](index % 20)
        (line,) = axes.plot(
            xs,
            ys,
            color=color,
            linestyle=LINE_STYLES[index // 10 % len(LINE_STYLES)],
            marker=MARKERS[index % len(MARKERS)],
            markersize=4,
            linewidth=1.6,
        )
        if xs:
            axes.annotate(
                f"k={cutoffs[-1]}", (xs[-1], ys[-1]), textcoords="offset points", xytext=(4, 4), fontsize=7, color=color
            )
        handles.append(line)
        labels.append(literal_text(configuration))
    axes.set_xlim(0, 1.02)
    axes.set_ylim(0, 1.02)
    axes.set_xlabel("recall@k over facts (micro)")
    axes.set_ylabel("precision@k (micro)")
    axes.set_title("Precision–recall curves, k = 1..K")
    axes.grid(True, alpha=0.3)
    figure.legend(
        handles,
        labels,
        loc="outside right upper" if len(labels) <= 8 else "outside lower center",
        fontsize=8,
        frameon=False,
        ncols=1 if len(labels) <= 8 else 3,
    )
    return figure_png(figure)
