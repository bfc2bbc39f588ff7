"""What a run is and does, in PostgreSQL: its record (job, settings, status, summary), its
usage ledger, and the process that holds its claim (its driver); ``benchsmith runs --database``
shows them."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.postgres import connect
from benchsmith.stores.persistence.run_claims import advisory_key, process_name, refusal
from benchsmith.stores.persistence.runs import RunRecord
from benchsmith.stores.persistence.usage import usage_totals


def save_run(url: str, record: RunRecord) -> None:
    """Insert or update the run's record in the database."""
    connection = connect(url)
    try:
        connection.execute(
            "INSERT INTO benchsmith_runs (run_id, job, status, config, summary, error, resume) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (run_id) DO UPDATE SET status = EXCLUDED.status, "
            "summary = EXCLUDED.summary, error = EXCLUDED.error, resume = COALESCE(EXCLUDED.resume, "
            "benchsmith_runs.resume), updated = now()",
            (
                record.run_id,
                record.job,
                record.status,
                json.dumps(record.config),
                json.dumps(record.summary),
                record.error,
                record.resume,
            ),
        )
    finally:
        connection.close()


def forget_run(url: str, run_id: str) -> None:
    """Remove a run that never was (its input found bad by its first step): its record, its
    driver and usage, so the run id is free again (graphs/runtime/runner.py)."""
    connection = connect(url)
    try:
        for table in ("benchsmith_usage", "benchsmith_workers", "benchsmith_runs"):
            connection.execute(f"DELETE FROM {table} WHERE run_id = %s", (run_id,))
    finally:
        connection.close()


def find_run(url: str, run_id: str) -> RunRecord | None:
    connection = connect(url)
    try:
        row = connection.execute(
            "SELECT run_id, job, status, config, summary, error, resume, "
            "extract(epoch FROM created), extract(epoch FROM updated) FROM benchsmith_runs "
            "WHERE run_id = %s",
            (run_id,),
        ).fetchone()
    finally:
        connection.close()
    if row is None:
        return None
    return RunRecord(
        run_id=row[0],
        job=row[1],
        status=row[2],
        config=row[3],
        summary=row[4],
        error=row[5],
        resume=row[6],
        created=float(row[7]),
        updated=float(row[8]),
    )


def load_run(url: str, run_id: str) -> RunRecord:
    record = find_run(url, run_id)
    if record is None:
        raise InputError(f"no run {run_id!r} in the database")
    return record


def list_runs(url: str) -> list[RunRecord]:
    connection = connect(url)
    try:
        ids = [row[0] for row in connection.execute("SELECT run_id FROM benchsmith_runs ORDER BY created DESC")]
    finally:
        connection.close()
    return [load_run(url, run_id) for run_id in ids]


class PostgresUsageLedger:
    """The run's usage ledger (stores/persistence/usage.UsageLedger's interface), one row per model call."""

    def __init__(self, url: str, run_id: str):
        self.run_id = run_id
        self._connection = connect(url)
        self._lock = threading.Lock()

    def record(self, call: dict[str, Any]) -> None:
        with self._lock:
            self._connection.execute(
                "INSERT INTO benchsmith_usage (run_id, call) VALUES (%s, %s)", (self.run_id, json.dumps(call))
            )

    def sync(self) -> None:
        """Rows are committed as they are written."""

    def totals(self) -> dict[str, Any]:
        with self._lock:
            return usage_totals_of(self._connection, self.run_id)


def usage_totals_of(connection: Any, run_id: str) -> dict[str, Any]:
    """A run's usage totals from its ledger rows (stores/persistence/usage.UsageLedger.totals' fields)."""
    rows = connection.execute("SELECT call FROM benchsmith_usage WHERE run_id = %s", (run_id,)).fetchall()
    return usage_totals(call for (call,) in rows)


def worker_name() -> str:
    """This process as the holder of a run's claim: host and pid (the table keeps its old name,
    ``benchsmith_workers``, so databases made before keep working)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def register_worker(url: str, run_id: str, worker: str) -> None:
    connection = connect(url)
    try:
        connection.execute(
            "INSERT INTO benchsmith_workers (worker, run_id, host, pid) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (worker) DO UPDATE SET run_id = EXCLUDED.run_id, last_seen = now(), stopped = false",
            (worker, run_id, socket.gethostname(), os.getpid()),
        )
    finally:
        connection.close()


@contextmanager
def database_claim(url: str, run_id: str) -> Iterator[None]:
    """Hold the run's claim in the database for the block (stores/persistence/run_claims.py): a session advisory
    lock on the run id, on a connection of its own, this process registered as the run's driver (the
    holder a refusal names); :class:`~benchsmith.stores.persistence.run_claims.RunInUse` if a live process on
    any machine holds it."""
    connection = connect(url)
    try:
        if not connection.execute("SELECT pg_try_advisory_lock(%s)", (advisory_key(run_id),)).fetchone()[0]:
            raise refusal(run_id, _claim_holder(connection, run_id))
        register_worker(url, run_id, worker_name())
        try:
            yield
        finally:
            try:  # no longer the run's driver
                connection.execute(
                    "UPDATE benchsmith_workers SET stopped = true, last_seen = now() WHERE worker = %s",
                    (worker_name(),),
                )
                connection.execute("SELECT pg_advisory_unlock(%s)", (advisory_key(run_id),))
            except Exception:  # the connection is gone: so is the lock
                pass
    finally:
        connection.close()


def _claim_holder(connection: Any, run_id: str) -> str:
    row = connection.execute(
        "SELECT host, pid FROM benchsmith_workers WHERE run_id = %s AND NOT stopped ORDER BY last_seen DESC LIMIT 1",
        (run_id,),
    ).fetchone()
    return process_name(row[1], row[0]) if row else "another process (its database session holds the run)"


def worker_seen(url: str, worker: str, stopped: bool = False) -> None:
    connection = connect(url)
    try:
        connection.execute(
            "UPDATE benchsmith_workers SET last_seen = now(), stopped = %s WHERE worker = %s", (stopped, worker)
        )
    finally:
        connection.close()


def run_driver(url: str, run_id: str) -> str | None:
    """The process that holds the run's claim now (``host:pid``), or None when none does: a
    ``running`` run without one stopped without a word (kill -9, a lost machine)."""
    connection = connect(url)
    try:
        key = advisory_key(run_id)
        if connection.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
            connection.execute("SELECT pg_advisory_unlock(%s)", (key,))
            return None
        return _claim_holder(connection, run_id)
    finally:
        connection.close()
