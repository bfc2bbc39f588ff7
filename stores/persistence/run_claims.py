"""One process per run: a run is worked on by the process that claimed it, and a second start of
the same run id while that process lives is refused (exit 2), naming the process.

In the workspace the claim is an exclusive ``flock`` on ``runs/<run id>/process.lock``, taken
before the run record is read and held until the run ends. The kernel drops it when its process
dies (``kill -9`` included), so a dead process never blocks the resume, and a pid reused by
another program never fakes a live run. The holder writes its pid and host into the file, which
the refusal quotes.

With a database (``--database``, where processes on other machines see the run) the claim is also
a PostgreSQL session advisory lock on the run id, held on a connection of its own: the server drops
it when that connection ends (its process died or its machine went away). The refusal names the
holder (stores/persistence/postgres_runs.py registers it with host and pid).

A lock, not a scheduler: every run, with ``--ray`` too, has one driver that holds its claim; the
Ray tasks of its items take none (graphs/runtime/ray_items.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchsmith.stores.errors import InputError

CLAIM_FILE = "process.lock"


class RunInUse(InputError):
    """The run is being worked on by another live process."""


def refusal(run_id: str, holder: str) -> RunInUse:
    return RunInUse(
        f"run {run_id!r} is already running in {holder}: a second process would redo its items and "
        "pay for them twice. Wait for it to end (or stop it) and run the same command again to resume, "
        "or choose another run id"
    )


@contextmanager
def workspace_claim(run_path: Path, run_id: str) -> Iterator[None]:
    """Hold the run's claim in its workspace for the block; :class:`RunInUse` if a live process holds it."""
    run_path.mkdir(parents=True, exist_ok=True)
    with open(run_path / CLAIM_FILE, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            raise refusal(run_id, handle.read().strip() or "another process") from None
        handle.seek(0)
        handle.truncate()
        handle.write(process_name())
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()  # a later reader sees no holder named
            fcntl.flock(handle, fcntl.LOCK_UN)


def process_name(pid: int | None = None, host: str | None = None) -> str:
    return f"process {pid or os.getpid()} on host {host or socket.gethostname()}"


def advisory_key(run_id: str) -> int:
    """The run's PostgreSQL advisory lock key: 64 bits of SHA-256 of the run id, signed (a bigint)."""
    return int.from_bytes(hashlib.sha256(f"benchsmith-run\x1f{run_id}".encode()).digest()[:8], "big", signed=True)
