"""An evaluation's HTML report fits a 1280-pixel window: with every default measure, long
configuration names and absolute run-file paths, no table runs past its box."""

from __future__ import annotations

import pytest

import benchsmith
from benchsmith.evals.defaults import DEFAULT_MEASURES
from benchsmith.evals.reports.evaluation_report import COLUMNS_PER_TABLE, main_tables
from benchsmith.graphs.runtime.resources import register_embedder
from tests.chromium import chromium_or_skip, table_widths
from tests.embedders import HashingEmbedder
from tests.evaluate_fixtures import write_benchmark

RETRIEVERS = [
    "bm25",
    "dense",
    "hybrid:rrf(dense,bm25)",
    "hybrid:wsum(dense=0.7,bm25=0.3)",
    "hybrid:combsum(dense,bm25)",
]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    root = tmp_path_factory.mktemp("report-width")
    return benchsmith.evaluate(
        write_benchmark(root / "bench"),
        retrievers=RETRIEVERS,
        histories=["full", "oracle", "last:2"],
        embedder=register_embedder(HashingEmbedder()),
        workspace=root / "a-workspace-whose-path-is-long" / "and-nested-further",
        run_id="a-long-run-id-for-the-width-check",
    )


def test_the_main_results_are_cut_into_tables_of_a_few_measures(evaluated):
    results = evaluated.results()
    assert tuple(results["measures"]) == DEFAULT_MEASURES
    tables = main_tables(results)
    assert len(tables) >= 2 and all(len(table.columns) - 1 <= COLUMNS_PER_TABLE for table in tables)
    assert [column for table in tables for column in table.columns[1:]] == list(DEFAULT_MEASURES)


@pytest.mark.slow
def test_every_table_of_the_report_fits_a_1280_pixel_window(evaluated, tmp_path):
    chromium = chromium_or_skip()
    overflow, page, tables = table_widths(chromium, evaluated.report["html"], tmp_path, 1280)
    assert tables >= 4
    assert overflow == 0 and page <= 1280, (overflow, page)
