"""``benchsmith work`` and ``benchsmith export``: workers on a run shared through PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from benchsmith.cli.console import console, errors, guarded, run_reported, shown
from benchsmith.cli.deferred import deferred
from benchsmith.cli.settings import settings_options
from benchsmith.graphs.runtime.bounds import MAX_CONCURRENCY, MAX_WORKERS
from benchsmith.graphs.runtime.settings import StoreOptions
from benchsmith.jobs.defaults import WORKER_CONCURRENCY
from benchsmith.jobs.registry import shared_summaries
from benchsmith.stores.persistence.postgres import DATABASE_ENV
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.offline import offline_environment

# The jobs load when the command runs (benchsmith/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy.
run_work = deferred("benchsmith.jobs.work", "work")
run_export = deferred("benchsmith.jobs.work", "export")
job_arguments = deferred("benchsmith.jobs.work", "job_arguments")

# What prints a shared run's result, by its job (benchsmith/jobs/registry.py): the job's own command's summary.
PRINTERS: dict[str, Callable[[Any], None]] = {
    run: deferred(module, name) for run, (module, name) in shared_summaries().items()
}
# Where a worker finds the run (workspace, database, Chroma server): the shared options; the lease is the run's.
WHERE_THE_RUN_IS = settings_options(StoreOptions, exclude=("lease_s",))


@WHERE_THE_RUN_IS
def work(
    run_id: Annotated[str, typer.Argument(help="The shared run to work on (started with --database).")],
    workers: Annotated[
        int, typer.Option(min=1, max=MAX_WORKERS, help="Worker processes to start on this machine.")
    ] = 1,
    concurrency: Annotated[
        int, typer.Option(min=1, max=MAX_CONCURRENCY, help="Items each worker works on at once.")
    ] = WORKER_CONCURRENCY,
    *,
    settings: dict[str, Any],
) -> None:
    """Join a shared run: claim items nobody holds until all are done, then write its files.

    Start a synthesis, an audit or a paraphrasing run with --database postgresql://USER@HOST/DATABASE, then run
    this on any number of machines that reach the same database, the same Chroma server (--chroma-host) and the
    same model endpoint. Each item is done once: a claim is atomic, and a worker that dies
    loses its lease (--lease of the run) to the others. Every worker that sees the last item
    done writes the run's files into its own workspace, the same bytes as one process writes.
    """
    offline_environment()
    database, chroma_host, workspace = settings["database"], settings["chroma_host"], settings["workspace"]
    job, _ = guarded(lambda: job_arguments(run_id, database))
    if workers > 1:
        _start_workers(run_id, database, workers, concurrency, chroma_host, workspace)
        return
    console.print(f"[bold]work[/] on {job} run [cyan]{shown(run_id)}[/] · concurrency {concurrency}", highlight=False)
    result = guarded(
        lambda: run_reported(
            run_work,
            run_id=run_id,
            database=database,
            concurrency=concurrency,
            chroma_host=chroma_host,
            workspace=workspace,
        )
    )
    PRINTERS[job](result)


@WHERE_THE_RUN_IS
def export(
    run_id: Annotated[str, typer.Argument(help="The shared run whose files to write.")],
    *,
    settings: dict[str, Any],
) -> None:
    """Write a shared run's files (when all its items are done) into this workspace."""
    offline_environment()
    job, _ = guarded(lambda: job_arguments(run_id, settings["database"]))
    result = guarded(lambda: run_reported(_export, run_id=run_id, **settings))
    PRINTERS[job](result)


def _export(*, resume: str, **arguments: Any) -> Any:
    return run_export(**arguments)  # an export has nothing to resume: it is run again


def _start_workers(
    run_id: str, database: str | None, workers: int, concurrency: int, chroma_host: str | None, workspace: Any
) -> None:
    """``workers`` worker processes of this command; the database URL goes through the
    environment, never a command line."""
    environment = {**os.environ, **({DATABASE_ENV: database} if database else {})}
    command = [
        sys.executable,
        "-m",
        "benchsmith.cli",
        "work",
        run_id,
        "--concurrency",
        str(concurrency),
        *(["--chroma-host", chroma_host] if chroma_host else []),
        *(["--workspace", str(workspace)] if workspace else []),
    ]
    console.print(f"starting {workers} workers on run [cyan]{shown(run_id)}[/]", highlight=False)
    processes = [subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL) for _ in range(workers)]
    try:
        codes = [process.wait() for process in processes]
    except KeyboardInterrupt:
        for process in processes:
            process.terminate()
        raise
    failed = [_ending(code) for code in codes if code != 0]
    if failed and _finished_here(run_id, workspace):
        # The others took the failed workers' items over (their leases ran out) and wrote the files.
        errors.print(
            f"{len(failed)} of {workers} workers failed ({', '.join(failed)}); the others finished: the "
            "run is finished and its files are written",
            highlight=False,
            soft_wrap=True,
        )
        return
    if failed:
        errors.print(
            f"{len(failed)} of {workers} workers failed ({', '.join(failed)}); the others' work is "
            f"kept: run `benchsmith work {shown(run_id)}` again to finish",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(1)
    console.print(f"all {workers} workers finished; run `benchsmith runs --database` for the figures", highlight=False)


def _ending(code: int) -> str:
    """How a worker process ended: ``exit 1`` or ``killed by SIGKILL``."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


def _finished_here(run_id: str, workspace: Any) -> bool:
    """Whether the run's record in this workspace says finished (a worker wrote its files)."""
    run_dir = RunDirectory(Workspace.resolve(workspace), run_id)
    return run_dir.exists() and run_dir.load().status == "finished"
