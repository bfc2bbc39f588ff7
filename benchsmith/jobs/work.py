"""``benchsmith.work`` and ``benchsmith.export``: join a run shared through PostgreSQL.

A run started with ``database=`` (``--database``) records its job and API arguments in the
database. Any process on any machine that reaches the database (and the same Chroma server,
and the benchmark files at the same paths) joins it with :func:`work`: it calls the same job
with the same arguments, claims items nobody holds, and when every item is done writes the
run's files into its own workspace, byte for byte what one process writes.
:func:`export` only writes the files, and refuses while items are left.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any

from benchsmith.graphs.runtime.bounds import MAX_CONCURRENCY
from benchsmith.jobs.common import EventHandler, JobRun, check_within
from benchsmith.jobs.defaults import WORKER_CONCURRENCY
from benchsmith.jobs.registry import shared_jobs
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.postgres import database_url
from benchsmith.stores.persistence.postgres_runs import run_activity, run_arguments


def _shared_jobs() -> dict[str, Callable[..., JobRun]]:
    """The jobs whose items workers share: the registry's shared runs (benchsmith/jobs/registry.py)."""

    return {run: getattr(import_module(module), name) for run, (module, name) in shared_jobs().items()}


def work(
    run_id: str,
    *,
    database: str | None = None,
    workspace: str | Path | None = None,
    concurrency: int = WORKER_CONCURRENCY,
    chroma_host: str | None = None,
    on_event: EventHandler | None = None,
    resume: str | None = None,
) -> JobRun:
    """Work on the shared run ``run_id`` until all its items are done; return the job's result
    (a :class:`~benchsmith.SynthesisResult`, :class:`~benchsmith.AuditResult` or
    :class:`~benchsmith.ParaphraseResult`). ``chroma_host``
    overrides the run's when this machine reaches the Chroma server by another address."""

    url = _required_database(database)
    check_within(1, MAX_CONCURRENCY, concurrency=concurrency)
    job, arguments = run_arguments(url, run_id)
    jobs = _shared_jobs()
    if job not in jobs:
        raise InputError(f"run {run_id!r} is a {job} run; workers share only {', '.join(sorted(jobs))} runs")
    if chroma_host is not None:
        arguments = {**arguments, "chroma_host": chroma_host}
    return jobs[job](
        **arguments,
        run_id=run_id,
        database=url,
        workspace=workspace,
        concurrency=concurrency,
        on_event=on_event,
        resume=resume or f"benchsmith work {run_id}",
    )


def export(
    run_id: str,
    *,
    database: str | None = None,
    workspace: str | Path | None = None,
    chroma_host: str | None = None,
    on_event: EventHandler | None = None,
) -> JobRun:
    """Write the files of the shared run ``run_id`` into ``workspace`` once all its items are done."""

    url = _required_database(database)
    activity = run_activity(url, run_id)
    left = activity.pending + activity.claimed + activity.failed
    if left:
        raise InputError(
            f"run {run_id!r} has {left} of {left + activity.done} items not done "
            f"({activity.claimed} claimed, {activity.failed} failed): `benchsmith work {run_id}` "
            "finishes them, then writes the files"
        )
    return work(
        run_id,
        database=url,
        workspace=workspace,
        chroma_host=chroma_host,
        on_event=on_event,
        resume=f"benchsmith export {run_id}",
    )


def _required_database(database: str | None) -> str:
    url = database_url(database)
    if url is None:
        raise InputError(
            "a shared run lives in PostgreSQL: give --database postgresql://… or set BENCHSMITH_DATABASE_URL"
        )
    return url


def job_arguments(run_id: str, database: str | None) -> tuple[str, dict[str, Any]]:
    """``(job, API arguments)`` of a shared run."""

    return run_arguments(_required_database(database), run_id)
