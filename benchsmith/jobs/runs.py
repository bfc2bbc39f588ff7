"""``benchsmith.runs``: the runs of a workspace (or of a database), as `benchsmith runs` lists them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.graphs.runtime.resources import usage_totals
from benchsmith.jobs.common import Usage
from benchsmith.stores.persistence.postgres import database_url
from benchsmith.stores.persistence.runs import RunDirectory, list_runs
from benchsmith.stores.persistence.workspace import Workspace


@dataclass(frozen=True)
class RunInfo:
    """One run: which job, how it stands (``interrupted`` when its process vanished), what it cost,
    and how to resume it."""

    run_id: str
    job: str
    status: str  # running, finished, crashed, interrupted
    created: float
    updated: float
    usage: Usage
    settings: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    progress: dict[str, dict[str, int]] = field(default_factory=dict)
    error: str | None = None
    resume: str | None = None  # the command that resumes it
    parent: str | None = None  # the run this one is part of (robustness's evaluations)
    run_dir: Path | None = None  # None for a database's run read from another workspace


def runs(workspace: str | Path | None = None, database: str | None = None) -> list[RunInfo]:
    """Every run of ``workspace`` (default ``$BENCHSMITH_WORKSPACE`` or ``./.benchsmith``), newest
    first; with ``database`` (a postgresql:// URL), the runs recorded there, whichever machine ran
    them. A run's ``resume`` is the command that continues it."""
    resolved = Workspace.resolve(workspace)
    url = database_url(database) if database else None
    if url:
        from benchsmith.stores.persistence.postgres_runs import list_runs as list_database_runs

        return [
            _info(record, usage_totals(resolved, record.run_id, url), None, None) for record in list_database_runs(url)
        ]
    return [
        _info(
            record,
            usage_totals(resolved, record.run_id, None),
            RunDirectory(resolved, record.run_id).parent(),
            RunDirectory(resolved, record.run_id).path,
        )
        for record in list_runs(resolved)
    ]


def _info(record: Any, usage: dict[str, Any], parent: str | None, run_dir: Path | None) -> RunInfo:
    return RunInfo(
        run_id=record.run_id,
        job=record.job,
        status=record.effective_status(),
        created=record.created,
        updated=record.updated,
        usage=Usage.from_totals(usage),
        settings=dict(record.config),
        summary=dict(record.summary),
        progress=dict(record.progress),
        error=record.error,
        resume=record.resume,
        parent=parent,
        run_dir=run_dir,
    )
