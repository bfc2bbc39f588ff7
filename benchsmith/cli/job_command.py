"""The body every job command shares: a dry run prints its estimate, a run gets its id, a
headline, progress bars and a summary. A command module declares its arguments and what it prints."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from benchsmith.cli.console import console, guarded, print_estimate, run_reported, shown
from benchsmith.cli.settings import RunOptions
from benchsmith.stores.persistence.runs import new_run_id
from benchsmith.tools.offline import offline_environment

Result = TypeVar("Result")


def run_job_command(
    job: str,
    run_options: RunOptions,
    *,
    run: Callable[..., Result],
    arguments: dict[str, Any],
    estimate: Callable[..., Any],
    summary: Callable[[Result], None],
    about: str = "",
    title: str | None = None,
    notes: Sequence[str] = (),
    print_dry_run: Callable[[Any], None] = print_estimate,
) -> Result | None:
    """Run ``run(**arguments)`` as the run ``--run-id`` names (else a new ``job`` run) and print
    ``summary`` of its result; with ``--dry-run``, print what ``estimate(**arguments)`` (the job's
    dry run, benchsmith/jobs/common.estimate_of) says instead.

    The headline reads ``<title> run <id><about>`` (``about``: markup, user text already
    :func:`shown`); ``notes`` follow it (and a dry run's estimate) as plain text. Bad input ends
    with exit status 2 before any run starts."""
    offline_environment()
    if run_options.dry_run:
        print_dry_run(guarded(lambda: estimate(**arguments)))
        for note in notes:
            console.print(note, markup=False, highlight=False)
        return None
    run_id = run_options.run_id or new_run_id(job)
    console.print(f"[bold]{title or job}[/] run [cyan]{shown(run_id)}[/]{about}", highlight=False)
    for note in notes:
        console.print(note, markup=False, highlight=False)
    result = guarded(lambda: run_reported(run, run_id=run_id, **arguments))
    summary(result)
    return result
