"""``benchsmith ingest``: load, clean, chunk, deduplicate, filter and index a corpus into Chroma."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchsmith.cli.console import Table, console, counted, print_usage, print_warnings, shown
from benchsmith.cli.deferred import deferred
from benchsmith.cli.job_command import run_job_command
from benchsmith.cli.settings import RunOptions, settings_options
from benchsmith.graphs.contexts.ingest import IngestContext
from benchsmith.jobs.defaults import INGEST_COLLECTION
from benchsmith.tools.corpus.documents import skipped_groups

if TYPE_CHECKING:
    from benchsmith.jobs.ingest import IngestPreview, IngestResult
    from benchsmith.tools.corpus.dedup import PageLoss

# The jobs load when the command runs (benchsmith/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy. Result types are for annotations only.
run_ingest = deferred("benchsmith.jobs.ingest", "ingest")
preview_ingest = deferred("benchsmith.jobs.ingest", "preview_ingest")

SKIPPED_EXAMPLES = 3  # paths shown per reason
PAGE_LOSSES_SHOWN = 10  # (page, page it lost chunks to) pairs shown


@settings_options(IngestContext)
def ingest(
    sources: Annotated[
        list[str], typer.Argument(help="Directories, files, BEIR corpus.jsonl (or its folder), or 'stdlib'.")
    ],
    collection: Annotated[str, typer.Option(help="Chroma collection to fill (one per embedder).")] = INGEST_COLLECTION,
    *,
    settings: dict[str, Any],
    run_options: RunOptions,
) -> None:
    """Load, clean, chunk, deduplicate, filter and index a corpus into Chroma.

    Unreadable, binary and special files, and files over 16 MiB (the limit of one document: split
    them), are skipped and listed with the reason.

    Kill it at any point and run the same command again: it continues where it stopped and
    embeds nothing twice.
    """
    run_job_command(
        "ingest",
        run_options,
        run=run_ingest,
        arguments={"sources": sources, "collection": collection, **settings},
        estimate=preview_ingest,
        print_dry_run=lambda preview: print_preview(preview, settings["quality"]),
        summary=print_ingest_summary,
        about=f" → collection [cyan]{shown(collection)}[/]"
        + (f" · on Ray at {shown(settings['ray'])}" if settings["ray"] else ""),
    )


def print_preview(preview: IngestPreview, quality: str) -> None:
    """What a dry run of ingest would read and chunk; nothing is written."""
    console.print(
        f"dry run: {preview.files_read} files read, {preview.files_skipped} skipped, {preview.documents} "
        f"documents, {preview.chunks} chunks ({preview.characters:,} characters) before dedup and "
        "quality filtering.",
        highlight=False,
    )
    print_page_kinds(preview.page_kinds, "chunks per page kind (before dedup and quality filtering)")
    if quality == "llm":
        console.print(
            f"--quality llm would make up to {preview.cost.calls} model calls, about "
            f"{preview.cost.input_tokens:,} input tokens, ~${preview.cost.cost_usd:.4f}."
        )
    for note in preview.cost.notes:
        console.print(shown(note), highlight=False)
    print_skipped(preview.skipped)
    print_warnings(preview.warnings)
    console.print("Nothing was written.")


def print_ingest_summary(result: IngestResult) -> None:
    seconds = result.stage_seconds
    table = Table(title=f"Ingestion summary · run {shown(result.run_id)} · collection {shown(result.collection)}")
    table.add_column("stage")
    table.add_column("result")
    table.add_column("seconds", justify="right")
    rows = [
        ("load", f"{counted(result.files_read, 'file')} read, {result.files_skipped:,} skipped"),
        ("clean", counted(result.documents, "document")),
        ("chunk", counted(result.chunks, "chunk")),
        ("dedup", f"{counted(result.duplicates, 'duplicate')} removed"),
        ("quality", f"{counted(result.filtered, 'chunk')} filtered"),
        (
            "embed",
            f"{counted(result.indexed, 'chunk')} indexed ({result.newly_embedded:,} newly embedded; "
            f"collection holds {result.collection_count:,})",
        ),
    ]
    for stage, summary in rows:
        table.add_row(stage, summary, f"{seconds.get(stage, 0.0):.2f}")
    table.add_row("total", "", f"{sum(seconds.values()):.2f}", style="bold")
    console.print(table)
    print_page_kinds(result.page_kinds, "chunks indexed per page kind")
    print_page_losses(result.pages_that_lost_chunks, result.run_dir / "duplicates.jsonl")
    print_skipped(result.skipped, result.run_dir / "skipped.jsonl")
    print_warnings(result.warnings)
    print_usage(result.usage)


def print_page_kinds(page_kinds: dict[str, int], label: str) -> None:
    if page_kinds:
        counts = ", ".join(f"{kind} {count}" for kind, count in sorted(page_kinds.items(), key=lambda item: -item[1]))
        console.print(f"{label}: {shown(counts)}", highlight=False)


def print_page_losses(losses: list[PageLoss], listed_in: Path) -> None:
    """Which pages lost chunks to near-duplicate removal, and to which page: a page's own
    introduction removed as a copy of another page's shows here (every chunk is in ``listed_in``)."""
    if not losses:
        return
    console.print(f"Near-duplicates removed, by page (every chunk listed in {shown(listed_in)}):", highlight=False)
    for loss in losses[:PAGE_LOSSES_SHOWN]:
        copied = "itself" if loss.kept_page == loss.page else loss.kept_page
        console.print(
            f"  {loss.page} lost {counted(loss.chunks, 'chunk')}, copies of {copied}", markup=False, highlight=False
        )
    if len(losses) > PAGE_LOSSES_SHOWN:
        console.print(f"  and {counted(len(losses) - PAGE_LOSSES_SHOWN, 'more page pair')}", highlight=False)


def print_skipped(skipped: list[dict[str, str]], listed_in: Path | None = None) -> None:
    """The skipped files grouped by reason: each reason's count and first SKIPPED_EXAMPLES paths."""
    if not skipped:
        return
    where = f" (every one listed in {listed_in})" if listed_in else ""
    console.print(f"[yellow]Skipped {len(skipped)} file(s), by reason{shown(where)}:[/]")
    for group in skipped_groups(skipped, SKIPPED_EXAMPLES):
        more = f", … {group.count - len(group.paths)} more" if group.count > len(group.paths) else ""
        console.print(
            f"  {group.count:>5}  {shown(group.reason)}: {shown(', '.join(group.paths))}{more}", highlight=False
        )
