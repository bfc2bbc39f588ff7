"""Run directories and their records.

Every long job runs under a run id. ``runs/<run-id>/run.json`` says which job it is, with
which settings, how far it got and how it ended; running the same command with the same
run id resumes an unfinished run and reports a finished one without redoing it.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchsmith.stores.errors import InputError
from benchsmith.stores.usage import UsageLedger
from benchsmith.stores.workspace import Workspace

RunStatus = Literal["running", "finished", "failed"]


def new_run_id(job: str) -> str:
    """A readable, sortable, unique id such as ``ingest-20261121-061502-3fa9``."""
    return f"{job}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def is_valid_run_id(run_id: str) -> bool:
    """A run id names a folder of the workspace: no path separators, not hidden."""
    return bool(run_id) and "/" not in run_id and not run_id.startswith(".")


@dataclass
class RunRecord:
    run_id: str
    job: str
    status: RunStatus = "running"
    config: dict[str, Any] = field(default_factory=dict)
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    progress: dict[str, dict[str, int]] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


class RunDirectory:
    """The folder of one run and the ``run.json`` record in it."""

    def __init__(self, workspace: Workspace, run_id: str):
        if not is_valid_run_id(run_id):
            raise InputError(f"invalid run id {run_id!r}: use letters, digits, '-' and '_'")
        self.run_id = run_id
        self.path = workspace.run_dir(run_id)

    @property
    def record_path(self) -> Path:
        return self.path / "run.json"

    @property
    def usage(self) -> UsageLedger:
        return UsageLedger(self.path / "usage.jsonl")

    def file(self, name: str) -> Path:
        return self.path / name

    def exists(self) -> bool:
        return self.record_path.exists()

    def load(self) -> RunRecord:
        try:
            return RunRecord(**json.loads(self.record_path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            raise InputError(f"no run {self.run_id!r} in {self.path.parent}") from None

    def start(self, job: str, config: dict[str, Any]) -> RunRecord:
        """Create the record, or reopen an unfinished one of the same job for resuming."""
        if self.exists():
            record = self.load()
            if record.job != job:
                raise InputError(f"run {self.run_id!r} is a {record.job} run, not {job}; choose another --run-id")
            record.status, record.error = "running", None
        else:
            record = RunRecord(run_id=self.run_id, job=job, config=config)
        self.save(record)
        return record

    def save(self, record: RunRecord) -> None:
        record.updated = time.time()
        self.path.mkdir(parents=True, exist_ok=True)
        temporary = self.record_path.with_suffix(".tmp")
        temporary.write_text(json.dumps(asdict(record), indent=2, ensure_ascii=False), encoding="utf-8")
        os.replace(temporary, self.record_path)

    def set_progress(self, stage: str, done: int, total: int) -> None:
        record = self.load()
        record.progress[stage] = {"done": done, "total": total}
        self.save(record)

    def finish(self, summary: dict[str, Any]) -> RunRecord:
        record = self.load()
        record.status, record.summary, record.error = "finished", summary, None
        self.save(record)
        return record

    def fail(self, error: str) -> None:
        record = self.load()
        record.status, record.error = "failed", error
        self.save(record)


def list_runs(workspace: Workspace) -> list[RunRecord]:
    """Every run in the workspace, newest first."""
    records = []
    for record_path in workspace.runs_dir.glob("*/run.json"):
        records.append(RunDirectory(workspace, record_path.parent.name).load())
    return sorted(records, key=lambda record: record.created, reverse=True)
