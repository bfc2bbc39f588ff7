"""``benchsmith replay BENCHMARK --assistant SPEC``: the benchmark's conversations sent turn by turn
to your own assistant, what it retrieved and how it answered scored per turn."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchsmith.cli.console import console, print_measure_table, print_paths, report_paths, shown
from benchsmith.cli.deferred import deferred
from benchsmith.cli.job_command import run_job_command
from benchsmith.cli.settings import RunOptions, settings_options
from benchsmith.graphs.contexts.replay import ReplayContext

if TYPE_CHECKING:
    from benchsmith.jobs.replay import ReplayResult

run_replay = deferred("benchsmith.jobs.replay", "replay")
estimate_replay = deferred("benchsmith.jobs.replay", "estimate_replay")

ASSISTANT_SPECS = (
    "http://HOST/v1/chat/completions, #MODEL appended to name a model (an OpenAI-compatible chat endpoint that "
    "returns the ids of the passages it used in choices[0].message.passage_ids), or py:package.module:object (a callable "
    "(question, history) -> {'reply', 'passages'} or a compiled LangGraph graph)"
)


@settings_options(ReplayContext)
def replay(
    benchmark: Annotated[
        str,
        typer.Argument(
            help="A BEIR directory, a synthesis run directory, or a run id in the workspace.", show_default=False
        ),
    ],
    assistant: Annotated[str, typer.Option("--assistant", help=ASSISTANT_SPECS, show_default=False)],
    *,
    settings: dict[str, Any],
    run_options: RunOptions,
) -> None:
    """Replay a benchmark's conversations against your own assistant, turn by turn.

    Scores the passages it used on each turn against the benchmark's judgments, reads whether it
    abstained or asked back on turns without gold, and writes report.md, report.html and
    results.json (per switch type and turn label, the worst conversations whole).
    """
    run_job_command(
        "replay",
        run_options,
        run=run_replay,
        arguments={"benchmark": benchmark, "assistant": assistant, **settings},
        estimate=estimate_replay,
        summary=print_replay,
        about=f" · {shown(benchmark)} · assistant {shown(assistant)}",
    )


def print_replay(result: ReplayResult) -> None:
    print_measure_table({"assistant": result.aggregate}, list(result.aggregate), f"Replay · run {result.run_id}")
    without = result.without_gold
    if without.get("turns"):
        console.print(
            f"turns without gold: {without['turns']} · abstained {without['abstained']} · asked back "
            f"{without['asked_back']} · answered anyway {without['turns'] - without['handled']}",
            highlight=False,
        )
    judged = ", ".join(f"{aspect} {value:.2f}" for aspect, value in result.answers.items() if value is not None)
    if judged:
        console.print(f"replies judged (1-5): {judged}", highlight=False)
    if result.nugget_coverage is not None:
        console.print(f"nugget coverage of the replies (0-1): {result.nugget_coverage:.2f}", highlight=False)
    print_paths(report_paths(result.report))
