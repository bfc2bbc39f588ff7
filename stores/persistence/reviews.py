"""The newest review of a synthesized benchmark (`benchsmith review`), as `publish` and the audit read it."""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.stores.persistence.judgments import VERDICTS_FILE, Verdict, VerdictLog
from benchsmith.stores.persistence.runs import RunDirectory, list_runs
from benchsmith.stores.persistence.workspace import Workspace


@dataclass(frozen=True)
class Review:
    run_id: str  # the review run (`benchsmith review RUN --run-id RUN_ID` resumes it)
    verdicts: dict[str, Verdict]  # the latest verdict per turn, by the turn's query id


def latest_review(workspace: Workspace, benchmark_run: str) -> Review | None:
    """The newest review run of the synthesis run ``benchmark_run`` in ``workspace``; None when none."""
    for record in list_runs(workspace):  # newest first
        if record.job == "review" and record.config.get("benchmark") == benchmark_run:
            path = RunDirectory(workspace, record.run_id).file(VERDICTS_FILE)
            return Review(record.run_id, VerdictLog(path).latest())
    return None
