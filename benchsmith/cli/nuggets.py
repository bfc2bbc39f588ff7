"""``benchsmith nuggets``: a nugget-judged benchmark from real questions with accepted answers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchsmith.cli.console import Table, console, print_paths, print_usage, report_paths, shown
from benchsmith.cli.deferred import deferred
from benchsmith.cli.job_command import run_job_command
from benchsmith.cli.settings import RunOptions, settings_options
from benchsmith.graphs.contexts.nuggets import NuggetsContext

if TYPE_CHECKING:
    from benchsmith.jobs.nuggets import NuggetsResult

# The jobs load when the command runs (benchsmith/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy. Result types are for annotations only.
run_nuggets = deferred("benchsmith.jobs.nuggets", "nuggets")
estimate_nuggets = deferred("benchsmith.jobs.nuggets", "estimate_nuggets")

TABLE_ROWS = (
    ("question", "question"),
    ("sub_questions", "sub-questions"),
    ("closed_book_answer", "closed-book answer"),
    ("fusion:inference", "fusion (inference)"),
    ("answer", "accepted answer"),
    ("nuggets", "nuggets"),
    ("fusion:oracle", "fusion (oracle)"),
    ("fusion:all", "fusion (all)"),
)


@settings_options(NuggetsContext)
def nuggets(
    questions: Annotated[
        Path,
        typer.Argument(
            help="Questions with accepted answers: a JSONL file of {id, question, answer[, tags]} or a Stack Exchange "
            "dump's Posts.xml.",
            show_default=False,
        ),
    ],
    corpus: Annotated[
        list[str] | None,
        typer.Option(
            "--corpus",
            help="The documents: a directory or git checkout (code split at definitions, Markdown at "
            "headings), a file, a BEIR corpus, or 'stdlib'. Repeat for several.",
        ),
    ] = None,
    collection: Annotated[
        str | None, typer.Option(help="Use an ingested Chroma collection as the corpus instead of --corpus.")
    ] = None,
    *,
    settings: dict[str, Any],
    run_options: RunOptions,
) -> None:
    """Build a nugget-judged benchmark from real questions and accepted answers (FreshStack).

    Per question: a model writes the nuggets (the facts a complete answer needs); the question,
    model-written sub-questions and a closed-book answer (inference setting) and the accepted
    answer and the nuggets (oracle setting) are each retrieved by BM25 and dense retrieval and
    fused; the top --pool-depth chunks of each are pooled and judged against every nugget, a
    batch of chunks per call. Writes a BEIR directory, nuggets.jsonl, nugget-qrels.trec (for
    `benchsmith evaluate --nugget-qrels`), every technique's runs and nuggets-report.md/.html.
    """
    source = f"collection {collection}" if collection else ", ".join(corpus or [])
    run_job_command(
        "nuggets",
        run_options,
        run=run_nuggets,
        arguments={"questions": questions, "corpus": corpus or [], "collection": collection, **settings},
        estimate=estimate_nuggets,
        summary=print_nuggets_summary,
        about=f" · {shown(questions)} · corpus {shown(source)} · model {shown(settings['llm'])}",
    )


def print_nuggets_summary(result: NuggetsResult) -> None:
    dropped = ", ".join(f"{count} ({reason})" for reason, count in result.dropped.items()) or "none"
    console.print(
        f"[bold]{result.kept} of {result.questions_read} questions kept[/] · {result.nuggets} nuggets · "
        f"support rate {result.support_rate:.1%} · dropped: {shown(dropped)}",
        highlight=False,
    )
    table = Table(title=f"Pooling · run {shown(result.run_id)} (α-nDCG@10 / Coverage@20 / Recall@50)")
    table.add_column("technique", no_wrap=True)
    for retriever in ("BM25", "dense", "BM25 + dense"):
        table.add_column(retriever, justify="right", no_wrap=True)
    for key, label in TABLE_ROWS:
        if key in result.table:
            cells = [
                "/".join(f"{result.table[key][retriever][m]:.2f}" for m in ("alpha_nDCG@10", "Coverage@20", "R@50"))
                for retriever in ("bm25", "dense", "fused")
            ]
            table.add_row(label, *cells)
    console.print(table)
    print_paths(
        {
            **report_paths(result.report, with_results=False),
            "benchmark": result.benchmark,
            "nuggets": result.nuggets_file,
            "nugget qrels": result.nugget_qrels,
        }
    )
    print_usage(result.usage)
