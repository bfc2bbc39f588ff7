"""``benchsmith ingest``: load, clean, chunk, deduplicate, filter and index a corpus into Chroma."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from benchsmith.graphs.cli.console import (ChromaHostOption, DatabaseOption, DryRunOption, EmbedderOption,
                                           MaxAttemptsOption, RateLimitOption, RunIdOption, StructuredOutputOption,
                                           TimeoutOption, WorkspaceOption, console, guarded, model_options,
                                           offline_environment, print_usage, run_reported, shown)
from benchsmith.graphs.cli.deferred import deferred
from benchsmith.graphs.jobs.defaults import INGEST_COLLECTION as DEFAULT_COLLECTION
from benchsmith.stores.runs import new_run_id
from benchsmith.tools.defaults import DEFAULT_CHUNK_SIZE, DEFAULT_EMBEDDER, DEFAULT_MIN_CHARS
from benchsmith.tools.defaults import DEFAULT_DEDUP_NUM_PERM as DEFAULT_NUM_PERM
from benchsmith.tools.defaults import DEFAULT_DEDUP_THRESHOLD as DEFAULT_THRESHOLD
from benchsmith.tools.defaults import DEFAULT_INDEX_BATCH_SIZE as DEFAULT_BATCH_SIZE
from benchsmith.tools.quality import DEFAULT_MIN_QUALITY

if TYPE_CHECKING:
    from benchsmith.graphs.jobs.ingest import IngestResult

# The jobs load when the command runs (graphs/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy. Result types are for annotations only.
run_ingest = deferred("benchsmith.graphs.jobs.ingest", "ingest")
preview_ingest = deferred("benchsmith.graphs.jobs.ingest", "preview_ingest")

SKIPPED_SHOWN = 20


def ingest(
    sources: Annotated[list[str], typer.Argument(help="Directories, files, BEIR corpus.jsonl (or its folder), or 'stdlib'.")],
    collection: Annotated[str, typer.Option(help="Chroma collection to fill (one per embedder).")] = DEFAULT_COLLECTION,
    chunk_size: Annotated[int, typer.Option(help="Target chunk size in characters; no chunk is longer.")] = DEFAULT_CHUNK_SIZE,
    min_chars: Annotated[int, typer.Option(help="Chunks shorter than this are dropped.")] = DEFAULT_MIN_CHARS,
    dedup_threshold: Annotated[float, typer.Option(
        help="Jaccard similarity (character 5-grams) from which a chunk is a near-duplicate.")] = DEFAULT_THRESHOLD,
    num_perm: Annotated[int, typer.Option(help="MinHash permutations.")] = DEFAULT_NUM_PERM,
    min_quality: Annotated[float, typer.Option(
        help="Chunks scoring below this quality (0..1) are filtered out.")] = DEFAULT_MIN_QUALITY,
    quality: Annotated[str, typer.Option(help="Quality scorer: 'heuristic' (information density) or 'llm'.")] = "heuristic",
    llm: Annotated[str, typer.Option(help="Model for --quality llm, e.g. openai:gpt-4o-mini.")] = "baseline",
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    batch_size: Annotated[int, typer.Option(
        help="Chunks embedded and stored per batch (the resume granularity).")] = DEFAULT_BATCH_SIZE,
    rate_limit: RateLimitOption = None,
    timeout: TimeoutOption = 60.0,
    max_attempts: MaxAttemptsOption = 6,
    structured_output: StructuredOutputOption = "auto",
    chroma_host: ChromaHostOption = None,
    database: DatabaseOption = None,
    run_id: RunIdOption = None,
    dry_run: DryRunOption = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Load, clean, chunk, deduplicate, filter and index a corpus into Chroma.

    Kill it at any point and run the same command again: it continues where it stopped and
    embeds nothing twice.
    """
    offline_environment()
    if dry_run:
        preview = guarded(lambda: preview_ingest(sources, chunk_size=chunk_size, min_chars=min_chars, quality=quality,
                                                 llm=llm))
        console.print(f"dry run: {preview.files_read} files read, {preview.files_skipped} skipped, {preview.documents} "
                      f"documents, {preview.chunks} chunks ({preview.characters:,} characters) before dedup and "
                      "quality filtering.", highlight=False)
        if quality == "llm":
            console.print(f"--quality llm would make up to {preview.cost.calls} model calls, about "
                          f"{preview.cost.input_tokens:,} input tokens, ~${preview.cost.cost_usd:.4f}.")
            for note in preview.cost.notes:
                console.print(note, markup=False, highlight=False)
        print_skipped(preview.skipped)
        console.print("Nothing was written.")
        return
    run_id = run_id or new_run_id("ingest")
    console.print(f"[bold]ingest[/] run [cyan]{shown(run_id)}[/] → collection [cyan]{shown(collection)}[/]")
    result = guarded(lambda: run_reported(
        run_ingest, run_id=run_id, sources=sources, collection=collection, chunk_size=chunk_size,
        min_chars=min_chars, dedup_threshold=dedup_threshold, num_perm=num_perm, min_quality=min_quality,
        quality=quality, llm=llm, embedder=embedder, batch_size=batch_size, workspace=workspace,
        chroma_host=chroma_host, database=database,
        **model_options(rate_limit, timeout, max_attempts, structured_output)))
    print_ingest_summary(result)


def print_ingest_summary(result: IngestResult) -> None:
    seconds = result.stage_seconds
    table = Table(title=f"Ingestion summary · run {shown(result.run_id)} · collection {shown(result.collection)}")
    table.add_column("stage")
    table.add_column("result")
    table.add_column("seconds", justify="right")
    rows = [
        ("load", f"{result.files_read} files read, {result.files_skipped} skipped"),
        ("clean", f"{result.documents} documents"),
        ("chunk", f"{result.chunks} chunks"),
        ("dedup", f"{result.duplicates} duplicates removed"),
        ("quality", f"{result.filtered} chunks filtered"),
        ("embed", f"{result.indexed} chunks indexed ({result.newly_embedded} newly embedded; "
                  f"collection holds {result.collection_count})"),
    ]
    for stage, summary in rows:
        table.add_row(stage, summary, f"{seconds.get(stage, 0.0):.2f}")
    table.add_row("total", "", f"{sum(seconds.values()):.2f}", style="bold")
    console.print(table)
    print_skipped(result.skipped, result.run_dir / "skipped.jsonl")
    print_usage(result.usage)


def print_skipped(skipped: list[dict[str, str]], listed_in: Path | None = None) -> None:
    """The skipped files with their reasons (the first SKIPPED_SHOWN; the rest are counted)."""
    if not skipped:
        return
    console.print(f"[yellow]Skipped {len(skipped)} file(s):[/]")
    for item in skipped[:SKIPPED_SHOWN]:
        console.print(f"  {item['path']}: {item['reason']}", highlight=False, markup=False)
    if len(skipped) > SKIPPED_SHOWN:
        where = f" in {listed_in}" if listed_in else ""
        console.print(f"  … and {len(skipped) - SKIPPED_SHOWN} more{where}", markup=False, highlight=False)
