"""``benchsmith synthesize``: a multi-turn conversational retrieval benchmark from a collection."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from benchsmith.graphs.cli.console import (ChromaHostOption, DryRunOption, MaxAttemptsOption, RateLimitOption,
                                           RunIdOption, StructuredOutputOption, TimeoutOption, WorkspaceOption, console, guarded,
                                           model_options, offline_environment, print_estimate, print_paths,
                                           print_usage, run_reported)
from benchsmith.graphs.jobs.synthesize import (DEFAULT_CONCURRENCY, DEFAULT_CONVERSATIONS, DEFAULT_TURNS,
                                               SynthesisResult, estimate_synthesis)
from benchsmith.graphs.jobs.synthesize import synthesize as run_synthesis
from benchsmith.stores.runs import new_run_id
from benchsmith.tools.corpus_clusters import DEFAULT_CLUSTER_SIZE
from benchsmith.tools.dialogue_walk import (DEFAULT_HARD_SWITCH_RATE, DEFAULT_SOFT_SWITCH_MARGIN,
                                            DEFAULT_SWITCH_PROBABILITY)


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
        help="A soft switch's gold must beat the random-pair similarity mean by this many standard deviations; "
             "otherwise the turn is labelled hard.")] = DEFAULT_SOFT_SWITCH_MARGIN,
    concurrency: Annotated[int, typer.Option(min=1, help="Conversations synthesized at once.")] = DEFAULT_CONCURRENCY,
    seed: Annotated[int, typer.Option(help="Seed for clustering, cluster choice and switches.")] = 0,
    cluster_size: Annotated[int, typer.Option(help="Chunks per cluster.")] = DEFAULT_CLUSTER_SIZE,
    history_window: Annotated[Optional[int], typer.Option(help="Earlier turns in each BEIR query (default: all).")] = None,
    rate_limit: RateLimitOption = None,
    timeout: TimeoutOption = 60.0,
    max_attempts: MaxAttemptsOption = 6,
    structured_output: StructuredOutputOption = "auto",
    chroma_host: ChromaHostOption = None,
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
    console.print(f"[bold]synthesize[/] run [cyan]{run_id}[/] · {conversations} conversations × {turns} turns · {llm} "
                  f"· concurrency {concurrency}", highlight=False)
    result = guarded(lambda: run_reported(
        run_synthesis, run_id=run_id, collection=collection, conversations=conversations, turns=turns, llm=llm,
        switch_rate=switch_rate, hard_switch_rate=hard_switch_rate, soft_switch_margin=soft_switch_margin, seed=seed,
        cluster_size=cluster_size, history_window=history_window, concurrency=concurrency, workspace=workspace,
        chroma_host=chroma_host, **model_options(rate_limit, timeout, max_attempts, structured_output)))
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


def print_synthesis_statistics(result: SynthesisResult) -> None:
    stats = result.stats
    switches = stats["switches"]
    table = Table(title=f"Benchmark statistics · run {result.run_id}")
    table.add_column("statistic")
    table.add_column("value", justify="right")
    rows = [
        ("conversations", stats["conversations"]), ("turns", stats["turns"]),
        ("turns per conversation", stats["turns_per_conversation"]),
        ("tokens per question", stats["tokens_per_question"]), ("tokens per answer", stats["tokens_per_answer"]),
        ("topics per conversation", stats["topics_per_conversation"]),
        ("switches: follow-up / soft / hard", f"{switches['follow-up']} / {switches['soft']} / {switches['hard']}"),
        *similarity_rows(stats.get("similarity", {})),
        ("polisher rejections", f"{stats['polisher_rejections']} of {stats['polished_turns']}"),
        ("model calls per conversation", stats["model_calls_per_conversation"]),
        ("model tokens per conversation", stats["tokens_per_conversation"]),
        ("cost per conversation", f"${stats['cost_per_conversation_usd']:.4f}"),
    ]
    for label, value in rows:
        table.add_row(label, str(value))
    console.print(table)
    print_paths({"dialogues": result.files["dialogues"], "BEIR": result.files["beir"],
                 "TREC qrels": result.files["qrels"], "statistics": result.files["stats"]})
    print_usage(result.usage)
