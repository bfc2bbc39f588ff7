"""The validity report's scatter plot: every configuration a numbered point, no number drawn over
another number or a marker however close the scores, the names in the legend."""

from __future__ import annotations

import itertools

from benchsmith.evals.reports import plots
from benchsmith.evals.reports.validity_report import scatter_figure, scatter_png

# The stdlib figures of the README (overlap control on), where hybrids lie within 0.01 of each
# other, plus three configurations closer still and one with the very scores of another.
ROWS = [
    ("hybrid:combsum(dense,bm25)", 0.8282, 0.8888),
    ("hybrid:wsum(dense=0.3,bm25=0.7)", 0.7999, 0.8896),
    ("hybrid:wsum(dense=0.7,bm25=0.3)", 0.7912, 0.8446),
    ("hybrid:rrf(dense,bm25)", 0.7846, 0.8312),
    ("hybrid:wsum(dense=0.9,bm25=0.1)", 0.7532, 0.7705),
    ("bm25", 0.7273, 0.8797),
    ("dense", 0.7061, 0.7118),
    ("bm25+rerank", 0.7280, 0.8790),
    ("dense+rerank", 0.7285, 0.8801),
    ("splade", 0.7276, 0.8794),
    ("mine.trec", 0.7061, 0.7118),
]


def configurations() -> list[dict]:
    return [
        {
            "name": f"{name}@oracle",
            "label": f"{name} (yours @full, synthetic @oracle)",
            "human": human,
            "synthetic": synthetic,
        }
        for name, human, synthetic in ROWS
    ]


def test_no_number_covers_another_number_or_a_marker_and_the_legend_names_each():
    rows = configurations()
    figure = scatter_figure(rows, "nDCG@10")
    renderer = figure.canvas.get_renderer()
    axes = figure.axes[0]
    numbers = [text.get_text() for text in axes.texts]
    # One number per point; the two configurations with the same scores share "7,11".
    assert numbers == ["1", "2", "3", "4", "5", "6", "7,11", "8", "9", "10"]
    boxes = [text.get_window_extent(renderer) for text in axes.texts]
    for first, second in itertools.combinations(boxes, 2):
        assert not first.overlaps(second), (first, second)
    centres = [axes.transData.transform((row["human"], row["synthetic"])) for row in rows]
    for box, (x, y) in itertools.product(boxes, centres):
        half = plots.MARKER_HALF_WIDTH
        assert not (box.x0 < x + half and x - half < box.x1 and box.y0 < y + half and y - half < box.y1)
    inside = axes.get_window_extent(renderer)
    assert boxes
    assert all(
        inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1 for box in boxes
    )
    legend = [text.get_text() for text in figure.legends[0].get_texts()]
    assert legend[: len(rows)] == [f"{number}  {row['label']}" for number, row in enumerate(rows, start=1)]
    assert legend[-1] == "equal scores"
    assert scatter_png(rows, "nDCG@10").startswith(b"\x89PNG")


def test_a_label_with_dollar_signs_is_shown_literally():
    rows = [
        {"name": "cost$5-$10", "label": "cost$5-$10", "human": 0.5, "synthetic": 0.4},
        {"name": "b", "label": "b", "human": 0.6, "synthetic": 0.7},
    ]
    figure = scatter_figure(rows, "R@10")
    assert figure.legends[0].get_texts()[0].get_text() == r"1  cost\$5-\$10"
