"""``benchsmith nuggets``: a nugget-judged benchmark from real questions with accepted answers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.table import Table

from benchsmith.agents.defaults import DEFAULT_MAX_NUGGETS
from benchsmith.graphs.cli.console import (ChromaHostOption, DatabaseOption, DryRunOption, MaxAttemptsOption,
                                           RateLimitOption, RunIdOption, StructuredOutputOption, TimeoutOption,
                                           WorkspaceOption, console, guarded, model_options, offline_environment,
                                           print_estimate, print_paths, print_usage, run_reported, shown)
from benchsmith.graphs.cli.deferred import deferred
from benchsmith.stores.runs import new_run_id
from benchsmith.tools.defaults import DEFAULT_CHUNK_SIZE, DEFAULT_EMBEDDER, DEFAULT_MIN_CHARS, DEFAULT_POOL_DEPTH
from benchsmith.tools.defaults import MAX_POOL_BATCH_SIZE as MAX_BATCH_SIZE

if TYPE_CHECKING:
    from benchsmith.graphs.jobs.nuggets import NuggetsResult

# The jobs load when the command runs (graphs/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy. Result types are for annotations only.
run_nuggets = deferred("benchsmith.graphs.jobs.nuggets", "nuggets")
estimate_nuggets = deferred("benchsmith.graphs.jobs.nuggets", "estimate_nuggets")

TABLE_ROWS = (("question", "question"), ("sub_questions", "sub-questions"), ("closed_book_answer", "closed-book answer"),
              ("fusion:inference", "fusion (inference)"), ("answer", "accepted answer"), ("nuggets", "nuggets"),
              ("fusion:oracle", "fusion (oracle)"), ("fusion:all", "fusion (all)"))


def nuggets(
    questions: Annotated[Path, typer.Argument(
        help="Questions with accepted answers: a JSONL file of {id, question, answer[, tags]} or a Stack Exchange "
             "dump's Posts.xml.", show_default=False)],
    corpus: Annotated[Optional[list[str]], typer.Option(
        "--corpus", help="The documents: a directory or git checkout (code split at definitions, Markdown at "
                         "headings), a file, a BEIR corpus, or 'stdlib'. Repeat for several.")] = None,
    collection: Annotated[Optional[str], typer.Option(
        help="Use an ingested Chroma collection as the corpus instead of --corpus.")] = None,
    tag: Annotated[Optional[list[str]], typer.Option(
        "--tag", help="Keep questions with this tag (any of the given ones). Repeat for several.")] = None,
    limit: Annotated[Optional[int], typer.Option(min=1, help="Only the first N questions.")] = None,
    llm: Annotated[str, typer.Option(
        help="Model that writes nuggets, sub-questions and closed-book answers and judges support: 'baseline' "
             "(offline, extractive and lexical) or openai:<model>.")] = "baseline",
    embedder: Annotated[str, typer.Option(help="Embedder of the dense retriever.")] = DEFAULT_EMBEDDER,
    max_nuggets: Annotated[int, typer.Option(min=1, help="At most this many nuggets per question.")]
    = DEFAULT_MAX_NUGGETS,
    pool_depth: Annotated[int, typer.Option(min=1, help="Chunks each technique adds to a question's pool.")]
    = DEFAULT_POOL_DEPTH,
    batch_size: Annotated[int, typer.Option(min=1, max=MAX_BATCH_SIZE, help="Pooled chunks per support call.")]
    = MAX_BATCH_SIZE,
    fusion: Annotated[str, typer.Option(
        help="Fusion of BM25 and dense runs: combsum (min-max normalized sum) or rrf.")] = "combsum",
    all_nuggets_supported: Annotated[bool, typer.Option(
        "--all-nuggets-supported", help="Also drop questions with any nugget no pooled chunk supports.")] = False,
    chunk_size: Annotated[int, typer.Option(min=1, help="Largest chunk, in characters.")] = DEFAULT_CHUNK_SIZE,
    min_chars: Annotated[int, typer.Option(min=0, help="Shorter chunks are left out.")] = DEFAULT_MIN_CHARS,
    concurrency: Annotated[int, typer.Option(min=1, help="Questions or batches worked on at once.")] = 4,
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
    """Build a nugget-judged benchmark from real questions and accepted answers (FreshStack).

    Per question: a model writes the nuggets (the facts a complete answer needs); the question,
    model-written sub-questions and a closed-book answer (inference setting) and the accepted
    answer and the nuggets (oracle setting) are each retrieved by BM25 and dense retrieval and
    fused; the top --pool-depth chunks of each are pooled and judged against every nugget, a
    batch of chunks per call. Writes a BEIR directory, nuggets.jsonl, nugget-qrels.trec (for
    `benchsmith evaluate --nugget-qrels`), every technique's runs and nuggets-report.md/.html.
    """
    offline_environment()
    tags = tag or []
    if dry_run:
        print_estimate(guarded(lambda: estimate_nuggets(questions, tags=tags, limit=limit, llm=llm,
                                                        max_nuggets=max_nuggets, pool_depth=pool_depth,
                                                        batch_size=batch_size, chunk_size=chunk_size)))
        return
    run_id = run_id or new_run_id("nuggets")
    source = f"collection {collection}" if collection else ", ".join(corpus or [])
    console.print(f"[bold]nuggets[/] run [cyan]{shown(run_id)}[/] · {shown(questions)} · corpus {shown(source)} · "
                  f"model {shown(llm)}",
                  highlight=False)
    result = guarded(lambda: run_reported(
        run_nuggets, run_id=run_id, questions=questions, corpus=corpus or [], collection=collection, tags=tags,
        limit=limit, llm=llm, embedder=embedder, max_nuggets=max_nuggets, pool_depth=pool_depth,
        batch_size=batch_size, fusion=fusion, all_nuggets_supported=all_nuggets_supported, chunk_size=chunk_size,
        min_chars=min_chars, concurrency=concurrency, workspace=workspace, chroma_host=chroma_host,
        database=database,
        **model_options(rate_limit, timeout, max_attempts, structured_output)))
    print_nuggets_summary(result)


def print_nuggets_summary(result: NuggetsResult) -> None:
    dropped = ", ".join(f"{count} ({reason})" for reason, count in result.dropped.items()) or "none"
    console.print(f"[bold]{result.kept} of {result.questions_read} questions kept[/] · {result.nuggets} nuggets · "
                  f"support rate {result.support_rate:.1%} · dropped: {shown(dropped)}", highlight=False)
    table = Table(title=f"Pooling · run {shown(result.run_id)} (α-nDCG@10 / Coverage@20 / Recall@50)")
    table.add_column("technique", no_wrap=True)
    for retriever in ("BM25", "dense", "BM25 + dense"):
        table.add_column(retriever, justify="right", no_wrap=True)
    for key, label in TABLE_ROWS:
        if key in result.table:
            cells = ["/".join(f"{result.table[key][retriever][m]:.2f}" for m in ("alpha_nDCG@10", "Coverage@20", "R@50"))
                     for retriever in ("bm25", "dense", "fused")]
            table.add_row(label, *cells)
    console.print(table)
    print_paths({"report": result.report["html"], "markdown": result.report["markdown"],
                 "benchmark": result.benchmark, "nuggets": result.nuggets_file, "nugget qrels": result.nugget_qrels})
    print_usage(result.usage)
