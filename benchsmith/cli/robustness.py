"""``benchsmith robustness``: how far measures move on a paraphrase run's test sets, before and
after re-judging the unjudged documents that paraphrasing brings up (ECAsT)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchsmith.cli.console import Table, console, fail, print_paths, print_usage, report_paths, shown
from benchsmith.cli.deferred import deferred
from benchsmith.cli.job_command import run_job_command
from benchsmith.cli.judges import judge_ensemble_option, judges_given
from benchsmith.cli.settings import HISTORY_MODES, RETRIEVER_SPECS, RunOptions, repeated_option, settings_options
from benchsmith.graphs.contexts.robustness import RobustnessContext
from benchsmith.jobs.defaults import ROBUSTNESS_HISTORIES, ROBUSTNESS_RETRIEVERS

if TYPE_CHECKING:
    from benchsmith.jobs.robustness import RobustnessResult

# The jobs load when the command runs (benchsmith/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy. Result types are for annotations only.
run_robustness = deferred("benchsmith.jobs.robustness", "robustness")
estimate_robustness = deferred("benchsmith.jobs.robustness", "estimate_robustness")


def parse_run_options(values: list[str]) -> dict[str, Path]:
    """``--run NAME=FILE`` options as ``{NAME: FILE}``."""
    runs: dict[str, Path] = {}
    for value in values:
        name, separator, path = value.partition("=")
        if not separator or not name.strip() or not path.strip():
            fail(f"--run {value!r}: write TEST_SET=FILE, e.g. --run original=bm25.trec --run R1=bm25-R1.trec")
        if name.strip() in runs:
            fail(f"--run {name.strip()} is given twice")
        runs[name.strip()] = Path(path.strip())
    return runs


@settings_options(RobustnessContext)
def robustness(
    paraphrase_run: Annotated[
        str,
        typer.Argument(
            help="A paraphrase run (id or directory): its benchmark and test sets R1..Rn.", show_default=False
        ),
    ],
    retriever: Annotated[
        list[str] | None,
        repeated_option(
            "--retriever", f"With a corpus: {RETRIEVER_SPECS}. Repeat to compare.", ", ".join(ROBUSTNESS_RETRIEVERS)
        ),
    ] = None,
    history: Annotated[
        list[str] | None,
        repeated_option(
            "--history",
            f"{HISTORY_MODES}; here full sends the raw variants with their conversation, oracle the "
            "self-contained variants. Repeat.",
            ", ".join(ROBUSTNESS_HISTORIES),
        ),
    ] = None,
    run: Annotated[
        list[str] | None,
        typer.Option(
            "--run",
            help="Without a corpus (TREC CAsT): your system's TREC run file on a test set, as "
            "TEST_SET=FILE: --run original=FILE --run R1=FILE ... (run on the test sets' raw.tsv or "
            "self-contained.tsv).",
        ),
    ] = None,
    qrels: Annotated[Path | None, typer.Option(help="TREC qrels (default: the paraphrase run's).")] = None,
    judge: Annotated[
        list[str] | None,
        judge_ensemble_option("A relevance judge (CAsT 0-4 scale): 'baseline' (offline, lexical) or openai:<model>."),
    ] = None,
    *,
    settings: dict[str, Any],
    run_options: RunOptions,
) -> None:
    """Measure how far retrieval measures move when every turn is paraphrased, and how much of it is unjudged documents.

    Scores the original and each test set of a paraphrase run (by retrieval over the benchmark's
    corpus, or from your run files with --run), pools the unjudged documents of every run's top
    k, has the judges grade them on CAsT's 0-4 scale, appends the confirmed grades to
    augmented_qrels.tsv and recomputes the measures before and after. Writes
    robustness-report.md/.html and robustness.json into the run directory.
    """
    judges = judges_given(judge)
    runs = parse_run_options(run or [])
    histories = history or list(ROBUSTNESS_HISTORIES)
    arguments = {
        "runs": runs or None,
        "retrievers": retriever,
        "histories": histories,
        "qrels": qrels,
        "judges": judges,
        **settings,
    }
    run_job_command(
        "robustness",
        run_options,
        run=run_robustness,
        arguments={"paraphrase_run": paraphrase_run, **arguments},
        estimate=estimate_robustness,
        summary=print_robustness_summary,
        about=f" · {shown(paraphrase_run)} · "
        + shown(
            f"run files {', '.join(runs)}"
            if runs
            else f"{', '.join(retriever or ROBUSTNESS_RETRIEVERS)} × history {', '.join(histories)}"
        )
        + f" · judges {shown(', '.join(judges))}",
    )


def print_robustness_summary(result: RobustnessResult) -> None:
    results = result.results()
    measure, judged = results["primary_measure"], results["judged_measure"]
    table = Table(title=f"Robustness · run {shown(result.run_id)} · {measure} and {judged}, before → after re-judging")
    table.add_column("configuration", no_wrap=True)
    for name in result.sets:
        table.add_column(shown(name), justify="right")
    for configuration, means in result.means.items():
        for measure_name in (measure, judged):
            table.add_row(
                shown(f"{configuration} {measure_name}"),
                *(
                    f"{means['before'][name][measure_name]:.3f} → {means['after'][name][measure_name]:.3f}"
                    if name in means["before"]
                    else "–"
                    for name in result.sets
                ),
            )
    console.print(table)
    pool = results["pool"]
    console.print(
        f"{result.pooled:,} unjudged documents pooled, {pool['judged']:,} judged, {result.confirmed:,} "
        f"judgments confirmed ({pool['confirmed_relevant']:,} relevant, grade ≥ 2)",
        highlight=False,
    )
    for judge, relevant in pool.get("relevant_by_judge", {}).items():
        console.print(shown(f"  {judge} called {relevant:,} of {pool['judged']:,} judged documents relevant"))
    console.print(shown(f"relevance on the benchmark's scale: {results['scale']['mapping']}"))
    print_paths(
        {
            **report_paths(result.report),
            "augmented qrels": result.augmented_qrels,
        }
    )
    print_usage(result.usage)
