"""``benchsmith hardneg build | score``: multi-condition queries with hard negatives (MultiConIR),
and how retrievers and rerankers hold up on them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchsmith.cli.console import Table, console, fail, guarded, print_paths, print_usage, report_paths, shown
from benchsmith.cli.deferred import deferred
from benchsmith.cli.job_command import run_job_command
from benchsmith.cli.settings import RunOptions, settings_options
from benchsmith.graphs.contexts.hardneg import HardnegContext
from benchsmith.graphs.contexts.hardneg_score import HardnegScoreContext
from benchsmith.jobs.defaults import HARDNEG_SCORERS
from benchsmith.stores.persistence.files import write_json_atomic
from benchsmith.tools.offline import offline_environment

if TYPE_CHECKING:
    from benchsmith.jobs.hardneg import HardnegBuildResult, HardnegScoreResult

# The jobs load when the command runs (benchsmith/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy. Result types are for annotations only.
run_build = deferred("benchsmith.jobs.hardneg", "build_hardneg")
estimate_hardneg = deferred("benchsmith.jobs.hardneg", "estimate_hardneg")
rescore_tables = deferred("benchsmith.jobs.hardneg", "rescore_tables")
score_hardneg = deferred("benchsmith.jobs.hardneg", "score_hardneg")
estimate_scoring = deferred("benchsmith.jobs.hardneg", "estimate_scoring")

app = typer.Typer(
    help="Multi-condition queries with hard negatives (MultiConIR): build a dataset from any corpus, "
    "then score how retrievers and rerankers hold up as conditions accumulate.",
    no_args_is_help=True,
)


@app.command()
@settings_options(HardnegContext)
def build(
    sources: Annotated[
        list[str] | None,
        typer.Argument(
            help="Directories, files, a BEIR corpus.jsonl or 'stdlib' (cleaned as `benchsmith ingest` cleans them).",
            show_default=False,
        ),
    ] = None,
    collection: Annotated[
        str | None, typer.Option(help="An ingested collection instead of SOURCES: each chunk is a source document.")
    ] = None,
    *,
    settings: dict[str, Any],
    run_options: RunOptions,
) -> None:
    """Build multi-condition queries with hard-negative documents from a corpus.

    Per source document: N condition sentences (verbatim), queries with k = 1..N conditions in
    instruction and descriptive style, a rewrite of each sentence that breaks its condition, the
    graded ladder HN1..HN_N and the single-miss set by sentence replacement, each document checked
    by a judge (rebuilt once, then dropped). Writes rows.jsonl, multiconir/hardneg.csv (+ Task1.csv,
    Task2_&_3.csv in the reference layout), beir/task1..3 and stats.json into the run directory.
    """
    arguments = {"collection": collection, **settings}
    run_job_command(
        "hardneg",
        run_options,
        title="hardneg build",
        run=run_build,
        arguments={"sources": sources or [], **arguments},
        estimate=estimate_hardneg,
        summary=print_build_summary,
        about=f" · {shown(collection or ', '.join(sources or []))} · {shown(settings['domain'])} · "
        f"N = {settings['conditions']} · {shown(settings['negatives'])} negatives · "
        f"{shown(settings['llm'])}",
    )


def print_build_summary(result: HardnegBuildResult) -> None:
    table = Table(title=f"hardneg build · run {shown(result.run_id)}")
    table.add_column("count")
    table.add_column("value", justify="right")
    table.add_row("source documents", f"{result.documents:,}")
    table.add_row("rows kept", f"{result.rows:,}")
    for task, rows in result.task_rows.items():
        table.add_row(f"  rows for {task}", f"{rows:,}")
    for reason, count in result.dropped.items():
        table.add_row(f"dropped: {reason.replace('_', ' ')}", f"{count:,}")
    verification = result.verification
    if verification.get("checked"):
        table.add_row("hard negatives checked", f"{verification['checked']:,}")
        table.add_row("  verified first time", f"{verification['verified_first_time']:,}")
        table.add_row("  rebuilt, then verified", f"{verification['rebuilt_and_verified']:,}")
        table.add_row("  dropped", f"{verification['dropped']:,}")
    console.print(table)
    if result.files:
        print_paths(
            {
                "dataset": result.files["dataset"],
                "task 1 csv": result.files["task1"],
                "task 2/3 csv": result.files["task2_3"],
                "BEIR": result.files["beir_task1"].parent,
                "rows": result.files["rows"],
                "statistics": result.files["stats"],
            }
        )
    print_usage(result.usage)


@app.command()
@settings_options(HardnegScoreContext)
def score(
    dataset: Annotated[
        str | None,
        typer.Argument(help="A hardneg build run directory or run id, or a hardneg.csv.", show_default=False),
    ] = None,
    retriever: Annotated[
        list[str] | None,
        typer.Option(
            "--retriever",
            help="bm25 (both IDF variants), bm25:corpus, bm25:row, dense or dense:MODEL, or your own retriever "
            "(http://HOST/PATH, py:package.module:object: it ranks each query's candidates in its index). Repeat.",
            show_default=", ".join(HARDNEG_SCORERS),
        ),
    ] = None,
    rerank: Annotated[
        list[str] | None,
        typer.Option(
            "--rerank", help="A sentence-transformers CrossEncoder (name or path) scoring every pair. Repeat."
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Folder for the score tables and the report (default: scores/ in the run directory)."),
    ] = None,
    task1: Annotated[
        Path | None,
        typer.Option(help="Only re-score an existing Task 1 table (Index, Query{k}_Positive, Query{k}_HN1)."),
    ] = None,
    task2: Annotated[
        Path | None,
        typer.Option(
            help="Only re-score an existing Task 2 table (Index, Query10_Positive, Query10_HN1..HN10; instruction "
            "style)."
        ),
    ] = None,
    task3: Annotated[
        Path | None,
        typer.Option(
            help="Only re-score an existing Task 3 table (as Task 2, descriptive-style queries); needs --task2."
        ),
    ] = None,
    json_file: Annotated[
        Path | None,
        typer.Option(
            "--json",
            help="Write the measures here with the reference's keys (task1.win_rate, task1.avg_diff, "
            "task2.pairs, task3.change_rate).",
        ),
    ] = None,
    *,
    settings: dict[str, Any],
    run_options: RunOptions,
) -> None:
    """Score every (query, candidate) pair of a dataset with retrievers and rerankers.

    Writes <scorer>_task1/2/3_results.csv (the reference's score-table layout), then the
    measures: Task 1 win rate and mean score difference per k, Task 2 win rate of every adjacent
    pair of the ladder, Task 3 flip rate between query styles, each with bootstrap intervals over
    rows, and hardneg-report.md/.html with the worst rows. Scoring is a run (listed by
    `benchsmith runs`), one step per scorer: the same command with its --run-id resumes an
    interrupted run, scoring only the scorers that had not finished, and reports a finished one.

    With --task1/--task2/--task3 it only re-scores existing tables (published or third-party
    results) into --json: that reads a few CSV files and computes the measures in seconds, so
    there is nothing to resume and it makes no run (--run-id, --database and --dry-run do not
    apply).
    """
    offline_environment()
    if task1 or task2 or task3:
        if (
            dataset is not None
            or retriever
            or rerank
            or run_options.run_id
            or settings["database"]
            or run_options.dry_run
        ):
            fail(
                "--task1/--task2/--task3 re-score existing tables (no run): give no DATASET, --retriever, --rerank, "
                "--run-id, --database or --dry-run"
            )
        measures = guarded(lambda: rescore_tables(task1, task2, task3))
        print_reference_measures("score tables", measures)
        if json_file is not None:
            write_json_atomic(json_file, measures)
            console.print(f"{'json:':<10}{shown(json_file)}", highlight=False)
        return
    if dataset is None:
        fail("give a DATASET to score, or --task1/--task2/--task3 FILE to re-score existing score tables")
    retrievers = retriever if retriever is not None else ([] if rerank else list(HARDNEG_SCORERS))
    scorers = {"retrievers": retrievers, "rerankers": rerank or [], "output_dir": out}
    result = run_job_command(
        "hardneg-score",
        run_options,
        title="hardneg score",
        run=score_hardneg,
        arguments={"dataset": dataset, **scorers, **settings},
        estimate=estimate_scoring,
        summary=print_score_summary,
        about=f" · {shown(dataset)}",
    )
    if result is not None and json_file is not None:
        payload = result.reference[result.scorers[0]] if len(result.scorers) == 1 else {"scorers": result.reference}
        write_json_atomic(json_file, payload)
        console.print(f"{'json:':<10}{shown(json_file)}", highlight=False)


def print_reference_measures(title: str, measures: dict[str, Any]) -> None:
    if "task1" in measures:
        table = Table(title=f"Task 1 · {shown(title)}")
        table.add_column("k", justify="right")
        table.add_column("win rate", justify="right")
        table.add_column("mean difference", justify="right")
        for k, rate in measures["task1"]["win_rate"].items():
            table.add_row(k, f"{rate:.3f}", f"{measures['task1']['avg_diff'][k]:.4f}")
        console.print(table)
    if "task2" in measures:
        table = Table(title=f"Task 2 · {shown(title)}")
        table.add_column("pair")
        table.add_column("win rate", justify="right")
        for pair, rate in measures["task2"]["pairs"].items():
            table.add_row(pair, f"{rate:.3f}")
        console.print(table)
    if "task3" in measures:
        console.print(f"Task 3 · change rate between query styles: {measures['task3']['change_rate']:.3f}")


def print_score_summary(result: HardnegScoreResult) -> None:
    results = result.results()
    table = Table(title=f"hardneg score · {shown(results['dataset']['name'])} · {results['dataset']['rows']} rows")
    table.add_column("scorer", no_wrap=True)
    ks = []
    for scorer in results["scorers"].values():
        if "task1" in scorer:
            ks = sorted(scorer["task1"]["win_rate"], key=int)
            break
    ks_shown = [k for k in ks if k in ("1", ks[len(ks) // 2] if ks else "", ks[-1] if ks else "")]
    for k in ks_shown:
        table.add_column(f"win k={k}", justify="right")
    table.add_column("P>HN1", justify="right")
    table.add_column("ladder mean", justify="right")
    table.add_column("flip rate", justify="right")
    for label, scorer in results["scorers"].items():
        cells = [f"{scorer['task1']['win_rate'][k]['mean']:.3f}" if "task1" in scorer else "–" for k in ks_shown]
        if "task2" in scorer:
            pairs = [pair["mean"] for pair in scorer["task2"]["pairs"].values()]
            cells += [
                f"{pairs[0]:.3f}",
                f"{sum(pairs) / len(pairs):.3f}",
                f"{scorer['task3']['change_rate']['mean']:.3f}",
            ]
        else:
            cells += ["–", "–", "–"]
        table.add_row(shown(label), *cells)
    console.print(table)
    print_paths(
        {
            **report_paths(result.report),
            "score tables": result.output_dir,
        }
    )
