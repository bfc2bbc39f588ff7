"""``benchsmith publish RUN --format mtrag|hf --out DIR``: a synthesized benchmark in MTRAG's
conversation layout or as a Hugging Face dataset folder.

A command with no graph, so no context to derive options from (benchsmith/cli/settings.py): its
three options are declared here, with the API's names."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchsmith.cli.console import WorkspaceOption, console, guarded, shown
from benchsmith.cli.deferred import deferred

run_publish = deferred("benchsmith.jobs.publish", "publish")


def publish(
    run: Annotated[str, typer.Argument(help="A finished synthesis run: its id in the workspace, or its folder.")],
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help="mtrag: MTRAG's conversation layout (conversations.json, "
            "retrieval tasks, qrels, corpus), which `benchsmith evaluate` and `audit` "
            "read back; hf: a Hugging Face dataset folder (Parquet files and a dataset "
            "card) that datasets.load_dataset reads.",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", help="The folder to write (created if needed; files of the same names are replaced)."),
    ],
    workspace: WorkspaceOption = None,
) -> None:
    """Publish a synthesized benchmark in a layout other tools read: MTRAG's or a Hugging Face dataset.

    Turns without gold (unanswerable, underspecified) keep their labels and get no qrels; chunks
    held out for unanswerable turns, and their near-duplicates, are in no published corpus. The
    dataset card of --format hf states the run's settings, its label counts and its audit verdict.
    """
    result = guarded(lambda: run_publish(run, format=format, out=out, workspace=workspace))
    audited = "its audit verdict in the card" if result.audited else "no audit of it yet"
    console.print(
        f"published run [cyan]{shown(result.run_id)}[/] as {result.format} into {shown(result.out)}: "
        f"{result.conversations} conversations, {result.turns} turns, {result.documents} documents"
        + (f"; {audited}" if result.format == "hf" else "")
        + (f"; {result.rejected} turns its review rejected left out" if result.rejected else ""),
        highlight=False,
        soft_wrap=True,
    )
