"""The evaluation report as its readers meet it: Markdown tables, a self-contained HTML page
that a real browser renders with its plots, and results.json for programs."""

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest

from benchsmith.evals.measures.breakdown import mean_by_group
from benchsmith.evals.measures.significance import compare_all, describe
from benchsmith.evals.reports.evaluation_report import evaluation_report_files
from benchsmith.stores.persistence.files import write_files_atomic
from tests.chromium import chromium_or_skip, loaded_images, png_size, take_screenshot
from tests.report_parsing import html_tags, markdown_tables

MEASURES = ["R@1", "R@5", "R@20", "R@100", "nDCG@10", "RR@10", "AP"]
RECALL_CUTOFFS = (1, 5, 20, 100)
CONFIGURATIONS = {"bm25@full": 0.35, "dense@full": 0.5, "hybrid:rrf(dense,bm25)@full": 0.6}  # name: strength
# Two conversations of three turns; each turn after the first follows up on or switches topic.
SWITCH_OF = {
    "c0001_t0": "start",
    "c0001_t1": "follow-up",
    "c0001_t2": "hard",
    "c0002_t0": "start",
    "c0002_t1": "soft",
    "c0002_t2": "follow-up",
}


# ---------------------------------------------------------------------------------------
# Results as the evaluate graph writes them, built with the real breakdown and tests.


def per_query_values(rng: np.random.Generator, strength: float) -> dict[str, float]:
    recall = np.sort(np.clip(strength + rng.normal(0, 0.25, size=len(RECALL_CUTOFFS)), 0, 1))  # R@k grows with k
    ranking = np.clip(strength + rng.normal(0, 0.2, size=len(MEASURES) - len(RECALL_CUTOFFS)), 0, 1)
    return dict(zip(MEASURES, (float(value) for value in (*recall, *ranking))))


def make_results(configurations: dict[str, float], switch_of: dict[str, str], seed: int = 7) -> dict:
    rng = np.random.default_rng(seed)
    per_query = {
        name: {query_id: per_query_values(rng, strength) for query_id in switch_of}
        for name, strength in configurations.items()
    }
    aggregate = {
        name: {measure: float(np.mean([values[measure] for values in queries.values()])) for measure in MEASURES}
        for name, queries in per_query.items()
    }
    conversational = len(set(switch_of.values())) > 1
    by_turn, by_switch = {}, {}
    if conversational:
        turn_of = {query_id: int(query_id.rsplit("_t", 1)[1]) for query_id in switch_of}
        by_turn = {name: mean_by_group(queries, turn_of, MEASURES) for name, queries in per_query.items()}
        by_switch = {name: mean_by_group(queries, switch_of, MEASURES) for name, queries in per_query.items()}
    comparisons = [comparison.to_json() for comparison in compare_all(per_query, ["nDCG@10"])]
    return {
        "benchmark": {
            "name": "demo-synthesize",
            "path": "/data/beir/demo",
            "queries": len(switch_of),
            "judged_queries": len(switch_of),
            "documents": 1771,
            "conversational": conversational,
        },
        "settings": {
            "retrievers": ["bm25", "dense"],
            "histories": ["full"],
            "depth": 1000,
            "rerank": None,
            "rerank_depth": 100,
            "measures": MEASURES,
        },
        "measures": MEASURES,
        "primary_measure": "nDCG@10",
        "configurations": [
            {
                "name": name,
                "retriever": name.split("@")[0],
                "history": "full",
                "rerank": False,
                "run_file": f"run-files/{index}.trec",
                "seconds": 1.5 + index,
            }
            for index, name in enumerate(configurations)
        ],
        "aggregate": aggregate,
        "per_query": per_query,
        "recall_curve": {name: {str(k): aggregate[name][f"R@{k}"] for k in RECALL_CUTOFFS} for name in aggregate},
        "by_turn": by_turn,
        "by_switch": by_switch,
        "significance": {
            "description": describe("randomization", 10_000, 0.05, len(comparisons)),
            "measures": ["nDCG@10"],
            "comparisons": comparisons,
        },
        "notes": ["Queries are the full conversation history, newest turn last."],
    }


def single_turn_results(name: str = "bm25", note: str = "BEIR test split.") -> dict:
    results = make_results({name: 0.4}, {"q1": "start", "q2": "start", "q3": "start"})
    results["notes"] = [note]
    return results


@pytest.fixture(scope="module")
def results() -> dict:
    return make_results(CONFIGURATIONS, SWITCH_OF)


@pytest.fixture(scope="module")
def report(results, tmp_path_factory) -> dict[str, Path]:
    return write_files_atomic(tmp_path_factory.mktemp("report"), evaluation_report_files(results))


def plot_count(results: dict) -> int:
    """Recall curves, bars by turn and by switch type, one significance matrix per tested measure."""
    comparisons = results["significance"]["comparisons"]
    return (
        1
        + bool(results["by_turn"])
        + bool(results["by_switch"])
        + (len(results["significance"]["measures"]) if comparisons else 0)
    )


# ---------------------------------------------------------------------------------------
# Reading the outputs back.


def cell_value(cell: str) -> tuple[float, bool]:
    """The number of a Markdown cell and whether it is bold."""
    bold = cell.startswith("**") and cell.endswith("**")
    return float(cell.strip("*")), bold


# ---------------------------------------------------------------------------------------
# Markdown.


def test_markdown_main_table_has_every_configuration_and_measure_with_the_best_in_bold(results, report):
    table = markdown_tables(report["markdown"].read_text(encoding="utf-8"))["Main results"]
    header, rows = table[0], table[1:]
    assert header == ["configuration", *MEASURES]
    assert [row[0] for row in rows] == list(CONFIGURATIONS)
    for column, measure in enumerate(MEASURES, start=1):
        means = {name: results["aggregate"][name][measure] for name in CONFIGURATIONS}
        best = max(round(mean, 3) for mean in means.values())
        for row in rows:
            value, bold = cell_value(row[column])
            assert value == pytest.approx(means[row[0]], abs=5e-4), (row[0], measure)
            assert bold == (round(means[row[0]], 3) == best), (row[0], measure)


def test_markdown_breaks_the_primary_measure_down_by_turn_and_switch_type(results, report):
    tables = markdown_tables(report["markdown"].read_text(encoding="utf-8"))
    by_turn, by_switch = tables["nDCG@10 by turn"], tables["nDCG@10 by switch type"]
    assert by_turn[0] == ["configuration", "turn 0 (n=2)", "turn 1 (n=2)", "turn 2 (n=2)"]
    assert by_switch[0] == ["configuration", "start (n=2)", "follow-up (n=2)", "soft (n=1)", "hard (n=1)"]
    for table, key, groups in (
        (by_turn, "by_turn", ["0", "1", "2"]),
        (by_switch, "by_switch", ["start", "follow-up", "soft", "hard"]),
    ):
        assert [row[0] for row in table[1:]] == list(CONFIGURATIONS)
        for row in table[1:]:
            for group, cell in zip(groups, row[1:]):
                assert cell_value(cell)[0] == pytest.approx(results[key][row[0]][group]["nDCG@10"], abs=5e-4)


def test_markdown_significance_table_names_the_test_and_the_correction(results, report):
    markdown = report["markdown"].read_text(encoding="utf-8")
    assert results["significance"]["description"] in markdown
    assert "Holm–Bonferroni" in markdown and "randomization test" in markdown
    table = markdown_tables(markdown)["Significance of nDCG@10 differences"]
    comparisons = results["significance"]["comparisons"]
    assert len(table) == 1 + len(comparisons)
    for row, comparison in zip(table[1:], comparisons):
        assert row[0] == f"{comparison['first']} vs {comparison['second']}"
        assert float(row[1]) == pytest.approx(comparison["mean_difference"], abs=5e-4)
        assert float(row[3]) == pytest.approx(comparison["p_adjusted"], abs=5e-5)
        assert row[4].strip("*") == ("yes" if comparison["significant"] else "no")
    assert "Queries are the full conversation history" in markdown  # the notes


# ---------------------------------------------------------------------------------------
# HTML and results.json.


def test_html_is_self_contained_with_every_plot_a_valid_inline_png(results, report):
    tags = html_tags(report["html"].read_text(encoding="utf-8"))
    references = [attrs[name] for _, attrs in tags for name in ("src", "href") if name in attrs]
    assert not [ref for ref in references if not ref.startswith("data:")], "only inline data may be referenced"
    assert not [tag for tag, _ in tags if tag in ("script", "link", "iframe", "object")]
    images = [attrs for tag, attrs in tags if tag == "img"]
    assert len(images) == plot_count(results) == 4
    for image in images:
        assert image["alt"]
        assert image["src"].startswith("data:image/png;base64,")
        width, height = png_size(base64.b64decode(image["src"].removeprefix("data:image/png;base64,"), validate=True))
        assert width > 0 and height > 0


def test_user_text_is_escaped_in_html_and_markdown(tmp_path):
    name = '<script>alert("name")</script>@full'
    paths = write_files_atomic(
        tmp_path, evaluation_report_files(single_turn_results(name, note="<img src=x onerror=alert(1)>"))
    )
    page = paths["html"].read_text(encoding="utf-8")
    tags = html_tags(page)
    assert not [tag for tag, _ in tags if tag == "script"]
    assert len([tag for tag, _ in tags if tag == "img"]) == 1  # the recall curves, not the note
    assert "&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;@full" in page
    markdown = paths["markdown"].read_text(encoding="utf-8")
    assert r"\<script>" in markdown and r"\<img" in markdown
    assert not re.search(r"(?<!\\)<[A-Za-z/]", markdown), "an unescaped tag would be raw HTML to a renderer"


def test_results_json_round_trips_and_no_temporary_file_is_left(results, report):
    assert json.loads(report["results"].read_text(encoding="utf-8")) == results
    assert sorted(path.name for path in report["results"].parent.iterdir()) == [
        "report.html",
        "report.md",
        "results.json",
    ]


def test_single_turn_benchmark_with_one_configuration_omits_breakdowns_and_significance(tmp_path):
    results = single_turn_results()
    assert results["by_turn"] == {} and results["significance"]["comparisons"] == []
    paths = write_files_atomic(tmp_path / "new" / "dir", evaluation_report_files(results))
    assert paths
    assert all(path.is_file() and path.stat().st_size > 0 for path in paths.values())
    markdown = paths["markdown"].read_text(encoding="utf-8")
    assert list(markdown_tables(markdown)) == ["Main results", "Configurations"]
    assert "by turn" not in markdown and "switch type" not in markdown and "Significance" not in markdown
    images = [attrs for tag, attrs in html_tags(paths["html"].read_text(encoding="utf-8")) if tag == "img"]
    assert len(images) == plot_count(results) == 1
    assert json.loads(paths["results"].read_text(encoding="utf-8")) == results


# ---------------------------------------------------------------------------------------
# A real browser.


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_or_skip()


@pytest.mark.slow
def test_chromium_renders_the_report_with_every_image_loaded(chromium, results, report, tmp_path):
    loaded, total = loaded_images(chromium, report["html"], tmp_path)
    assert loaded == total == plot_count(results)

    screenshot = take_screenshot(chromium, report["html"], tmp_path / "report.png", (1280, 2400))
    assert screenshot.stat().st_size > 10_000
    assert png_size(screenshot.read_bytes()) == (1280, 2400)
    print(f"screenshot of report.html: {screenshot}")
