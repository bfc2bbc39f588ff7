"""``benchsmith runs``: every run of the workspace with its status, items, tokens and cost."""

from __future__ import annotations

import time
from typing import Any

from rich.table import Table

from benchsmith.graphs.cli.console import WorkspaceOption, console
from benchsmith.stores.runs import RunDirectory, list_runs
from benchsmith.stores.workspace import Workspace

STATUS_STYLES = {"finished": "green", "crashed": "red", "interrupted": "red", "running": "yellow"}


def runs(workspace: WorkspaceOption = None) -> None:
    """List the runs in the workspace: status, items, model calls, tokens, cost.

    A run whose process died without a word (kill -9, a power cut) shows as interrupted, with
    the command that resumes it.
    """
    resolved = Workspace.resolve(workspace)
    records = list_runs(resolved)
    if not records:
        console.print(f"no runs in {resolved.root}")
        return
    table = Table(title=f"Runs in {resolved.root}")
    for column in ("run id", "job", "status", "items", "model calls", "tokens in/out", "cost", "updated"):
        table.add_column(column, justify="right" if column in ("items", "model calls", "cost") else "left")
    stopped = []
    for record in records:
        usage = RunDirectory(resolved, record.run_id).usage.totals()
        status = record.effective_status()
        if status in ("crashed", "interrupted"):
            stopped.append((record, status))
        table.add_row(
            record.run_id, record.job, f"[{STATUS_STYLES.get(status, 'yellow')}]{status}[/]",
            _items(record.summary, record.progress), str(usage["calls"]),
            f"{usage['input_tokens']}/{usage['output_tokens']}", f"${usage['cost_usd']:.4f}",
            time.strftime("%Y-%m-%d %H:%M", time.localtime(record.updated)))
    console.print(table)
    for record, status in stopped:
        reason = f": {record.error}" if record.error else ""
        console.print(f"{record.run_id} {status}{reason}", highlight=False, soft_wrap=True)
        if record.resume:
            console.print(f"  resume with: {record.resume}", highlight=False, soft_wrap=True)


def _items(summary: dict[str, Any], progress: dict[str, dict[str, int]]) -> str:
    if "indexed" in summary:
        return f"{summary['indexed']} chunks"
    if "conversations_written" in summary:
        return f"{summary['conversations_written']} conversations"
    if "aggregate" in summary:
        return f"{len(summary['aggregate'])} configurations"
    if "verdict" in summary:
        return f"{summary['instances']} instances"
    if progress:
        stage, counts = list(progress.items())[-1]
        return f"{stage} {counts['done']}/{counts['total']}"
    return "-"
