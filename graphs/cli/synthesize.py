"""``benchsmith synthesize``: a multi-turn conversational retrieval benchmark from a collection."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.table import Table

from benchsmith.graphs.cli.console import (ChromaHostOption, DatabaseOption, DryRunOption, LeaseOption,
                                           MaxAttemptsOption, RateLimitOption, RunIdOption, StructuredOutputOption,
                                           TimeoutOption, WorkspaceOption, console, guarded, model_options,
                                           offline_environment, print_estimate, print_paths, print_usage, run_reported,
                                           shown)
from benchsmith.graphs.cli.deferred import deferred
from benchsmith.graphs.jobs.defaults import SYNTHESIS_CONCURRENCY as DEFAULT_CONCURRENCY
from benchsmith.graphs.jobs.defaults import SYNTHESIS_CONVERSATIONS as DEFAULT_CONVERSATIONS
from benchsmith.graphs.jobs.defaults import SYNTHESIS_MAX_OVERLAP as DEFAULT_MAX_OVERLAP
from benchsmith.graphs.jobs.defaults import SYNTHESIS_OVERLAP_ATTEMPTS as DEFAULT_OVERLAP_ATTEMPTS
from benchsmith.graphs.jobs.defaults import SYNTHESIS_OVERLAP_REPLANS as DEFAULT_OVERLAP_REPLANS
from benchsmith.graphs.jobs.defaults import SYNTHESIS_TURNS as DEFAULT_TURNS
from benchsmith.stores.runs import new_run_id
from benchsmith.stores.work_items import DEFAULT_LEASE_S
from benchsmith.tools.defaults import DEFAULT_CLUSTER_SIZE
from benchsmith.tools.dialogue_walk import (DEFAULT_HARD_SWITCH_RATE, DEFAULT_SOFT_SWITCH_MARGIN,
                                            DEFAULT_SWITCH_PROBABILITY)

if TYPE_CHECKING:
    from benchsmith.graphs.jobs.synthesize import SynthesisResult

# The jobs load when the command runs (graphs/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy. Result types are for annotations only.
cost_per_conversation = deferred("benchsmith.evals.benchmark_stats", "cost_per_conversation")
run_synthesis = deferred("benchsmith.graphs.jobs.synthesize", "synthesize")
estimate_synthesis = deferred("benchsmith.graphs.jobs.synthesize", "estimate_synthesis")


def synthesize(
    collection: Annotated[str, typer.Option(help="The ingested collection the conversations walk through.")],
    conversations: Annotated[int, typer.Option(help="Conversations to synthesize (one cluster each).")]
    = DEFAULT_CONVERSATIONS,
    turns: Annotated[int, typer.Option(help="Turns per conversation.")] = DEFAULT_TURNS,
    llm: Annotated[str, typer.Option(help="'baseline' (offline, extractive) or openai:<model>.")] = "baseline",
    hard_switch_rate: Annotated[float, typer.Option(help="Share of topic switches that are hard (a distant cluster).")]
    = DEFAULT_HARD_SWITCH_RATE,
    switch_rate: Annotated[float, typer.Option(help="Probability that a turn switches topic (users: every 2.11 turns).")]
    = DEFAULT_SWITCH_PROBABILITY,
    soft_switch_margin: Annotated[float, typer.Option(
        help="A soft switch's gold must reach the random-pair similarity mean plus this many standard deviations; "
             "a hard switch's gold must stay below it, on another document.")] = DEFAULT_SOFT_SWITCH_MARGIN,
    max_overlap: Annotated[float, typer.Option(
        help="Most lexical overlap a question may have with its gold passage (share of its content words found "
             "there); above it the question is asked again. Default: the p90 of hand-written questions.")]
    = DEFAULT_MAX_OVERLAP,
    overlap_attempts: Annotated[int, typer.Option(
        help="Corrective turns per gold chunk for a question above --max-overlap.")] = DEFAULT_OVERLAP_ATTEMPTS,
    overlap_replans: Annotated[int, typer.Option(
        help="Other gold chunks tried before a question above --max-overlap is kept, flagged.")]
    = DEFAULT_OVERLAP_REPLANS,
    concurrency: Annotated[int, typer.Option(min=1, help="Conversations synthesized at once.")] = DEFAULT_CONCURRENCY,
    seed: Annotated[int, typer.Option(help="Seed for clustering, cluster choice and switches.")] = 0,
    cluster_size: Annotated[int, typer.Option(help="Chunks per cluster.")] = DEFAULT_CLUSTER_SIZE,
    history_window: Annotated[Optional[int], typer.Option(help="Earlier turns in each BEIR query (default: all).")] = None,
    rate_limit: RateLimitOption = None,
    timeout: TimeoutOption = 60.0,
    max_attempts: MaxAttemptsOption = 6,
    structured_output: StructuredOutputOption = "auto",
    chroma_host: ChromaHostOption = None,
    database: DatabaseOption = None,
    lease: LeaseOption = DEFAULT_LEASE_S,
    run_id: RunIdOption = None,
    dry_run: DryRunOption = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Synthesize a multi-turn conversational retrieval benchmark from an ingested collection.

    Writes dialogues.jsonl, a BEIR export (beir/), TREC qrels and stats.json into the run
    directory. With --llm baseline it runs offline (extractive agents, no key).
    """
    offline_environment()
    if dry_run:
        print_estimate(guarded(lambda: estimate_synthesis(
            collection, conversations=conversations, turns=turns, llm=llm, cluster_size=cluster_size,
            workspace=workspace, chroma_host=chroma_host)))
        return
    run_id = run_id or new_run_id("synthesize")
    console.print(f"[bold]synthesize[/] run [cyan]{shown(run_id)}[/] · {conversations} conversations × {turns} turns · "
                  f"{shown(llm)} "
                  f"· concurrency {concurrency}", highlight=False)
    result = guarded(lambda: run_reported(
        run_synthesis, run_id=run_id, collection=collection, conversations=conversations, turns=turns, llm=llm,
        switch_rate=switch_rate, hard_switch_rate=hard_switch_rate, soft_switch_margin=soft_switch_margin,
        max_overlap=max_overlap, overlap_attempts=overlap_attempts, overlap_replans=overlap_replans, seed=seed,
        cluster_size=cluster_size, history_window=history_window, concurrency=concurrency, workspace=workspace,
        chroma_host=chroma_host, database=database, lease_s=lease,
        **model_options(rate_limit, timeout, max_attempts, structured_output)))
    print_synthesis_statistics(result)


def similarity_rows(similarity: dict) -> list[tuple[str, str]]:
    """Similarity of each switch's gold to the previous gold, beside random pairs of chunks."""
    rows = []
    for switch in ("soft", "hard"):
        summary = similarity.get(switch, {})
        if summary.get("count"):
            rows.append((f"{switch} switches: similarity mean (min–max)",
                         f"{summary['mean']:.2f} ({summary['min']:.2f}–{summary['max']:.2f})"))
    if pairs := similarity.get("random_pairs"):
        threshold = similarity.get("soft_switch_threshold")
        rows.append(("random pairs: mean ± sd (soft needs >)",
                     f"{pairs['mean']:.2f} ± {pairs['std']:.2f}" + (f" ({threshold:.2f})" if threshold is not None else "")))
    return rows


def overlap_rows(stats: dict) -> list[tuple[str, str]]:
    """The questions' lexical overlap with their gold passages, and what bounding it took."""
    summary, rejections = stats.get("lexical_overlap") or {}, stats.get("overlap_rejections") or {}
    rows = []
    if summary.get("n"):
        rows.append(("question–gold lexical overlap: mean / median / p90",
                     f"{summary['mean']:.2f} / {summary['median']:.2f} / {summary['p90']:.2f}"))
    if rejections:
        limit = rejections.get("max_overlap")
        rows.append((f"overlap above {limit:.2f}: corrective turns / re-plans / kept flagged" if limit is not None
                     else "overlap: corrective turns / re-plans / kept flagged",
                     f"{rejections['corrective_turns']} / {rejections['replans']} / {rejections['kept_above_limit']}"))
    return rows


def print_synthesis_statistics(result: SynthesisResult) -> None:
    stats = result.stats
    cost = cost_per_conversation(dataclasses.asdict(result.usage), stats["conversations"])
    switches = stats["switches"]
    table = Table(title=f"Benchmark statistics · run {shown(result.run_id)}")
    table.add_column("statistic")
    table.add_column("value", justify="right")
    rows = [
        ("conversations", stats["conversations"]), ("turns", stats["turns"]),
        ("turns per conversation", stats["turns_per_conversation"]),
        ("tokens per question", stats["tokens_per_question"]), ("tokens per answer", stats["tokens_per_answer"]),
        ("topics per conversation", stats["topics_per_conversation"]),
        ("switches: follow-up / soft / hard", f"{switches['follow-up']} / {switches['soft']} / {switches['hard']}"),
        *similarity_rows(stats.get("similarity", {})),
        *overlap_rows(stats),
        ("polisher rejections", f"{stats['polisher_rejections']} of {stats['polished_turns']}"),
        ("model calls per conversation", cost["model_calls"]),
        ("model tokens per conversation", cost["tokens"]),
        ("cost per conversation", f"${cost['cost_usd']:.4f}"),
    ]
    for label, value in rows:
        table.add_row(label, str(value))
    console.print(table)
    print_paths({"dialogues": result.files["dialogues"], "BEIR": result.files["beir"],
                 "TREC qrels": result.files["qrels"], "statistics": result.files["stats"]})
    print_usage(result.usage)
