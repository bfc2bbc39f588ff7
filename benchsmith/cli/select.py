"""``benchsmith select``: pick the best retriever configuration for real user queries, without
ground truth (the SEARA method)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchsmith.cli.console import Table, console, print_paths, print_usage, shown
from benchsmith.cli.deferred import deferred
from benchsmith.cli.job_command import run_job_command
from benchsmith.cli.judges import judge_ensemble_option, judges_given
from benchsmith.cli.settings import RETRIEVER_SPECS, RunOptions, repeated_option, settings_options
from benchsmith.graphs.contexts.select import SelectContext
from benchsmith.tools.defaults import MAX_TOP_K

if TYPE_CHECKING:
    from benchsmith.jobs.select import SelectionResult

# The jobs load when the command runs (benchsmith/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy. Result types are for annotations only.
run_selection = deferred("benchsmith.jobs.select", "select")
estimate_selection = deferred("benchsmith.jobs.select", "estimate_selection")

RANKING_ROWS = 15


@settings_options(SelectContext)
def select(
    queries: Annotated[
        Path,
        typer.Argument(
            help='Real user queries, no labels: a text file (one per line) or JSONL ({"id", "question", '
            '"history": [{"question", "answer"}]}).',
            show_default=False,
        ),
    ],
    corpus: Annotated[
        list[str],
        typer.Option(
            "--corpus",
            help="The documents: a folder, a file, a BEIR corpus.jsonl or 'stdlib'. Repeat for several.",
            show_default=False,
        ),
    ],
    space: Annotated[
        Path | None,
        typer.Option(
            help="A YAML strategy space (chunking, retriever, rewrite, rerank, filter, top_k, search, order); the "
            "options below replace its dimensions."
        ),
    ] = None,
    retriever: Annotated[
        list[str] | None,
        repeated_option(
            "--retriever",
            f"{RETRIEVER_SPECS}. Repeat. Your own (alone; SPEC@raw to give it the conversation) is one more fixed "
            "configuration, not a level.",
            "bm25",
        ),
    ] = None,
    chunking: Annotated[
        list[str] | None,
        typer.Option(
            "--chunking",
            help="'whole' (documents as they are) or size=N[,overlap=N][,merge=N][,split_above=N]. Repeat.",
            show_default="whole",
        ),
    ] = None,
    rewrite: Annotated[
        list[str] | None,
        typer.Option(
            "--rewrite",
            help="none, rewrite (a self-contained rewrite by --llm) or expand:N (up to N more queries by "
            "--llm, fused). Repeat.",
            show_default="none",
        ),
    ] = None,
    rerank: Annotated[
        list[str] | None,
        typer.Option("--rerank", help="none or a cross-encoder (name or path). Repeat.", show_default="none"),
    ] = None,
    filter_: Annotated[
        list[str] | None,
        typer.Option(
            "--filter", help="none or metadata predicates, e.g. 'title^json & chars>=200'. Repeat.", show_default="none"
        ),
    ] = None,
    top_k: Annotated[
        list[int] | None,
        typer.Option(
            "--top-k", min=1, max=MAX_TOP_K, help="Chunks handed to the generator. Repeat.", show_default="10"
        ),
    ] = None,
    search: Annotated[
        str | None,
        typer.Option(
            help="grid (every combination) or staged (greedy, one dimension at a time in --order).", show_default="grid"
        ),
    ] = None,
    order: Annotated[
        str | None,
        typer.Option(
            help="Staged search: the dimensions in the order to settle them, comma-separated "
            "(e.g. retriever,chunking,top_k)."
        ),
    ] = None,
    judge: Annotated[
        list[str] | None,
        judge_ensemble_option(
            "'baseline' (offline, lexical), openai:<model>, or qrels:FILE (answers from known labels)."
        ),
    ] = None,
    *,
    settings: dict[str, Any],
    run_options: RunOptions,
) -> None:
    """Pick the best retriever configuration for real queries, without labels (SEARA).

    Every configuration of the strategy space retrieves its top K for every query; the pooled
    chunks are judged once, minimal facts are extracted and matched across chunkings, and the
    configurations are ranked by PR-AUC over facts. Writes run-files/, selection.json,
    report.md, report.html and best-configuration.yaml into the run directory.
    """
    dimensions = {
        "retrievers": retriever or (),
        "chunkings": chunking or (),
        "rewrites": rewrite or (),
        "reranks": rerank or (),
        "filters": filter_ or (),
        "top_k": top_k or (),
        "search": search,
        "order": [part.strip() for part in order.split(",") if part.strip()] if order else (),
    }
    judges = judges_given(judge)
    arguments = {"corpus": corpus, "space": space, "judges": judges, **dimensions, **settings}
    run_job_command(
        "select",
        run_options,
        run=run_selection,
        arguments={"queries": queries, **arguments},
        estimate=estimate_selection,
        summary=print_selection,
        about=f" · {shown(queries)} · corpus {shown(', '.join(map(str, corpus)))} · judges {shown(', '.join(judges))}",
    )


def print_selection(result: SelectionResult) -> None:
    results = result.results()
    table = Table(title=f"Configurations by PR-AUC · run {shown(result.run_id)}")
    for column, justify in (
        ("#", "right"),
        ("configuration", "left"),
        ("PR-AUC", "right"),
        ("95% interval", "right"),
        ("P@K", "right"),
        ("R@K", "right"),
    ):
        table.add_column(column, justify=justify, no_wrap=column != "configuration")
    for rank, configuration in enumerate(results["configurations"][:RANKING_ROWS], start=1):
        interval = configuration["pr_auc_interval"]
        depth = str(len(configuration["precision_at_k"]))
        table.add_row(
            str(rank),
            shown(configuration["name"]),
            f"{configuration['pr_auc']:.3f}",
            f"{interval['low']:.3f}–{interval['high']:.3f}" if interval["low"] is not None else "–",
            f"{configuration['precision_at_k'][depth]:.3f}",
            f"{configuration['recall_at_k'][depth]:.3f}",
        )
    console.print(table)
    if len(results["configurations"]) > RANKING_ROWS:
        console.print(f"({RANKING_ROWS} of {len(results['configurations'])} shown; the report has all)")
    if result.best is not None:
        console.print(f"[bold green]best:[/] {shown(result.best)}", highlight=False)
    else:
        console.print(f"[bold yellow]no winner:[/] {shown(', '.join(result.tied))} are tied", highlight=False)
    console.print(shown(results["separation"]["text"]))
    for label, pick in (("precision first", result.precision_first), ("recall first", result.recall_first)):
        console.print(
            f"{label}: {shown(pick['configuration'])}, top {pick['k']} (F{pick['beta']:g} {pick['f_beta']:.3f})",
            highlight=False,
        )
    share = result.pool_pairs / result.whole_corpus_pairs if result.whole_corpus_pairs else 0.0
    console.print(
        f"judged {result.pool_pairs:,} (query, chunk) pairs instead of {result.whole_corpus_pairs:,} for the "
        f"whole corpus ({share:.1%}); {verdicts_text(result.verdicts)}",
        highlight=False,
    )
    print_paths(
        {
            "report": result.report["html"],
            "markdown": result.report["markdown"],
            "results": result.report["results"],
            **({"best": result.report["best"]} if "best" in result.report else {}),
        }
    )
    print_usage(result.usage)


def verdicts_text(verdicts: dict[str, int]) -> str:
    """What this run judged, by where each verdict came from (a stored verdict is a cache hit)."""
    if not verdicts:
        return "no verdicts in this run"
    return (
        f"{verdicts['total']:,} verdicts in this run: {verdicts['model']:,} asked of a model, "
        f"{verdicts['stored']:,} from the verdict store (cache hits of earlier runs), {verdicts['offline']:,} from the offline baseline "
        "or labels"
    )
