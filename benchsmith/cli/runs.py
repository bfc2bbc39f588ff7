"""``benchsmith runs``: every run of the workspace with its status, items, tokens and cost; with
``--database``, the runs recorded in PostgreSQL with the process driving each."""

from __future__ import annotations

import time
from typing import Any

from benchsmith.cli.console import DatabaseOption, Table, WorkspaceOption, console, guarded, shown
from benchsmith.jobs.registry import items_of_job
from benchsmith.stores.persistence.runs import RunDirectory, list_runs
from benchsmith.stores.persistence.workspace import Workspace

STATUS_STYLES = {"finished": "green", "crashed": "red", "interrupted": "red", "running": "yellow"}


def runs(workspace: WorkspaceOption = None, database: DatabaseOption = None) -> None:
    """List the runs in the workspace: status, items, model calls, tokens, cost.

    A run whose process died without a word (kill -9, a power cut) shows as interrupted, with
    the command that resumes it. With --database: the runs recorded in PostgreSQL, with the process
    that drives each; a running run that no process drives shows as stalled.
    """
    if database:
        guarded(lambda: print_shared_runs(database))
        return
    resolved = Workspace.resolve(workspace)
    records = list_runs(resolved)
    if not records:
        console.print(f"no runs in {shown(resolved.root)}")
        return
    table = Table(title=f"Runs in {shown(resolved.root)}")
    for column in ("run id", "job", "status", "items", "model calls", "tokens in/out", "cost", "updated"):
        table.add_column(column, justify="right" if column in ("items", "model calls", "cost") else "left")
    stopped = []
    for record, child in _parents_first(resolved, records):
        usage = RunDirectory(resolved, record.run_id).usage.totals()
        status = record.effective_status()
        if status in ("crashed", "interrupted") and not child:  # a child resumes with its parent
            stopped.append((record, status))
        table.add_row(
            shown(f"  └ {record.run_id}" if child else record.run_id),
            record.job,
            f"[{STATUS_STYLES.get(status, 'yellow')}]{status}[/]",
            _items(record.job, record.summary, record.progress),
            str(usage["calls"]),
            f"{usage['input_tokens']}/{usage['output_tokens']}",
            f"${usage['cost_usd']:.4f}",
            time.strftime("%Y-%m-%d %H:%M", time.localtime(record.updated)),
        )
    console.print(table)
    for record, status in stopped:
        reason = f": {record.error}" if record.error else ""
        console.print(shown(f"{record.run_id} {status}{reason}"), highlight=False, soft_wrap=True)
        if record.resume:
            console.print(f"  resume with: {shown(record.resume)}", highlight=False, soft_wrap=True)


def _parents_first(workspace: Workspace, records: list[Any]) -> list[tuple[Any, bool]]:
    """``(record, is a child)`` in listing order: each run, then its child runs (the evaluations of a
    robustness run) right under it; a child whose parent is gone is listed as a run of its own."""
    parents = {record.run_id: RunDirectory(workspace, record.run_id).parent() for record in records}
    children: dict[str, list[Any]] = {}
    for record in records:
        parent = parents[record.run_id]
        if parent is not None and parent in parents:
            children.setdefault(parent, []).append(record)
    ordered: list[tuple[Any, bool]] = []
    for record in records:
        if parents[record.run_id] not in parents:
            ordered.append((record, False))
            ordered += [(child, True) for child in sorted(children.get(record.run_id, []), key=lambda r: r.run_id)]
    return ordered


# Each job's count of what it made: the field of its graph's output (its run's summary) and its unit.
ITEMS_OF_JOB = items_of_job()  # benchsmith/jobs/registry.py


def _items(job: str, summary: dict[str, Any], progress: dict[str, dict[str, int]]) -> str:
    """What a finished run made (by its job, never by guessing from its summary's keys: an audit and
    a validation both have a verdict); an unfinished run's last stage and its progress."""
    field, unit = ITEMS_OF_JOB.get(job, (None, ""))
    if field in summary:
        value = summary[field]
        return f"{value if isinstance(value, int) else len(value)} {unit}"
    if progress:
        stage, counts = list(progress.items())[-1]
        return f"{stage} {counts['done']}/{counts['total']}"
    return "-"


def print_shared_runs(database: str) -> None:
    from benchsmith.stores.persistence.postgres_runs import list_runs as list_shared_runs
    from benchsmith.stores.persistence.postgres_runs import run_driver

    records = list_shared_runs(database)
    if not records:
        console.print("no runs in the database")
        return
    table = Table(title="Runs in the database")
    for column in ("run id", "job", "status", "driver", "updated"):
        table.add_column(column)
    for record in records:
        driver = run_driver(database, record.run_id) if record.status == "running" else None
        status: str = record.status  # as recorded, or "stalled" (below)
        if status == "running" and driver is None:
            status = "stalled"  # its process died without a word: resume it with --run-id
        table.add_row(
            shown(record.run_id),
            record.job,
            f"[{STATUS_STYLES.get(status, 'red')}]{status}[/]",
            shown(driver or "-"),
            time.strftime("%Y-%m-%d %H:%M", time.localtime(record.updated)),
        )
    console.print(table)
