"""The ingest summary a newcomer reads: counts in the number they take, and which pages lost chunks
to near-duplicate removal and to which page (a page's own introduction removed as a copy of
another page's is the removal a reader must be able to check)."""

from __future__ import annotations

from typer.testing import CliRunner

from benchsmith.cli import app
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.tools.corpus.dedup import PageLoss, pages_that_lost_chunks
from benchsmith.tools.corpus.documents import page_of, span_id
from tests.embedders import HashingEmbedder

runner = CliRunner(env={"COLUMNS": "80"})
INTRODUCTION = (
    "This guide is part of the Harbor operations handbook. Read the safety notes before you change "
    "anything on a running dock, and keep the logbook open while you work through the steps below."
)


def page(title: str, body: str) -> str:
    return f"# {title}\n\n{INTRODUCTION}\n\n## Steps\n\n{body}\n"


def test_the_summary_names_the_pages_that_lost_chunks_and_to_which_page(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "berthing.md").write_text(
        page(
            "Berthing",
            "Tie the bow line first, then the stern line, and check "
            "both fenders sit at the hull's widest point before the "
            "engine is stopped.",
        ),
        encoding="utf-8",
    )
    (docs / "refuelling.md").write_text(
        page(
            "Refuelling",
            "Ground the hose before the nozzle touches the tank, "
            "fill to nine tenths of the gauge and write the volume "
            "in the fuel column of the logbook.",
        ),
        encoding="utf-8",
    )
    result = runner.invoke(
        app,
        [
            "ingest",
            str(docs),
            "--collection",
            "harbor",
            "--chunk-size",
            "260",
            "--min-chars",
            "50",
            "--embedder",
            register_embedder(HashingEmbedder()),
            "-w",
            str(tmp_path / "ws"),
            "--run-id",
            "harbor",
        ],
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "1 duplicate removed" in text and "1 duplicates" not in text
    assert "0 chunks filtered" in text
    assert "refuelling.md lost 1 chunk, copies of " in text and text.count("berthing.md") >= 1
    assert "…" not in result.output


def test_a_chunk_id_names_its_page():
    assert page_of(span_id("docs/my guide.md", 10, 200)) == "docs/my guide.md"
    assert page_of("doc-17") == "doc-17"  # a BEIR passage kept whole
    assert page_of("notes:intro") == "notes:intro"


def test_page_losses_are_counted_per_page_pair_most_first():
    matches = [
        {"removed_id": "b.md:0-10", "kept_id": "a.md:0-10"},
        {"removed_id": "b.md:20-30", "kept_id": "a.md:5-9"},
        {"removed_id": "c.md:0-10", "kept_id": "c.md:40-50"},
    ]
    assert pages_that_lost_chunks(matches) == [PageLoss("b.md", "a.md", 2), PageLoss("c.md", "c.md", 1)]
