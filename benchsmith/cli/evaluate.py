"""``benchsmith evaluate``: score retrievers on a benchmark with standard IR measures."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchsmith.cli.console import (
    console,
    fail,
    guarded,
    print_group_table,
    print_measure_table,
    print_paths,
    print_usage,
    report_paths,
    shown,
)
from benchsmith.cli.deferred import deferred
from benchsmith.cli.job_command import run_job_command
from benchsmith.cli.settings import HISTORY_MODES, RETRIEVER_SPECS, RunOptions, repeated_option, settings_options
from benchsmith.evals.defaults import DEFAULT_MEASURES
from benchsmith.graphs.contexts.evaluate import EvaluationContext
from benchsmith.jobs.defaults import EVALUATE_HISTORIES, EVALUATE_RETRIEVERS
from benchsmith.stores.persistence.files import write_json_atomic
from benchsmith.tools.offline import offline_environment

if TYPE_CHECKING:
    from benchsmith.jobs.evaluate import EvaluationResult

# The jobs load when the command runs (benchsmith/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy.
run_evaluation = deferred("benchsmith.jobs.evaluate", "evaluate")
estimate_evaluation = deferred("benchsmith.jobs.evaluate", "estimate_evaluation")
checked_measures = deferred("benchsmith.jobs.evaluate", "checked_measures")
measure_runs = deferred("benchsmith.jobs.evaluate", "measure_runs")


@settings_options(EvaluationContext)
def evaluate(
    benchmark: Annotated[
        str | None,
        typer.Argument(
            help="A BEIR directory (corpus.jsonl, queries.jsonl, qrels/<split>.tsv), a synthesis run directory, "
            "or a run id in the workspace.",
            show_default=False,
        ),
    ] = None,
    retriever: Annotated[
        list[str] | None,
        repeated_option("--retriever", f"{RETRIEVER_SPECS}. Repeat to compare.", ", ".join(EVALUATE_RETRIEVERS)),
    ] = None,
    history: Annotated[
        list[str] | None,
        repeated_option(
            "--history",
            f"How much of the conversation each query carries: {HISTORY_MODES}. Repeat to compare.",
            ", ".join(EVALUATE_HISTORIES),
        ),
    ] = None,
    run: Annotated[
        list[Path] | None,
        typer.Option(
            "--run",
            help="A TREC run file of your own system, evaluated beside the --retriever configurations "
            "(named by its file name; with no --retriever, only the run files). Repeat to compare. "
            "Without a BENCHMARK: only measure the files against --qrels.",
        ),
    ] = None,
    json_file: Annotated[Path | None, typer.Option("--json", help="Also write the scores as JSON here.")] = None,
    *,
    settings: dict[str, Any],
    run_options: RunOptions,
) -> None:
    """Score retrievers, and your own system's TREC run files, on a benchmark with standard IR
    measures, per turn and per switch type.

    Writes a TREC run file per configuration, report.md, report.html and results.json into
    the run directory. With --run and --qrels (or --nugget-qrels) but no BENCHMARK it only
    measures the run files.
    """
    offline_environment()
    asked = None if settings["measures"] == DEFAULT_MEASURES else list(settings["measures"])
    if benchmark is None:
        if not run or (settings["qrels"] is None and settings["nugget_qrels"] is None):
            fail(
                "give a BENCHMARK to evaluate, or --run FILE --qrels FILE (or --nugget-qrels FILE) to measure "
                "existing runs"
            )
        measures = guarded(lambda: checked_measures(asked, settings["nugget_qrels"] is not None))
        guarded(
            lambda: _measure_run_files(
                run, settings["qrels"], measures, json_file, settings["batch_size"], settings["nugget_qrels"]
            )
        )
        return
    runs = list(run or [])
    retrievers = retriever or ([] if runs else list(EVALUATE_RETRIEVERS))
    histories = history or list(EVALUATE_HISTORIES)
    rerank = settings["rerank"]
    evaluated = [f"{', '.join(retrievers)} × history {', '.join(histories)}"] if retrievers else []
    evaluated += [f"run file{'s' if len(runs) > 1 else ''} {', '.join(path.name for path in runs)}"] if runs else []
    arguments = {"retrievers": retrievers, "histories": histories, "runs": runs, **settings}
    result = run_job_command(
        "evaluate",
        run_options,
        run=run_evaluation,
        arguments={"benchmark": benchmark, **arguments},
        estimate=estimate_evaluation,
        summary=print_evaluation,
        about=f" · {shown(benchmark)} · {shown(' + '.join(evaluated))}"
        + (f" · rerank {shown(rerank)}" if rerank else ""),
    )
    if result is not None and json_file is not None:
        results = result.results()
        _write_json(json_file, {"aggregate": results["aggregate"], "per_query": results["per_query"]})


def print_evaluation(result: EvaluationResult) -> None:
    if result.already_finished:  # its warnings were printed when it ran
        for warning in result.warnings:
            console.print(f"[yellow]warning:[/] {shown(warning)}", highlight=False, soft_wrap=True)
    print_measure_table(
        result.aggregate, result.measures, f"Evaluation · run {result.run_id}", highlight=result.primary_measure
    )
    by_switch = result.results().get("by_switch") or {}
    if by_switch:
        print_group_table(
            by_switch,
            result.primary_measure,
            f"{result.primary_measure} per switch type (queries) · run {result.run_id}",
        )
    print_paths(report_paths(result.report))
    print_usage(result.usage)


def _measure_run_files(
    run_files: list[Path],
    qrels_file: Path | None,
    measures: list[str],
    json_file: Path | None,
    batch_size: int,
    nugget_qrels: Path | None = None,
) -> None:
    scored = measure_runs(run_files, qrels_file, measures, batch_size, nugget_qrels=nugget_qrels)
    names = [Path(name).name for name in scored]
    labels = names if len(set(names)) == len(names) else list(scored)  # file names, unless two share one
    judged = len(next(iter(scored.values())).per_query) if scored else 0
    print_measure_table(
        {label: result.aggregate for label, result in zip(labels, scored.values())},
        measures,
        f"{judged} judged queries · {qrels_file or nugget_qrels}",
    )
    for name, result in scored.items():
        if result.unjudged_queries:
            examples = ", ".join(map(repr, result.unjudged_examples))
            more = ", …" if result.unjudged_queries > len(result.unjudged_examples) else ""
            console.print(
                f"{shown(name)}: {result.unjudged_queries} queries have no judgments and were not measured "
                f"({shown(examples)}{more})",
                highlight=False,
            )
    if json_file is not None:
        as_json = {
            name: {"aggregate": result.aggregate, "per_query": result.per_query} for name, result in scored.items()
        }
        _write_json(json_file, next(iter(as_json.values())) if len(as_json) == 1 else {"runs": as_json})


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    write_json_atomic(path, payload)
    console.print(f"{'json:':<10}{shown(path)}", highlight=False)
