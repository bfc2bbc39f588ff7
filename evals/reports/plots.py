"""Figures of an evaluation report, each rendered to PNG bytes for embedding in HTML.

Figures are built on ``matplotlib.figure.Figure`` directly rather than through pyplot: such
a figure belongs to no global figure manager, so rendering is thread-safe, needs no
interactive backend, and the figure is freed as soon as it goes out of scope.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Colormap, TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, NullLocator
from matplotlib.transforms import Bbox

from benchsmith.evals.measures.breakdown import SWITCH_ORDER

DPI = 110
LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
MISSING_CELL_COLOR = "#e8e8e8"
LEGEND_BESIDE_MAX = 8  # configurations; more are listed below the plot
P_ANNOTATED_MAX = 8  # configurations whose significance matrix cells also fit the corrected p
ANNOTATED_MAX = 14  # configurations whose significance matrix cells still fit the difference
# Where a point's label may go, in points from the point (right, left, above, below, the diagonals),
# tried at growing distances until the label overlaps no other label and no marker.
LABEL_OFFSETS = ((5, -4), (-5, -4), (-3, 5), (-3, -13), (5, 4), (-5, 4), (5, -12), (-5, -12))
LABEL_RINGS = (1, 2, 3, 4, 6)
MARKER_HALF_WIDTH = 5  # pixels around a marker's centre that no label may cover

# Mean over the queries of a group, by measure, plus "queries": {configuration: {group: {...}}}.
ByGroup = Mapping[str, Mapping[str, Mapping[str, float]]]


def recall_curves(recall_curve: Mapping[str, Mapping[str, float]]) -> bytes:
    """Mean recall@k against k on a log axis, one line per configuration.

    ``recall_curve``: {configuration: {cutoff as a string: mean recall}}.
    """
    figure = Figure(figsize=(9, 5.2), layout="constrained")
    axes = figure.add_subplot()
    cutoffs: set[int] = set()
    handles, labels = [], []
    for index, (configuration, curve) in enumerate(recall_curve.items()):
        points = sorted((int(cutoff), value) for cutoff, value in curve.items())
        cutoffs.update(k for k, _ in points)
        # Past ten lines the palette pairs similar hues, so each further ten gets its own dashes.
        style = LINE_STYLES[index // 10 % len(LINE_STYLES)]
        (line,) = axes.plot(
            [k for k, _ in points],
            [value for _, value in points],
            color=_color(index, len(recall_curve)),
            linestyle=style,
            marker=MARKERS[index % len(MARKERS)],
            markersize=4,
            linewidth=1.6,
        )
        handles.append(line)
        labels.append(literal_text(configuration))
    axes.set_xscale("log")
    # Label exactly the measured cutoffs: a log axis would otherwise show 10^0, 10^1, ...
    axes.xaxis.set_major_locator(FixedLocator(sorted(cutoffs)))
    axes.xaxis.set_minor_locator(NullLocator())
    axes.set_xticklabels([str(k) for k in sorted(cutoffs)])
    axes.set_ylim(0, 1.02)
    axes.set_xlabel("cutoff k (log scale)")
    axes.set_ylabel("mean recall@k")
    axes.set_title("Recall@k")
    axes.grid(True, which="major", alpha=0.3)
    legend_outside(figure, handles, labels)
    return figure_png(figure)


def group_bars(by_group: ByGroup, measure: str, title: str) -> bytes:
    """Grouped bars of ``measure``: groups (turn indices, switch types) on x, one bar per
    configuration. A configuration without a group leaves a gap, not a zero bar."""
    configurations = list(by_group)
    groups = ordered_groups(by_group)
    # Wide enough for the bars, narrow enough that the HTML page shows the figure unscaled.
    figure = Figure(figsize=(min(10, max(7, 3 + 0.22 * len(groups) * len(configurations))), 4.8), layout="constrained")
    axes = figure.add_subplot()
    width = 0.8 / max(len(configurations), 1)
    positions = np.arange(len(groups))
    handles, labels = [], []
    for index, configuration in enumerate(configurations):
        values = [by_group[configuration].get(group, {}).get(measure, math.nan) for group in groups]
        offsets = positions - 0.4 + width * (index + 0.5)
        bars = axes.bar(
            offsets, values, width=width, color=_color(index, len(configurations)), edgecolor="white", linewidth=0.4
        )
        handles.append(bars)
        labels.append(literal_text(configuration))
    axes.set_xticks(positions, [f"{literal_text(group)}\nn={group_query_count(by_group, group)}" for group in groups])
    axes.set_ylim(0, max(1.0, _finite_max(by_group, measure)) * 1.02)
    axes.set_ylabel(f"mean {literal_text(measure)}")
    axes.set_title(literal_text(title))
    axes.grid(True, axis="y", alpha=0.3)
    axes.set_axisbelow(True)
    legend_outside(figure, handles, labels)
    return figure_png(figure)


def significance_matrix(comparisons: Sequence[Mapping[str, Any]], configurations: Sequence[str], measure: str) -> bytes:
    """Mean difference (row − column) of ``measure`` for every pair of configurations, as a
    diverging heat map; ``*`` marks a difference significant after the multiple-comparison
    correction. Pairs without a comparison are grey."""
    size = len(configurations)
    position = {name: index for index, name in enumerate(configurations)}
    difference = np.full((size, size), np.nan)
    adjusted = np.full((size, size), np.nan)
    significant = np.zeros((size, size), dtype=bool)
    for comparison in comparisons:
        if comparison["measure"] != measure or not {comparison["first"], comparison["second"]} <= position.keys():
            continue
        row, column = position[comparison["first"]], position[comparison["second"]]
        # The matrix is antisymmetric: the pair (a, b) also fills (b, a) with the sign flipped.
        for (i, j), sign in (((row, column), 1.0), ((column, row), -1.0)):
            difference[i, j] = sign * comparison["mean_difference"]
            adjusted[i, j] = comparison["p_adjusted"]
            significant[i, j] = bool(comparison["significant"])

    side = min(9.0, 3.5 + 0.6 * size)  # at most what the HTML page shows unscaled
    figure = Figure(figsize=(side + 1.5, side), layout="constrained")
    axes = figure.add_subplot()
    largest = float(np.nanmax(np.abs(difference))) if np.isfinite(difference).any() else 0.0
    norm = TwoSlopeNorm(vcenter=0.0, vmin=-max(largest, 1e-9), vmax=max(largest, 1e-9))
    colormap: Colormap = colormaps["RdBu"].with_extremes(bad=MISSING_CELL_COLOR)
    image = axes.imshow(np.ma.masked_invalid(difference), cmap=colormap, norm=norm)
    labels = [literal_text(name) for name in configurations]
    axes.set_xticks(range(size), labels, rotation=40, ha="right", rotation_mode="anchor")
    axes.set_yticks(range(size), labels)
    axes.set_xlabel("column configuration")
    axes.set_ylabel("row configuration")
    axes.set_title(f"{literal_text(measure)}: row − column (* significant after correction)")
    _annotate_cells(axes, difference, adjusted, significant, norm)
    figure.colorbar(image, ax=axes, shrink=0.8, label=f"mean difference in {literal_text(measure)}")
    return figure_png(figure)


def ordered_groups(by_group: ByGroup) -> list[str]:
    """Every group of any configuration in natural order: turn indices ascending, switch
    types in conversation order, anything else as first seen. Sorting (rather than taking
    one configuration's order) keeps the order right when configurations cover different groups."""
    first_seen: dict[str, int] = {}
    for groups in by_group.values():
        for group in groups:
            first_seen.setdefault(group, len(first_seen))

    def order(group: str) -> tuple[int, int]:
        if group.isdigit():
            return (0, int(group))
        if group in SWITCH_ORDER:
            return (1, SWITCH_ORDER.index(group))
        return (2, first_seen[group])

    return sorted(first_seen, key=order)


def group_query_count(by_group: ByGroup, group: str) -> int:
    """Queries in ``group``: every configuration scores the same queries, so the first that has it says."""
    return next((int(groups[group].get("queries", 0)) for groups in by_group.values() if group in groups), 0)


def annotate_apart(
    axes: Axes, points: Sequence[tuple[float, float]], texts: Sequence[str], font_size: float = 8
) -> list[Any]:
    """Label each point with its text where it covers no other label and no marker: the offsets
    of LABEL_OFFSETS are tried point by point, nearest first, at growing distances (LABEL_RINGS),
    and a label moved away from its point is joined to it by a thin line; where every place
    collides, the one with the least overlap is kept. The figure's layout is settled first (and
    then frozen), so that the boxes measured are the ones drawn."""
    figure = axes.get_figure()
    if not isinstance(figure, Figure):
        raise TypeError("labels are placed on the axes of a figure of their own, not of a subfigure")
    renderer = FigureCanvasAgg(figure).get_renderer()  # type: ignore[no-untyped-call]  # matplotlib's stubs
    figure.draw(renderer)  # runs the layout engine: axes positions are final from here on
    figure.set_layout_engine("none")
    centres = [axes.transData.transform(point) for point in points]
    taken = [
        Bbox.from_extents(x - MARKER_HALF_WIDTH, y - MARKER_HALF_WIDTH, x + MARKER_HALF_WIDTH, y + MARKER_HALF_WIDTH)
        for x, y in centres
    ]
    placed = []
    for point, text in zip(points, texts):
        annotation, box = _least_overlapping(axes, point, literal_text(text), font_size, taken, renderer)
        taken.append(box)
        placed.append(annotation)
    return placed


def _least_overlapping(
    axes: Axes, point: tuple[float, float], text: str, font_size: float, taken: list[Bbox], renderer: Any
) -> tuple[Any, Bbox]:
    best: tuple[float, Any, Bbox] | None = None
    inside = axes.get_window_extent(renderer)
    for ring in LABEL_RINGS:
        for dx, dy in LABEL_OFFSETS:
            annotation = axes.annotate(
                text,
                point,
                xytext=(dx * ring, dy * ring),
                textcoords="offset points",
                fontsize=font_size,
                va="bottom",
                ha="left" if dx >= 0 else "right",
                arrowprops={"arrowstyle": "-", "color": "#888888", "linewidth": 0.5} if ring > 1 else None,
            )
            box = annotation.get_window_extent(renderer)
            overlap = sum(_overlap_area(box, other) for other in taken) + (0 if _contains(inside, box) else 1e6)
            if best is None or overlap < best[0]:
                if best is not None:
                    best[1].remove()
                best = (overlap, annotation, box)
            else:
                annotation.remove()
            if overlap == 0:
                return best[1], best[2]
    assert best is not None
    return best[1], best[2]


def _overlap_area(first: Bbox, second: Bbox) -> float:
    width = min(first.x1, second.x1) - max(first.x0, second.x0)
    height = min(first.y1, second.y1) - max(first.y0, second.y0)
    return width * height if width > 0 and height > 0 else 0.0


def _contains(outer: Bbox, inner: Bbox) -> bool:
    result: bool = outer.x0 <= inner.x0 and inner.x1 <= outer.x1 and outer.y0 <= inner.y0 and inner.y1 <= outer.y1
    return result


def literal_text(text: str) -> str:
    """``text`` shown literally: matplotlib typesets text between two ``$`` as a formula, and
    a configuration name like ``cost$5-$10`` is not one (invalid mathtext even fails to draw)."""
    return str(text).replace("$", r"\$")


def figure_png(figure: Figure) -> bytes:
    """The figure as PNG bytes at the reports' resolution, cropped to what it draws."""
    buffer = io.BytesIO()
    # No "Software" chunk: it names the matplotlib version, so identical results would give different bytes.
    figure.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    return buffer.getvalue()


def _annotate_cells(
    axes: Axes, difference: np.ndarray, adjusted: np.ndarray, significant: np.ndarray, norm: TwoSlopeNorm
) -> None:
    """Write into each cell as much as fits: the difference and the corrected p, then the
    difference alone, then only the significance star (the table below has every number)."""
    size = len(difference)
    for i, j in zip(*np.nonzero(np.isfinite(difference))):
        star = "*" if significant[i, j] else ""
        if size <= P_ANNOTATED_MAX:
            text, font_size = f"{difference[i, j]:+.3f}{star}\np={adjusted[i, j]:.3g}", 9
        elif size <= ANNOTATED_MAX:
            text, font_size = f"{difference[i, j]:+.3f}{star}", 7
        else:
            text, font_size = star, 11
        dark_cell = abs(norm(difference[i, j]) - 0.5) > 0.3
        axes.text(
            j,
            i,
            text,
            ha="center",
            va="center",
            fontsize=font_size,
            fontweight="bold" if significant[i, j] else "normal",
            color="white" if dark_cell else "black",
        )


def legend_outside(figure: Figure, handles: list[Any], labels: list[str]) -> None:
    """A few configurations are listed right of the plot; many go below it in columns, so the
    plot keeps its width instead of shrinking beside a long list."""
    # Explicit labels: matplotlib silently drops legend entries whose label starts with "_".
    if len(labels) <= LEGEND_BESIDE_MAX:
        figure.legend(handles, labels, loc="outside right upper", fontsize=8, frameon=False)
    else:
        figure.legend(handles, labels, loc="outside lower center", fontsize=8, frameon=False, ncols=4)


def _color(index: int, count: int) -> Any:
    # tab10 stays the most legible palette; tab20 pairs similar hues, so only past ten lines.
    palette = colormaps["tab10" if count <= 10 else "tab20"]
    return palette(index % palette.N)


def _finite_max(by_group: ByGroup, measure: str) -> float:
    values = [groups[group][measure] for groups in by_group.values() for group in groups if measure in groups[group]]
    finite = [value for value in values if math.isfinite(value)]
    return max(finite, default=0.0)
