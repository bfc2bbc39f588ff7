"""Run directories and their records.

Every long job runs under a run id. ``runs/<run-id>/run.json`` says which job it is, with
which settings, how far it got and how it ended; running the same command with the same
run id resumes an unfinished run and reports a finished one without redoing it.

Statuses: ``running`` while a process works on it, ``finished``, ``crashed`` (an exception or
a signal ended it; ``error`` says why). A process killed outright (SIGKILL, a power cut)
cannot write anything: its record still says ``running``, and :meth:`RunRecord.effective_status`
reports it as ``interrupted`` once the process it names is gone.

``created``, ``updated``, ``pid`` and ``host`` say when and by which process, not what the run
computed: a resumed run's record differs from an uninterrupted one's in these fields only.

Each change of the record reads, changes and writes it under an exclusive lock on
``run.json.lock``, so no thread or process writes back a record another changed meanwhile, and a
crash recorded after the run finished leaves it ``finished``.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.files import exclusive_lock, write_files_atomic, write_json_atomic
from benchsmith.stores.persistence.usage import UsageLedger
from benchsmith.stores.persistence.workspace import Workspace

RunStatus = Literal["running", "finished", "crashed"]
PARENT_FILE = "parent.json"  # in a child run's folder: {"parent": run id}


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
    pid: int | None = None  # the process working on the run, while it runs
    host: str | None = None
    resume: str | None = None  # how to resume it (the command that started it)

    def effective_status(self) -> str:
        """``interrupted`` for a running record whose process (on this host) is gone."""
        if self.status == "running" and self.host == socket.gethostname() and self.pid and not _alive(self.pid):
            return "interrupted"
        return self.status


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by someone else
        return True
    return True


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

    def write_report(self, files: Mapping[str, tuple[str, str]]) -> dict[str, str]:
        """A report's ``{kind: (file name, text)}`` written into the run's folder, each whole or not at
        all; their paths by kind as text, as a graph's state and a job's result keep them."""
        return {kind: str(path) for kind, path in write_files_atomic(self.path, files).items()}

    def exists(self) -> bool:
        return self.record_path.exists()

    def load(self) -> RunRecord:
        try:
            return RunRecord(**json.loads(self.record_path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            raise InputError(f"no run {self.run_id!r} in {self.path.parent}") from None

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Exclusive against the other processes changing this run's record."""
        with exclusive_lock(self.path / "run.json.lock"):
            yield

    def start(self, job: str, config: dict[str, Any], resume: str | None = None) -> RunRecord:
        """Create the record, or reopen an unfinished one of the same job for resuming."""
        with self._locked():
            if self.exists():
                record = self.load()
                if record.job != job:
                    raise InputError(f"run {self.run_id!r} is a {record.job} run, not {job}; choose another --run-id")
                if record.status != "finished":  # a finished run stays finished
                    record.status, record.error = "running", None
            else:
                record = RunRecord(run_id=self.run_id, job=job, config=config)
            record.pid, record.host, record.resume = os.getpid(), socket.gethostname(), resume or record.resume
            self.save(record)
        return record

    def save(self, record: RunRecord) -> None:
        record.updated = time.time()
        write_json_atomic(self.record_path, asdict(record))

    def set_progress(self, stage: str, done: int, total: int) -> None:
        with self._locked():
            record = self.load()
            record.progress[stage] = {"done": done, "total": total}
            self.save(record)

    def finish(self, summary: dict[str, Any]) -> RunRecord:
        with self._locked():
            record = self.load()
            record.status, record.summary, record.error = "finished", summary, None
            self.save(record)
        return record

    def crash(self, reason: str) -> None:
        """The run ended on an exception or a signal; ``reason`` must hold no secret. A run
        finished meanwhile stays finished."""
        with self._locked():
            record = self.load()
            if record.status == "finished":
                return
            record.status, record.error = "crashed", reason
            self.save(record)

    def discard(self) -> None:
        """Remove a run that never was (its input found bad before its first step finished): its
        folder and record, so the corrected command may take the same run id."""
        shutil.rmtree(self.path, ignore_errors=True)

    def mark_child(self, parent_run_id: str) -> None:
        """Mark this run as a child of ``parent_run_id`` (a job that runs other jobs, such as
        robustness its evaluations), before it starts: `benchsmith runs` lists it under its parent."""
        self.path.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.file(PARENT_FILE), {"parent": parent_run_id})

    def parent(self) -> str | None:
        """The run this one is a child of; None for a top-level run."""
        try:
            result: str | None = json.loads(self.file(PARENT_FILE).read_text(encoding="utf-8"))["parent"]
            return result
        except FileNotFoundError:
            return None


def list_runs(workspace: Workspace) -> list[RunRecord]:
    """Every run in the workspace, newest first."""
    records = []
    for record_path in workspace.runs_dir.glob("*/run.json"):
        records.append(RunDirectory(workspace, record_path.parent.name).load())
    return sorted(records, key=lambda record: record.created, reverse=True)
