"""``benchsmith review RUN``: read a synthesized benchmark turn by turn in the browser; accept each
turn, reject it with a rubric class, or edit its question.

A command with no graph, so no context to derive options from (benchsmith/cli/settings.py): its
options are declared here (the page's --host, --port, --serve and --run-id as `benchsmith label` declares them)."""

from __future__ import annotations

from typing import Annotated

import typer

from benchsmith.cli.console import ChromaHostOption, WorkspaceOption, console, guarded, shown
from benchsmith.cli.deferred import deferred
from benchsmith.cli.label import HostOption, PortOption, RunIdOption, ServeOption, page_arguments

run_review = deferred("benchsmith.jobs.review", "review")


def review(
    run: Annotated[str, typer.Argument(help="A finished synthesis run: its id in the workspace, or its folder.")],
    reviewer: Annotated[str, typer.Option("--reviewer", help="Who reviews (recorded with each verdict).")] = "reviewer",
    host: HostOption = "127.0.0.1",
    port: PortOption = 8766,
    serve: ServeOption = True,
    run_id: RunIdOption = None,
    workspace: WorkspaceOption = None,
    chroma_host: ChromaHostOption = None,
) -> None:
    """Review a synthesized benchmark in the browser: accept, reject (with a rubric class) or edit each turn.

    Each turn shows its history, reply, gold or held-out passages, turn type and the quality gate's
    flags. Keys: a accept, r then 1-7 reject with a class of data/readings/RUBRIC.md, e edit the
    question (the original is kept), j/k next and back, n note. Every verdict is saved as it is
    made; the same --run-id resumes. Writes the verdicts in the readings format and the benchmark's
    BEIR folder without the rejected turns; `benchsmith publish` leaves them out too.
    """
    result = guarded(
        lambda: run_review(
            run,
            reviewer=reviewer,
            **page_arguments(host, port, serve, run_id, workspace, chroma_host),
        )
    )
    kappa = result.gate_agreement.get("cohen_kappa")
    console.print(
        f"review [cyan]{shown(result.run_id)}[/] of {shown(result.benchmark)}: {result.reviewed:,} of "
        f"{result.turns:,} turns reviewed; {result.accepted:,} accepted, {result.rejected:,} rejected "
        f"(left out of publish and the BEIR folder), {result.edited:,} edited; the quality gate against "
        f"the rejections: Cohen's κ {'undefined' if kappa is None else f'{kappa:.3f}'}",
        highlight=False,
        soft_wrap=True,
    )
    console.print(
        f"readings: {shown(result.readings)}; BEIR folder without the rejected turns: {shown(result.beir)}",
        highlight=False,
        soft_wrap=True,
    )
