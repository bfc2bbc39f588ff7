"""A run's work items: what is left to do, who is doing it, and what came out.

Two stores with one interface. :class:`LocalItems`, for one process: the plan is given, the
results are the run's record log (stores/persistence/jsonl.RecordLog), and a claim always succeeds.
:class:`PostgresItems`, for workers on any number of machines sharing one PostgreSQL: an item
is claimed atomically (``SELECT … FOR UPDATE SKIP LOCKED``) with a lease; a worker that dies
loses its lease and another takes the item over; a result is accepted only from the worker
that holds the claim, so no item is done twice.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from benchsmith.stores.persistence.jsonl import RecordLog, load_jsonl
from benchsmith.stores.persistence.postgres import connect

DEFAULT_LEASE_S = 120.0


@dataclass(frozen=True)
class ItemCounts:
    total: int = 0
    pending: int = 0
    claimed: int = 0
    done: int = 0
    failed: int = 0


class WorkItems(Protocol):
    def add(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Register the plan's items (idempotent: known ids are kept as they are)."""

    def planned(self) -> list[dict[str, Any]]:
        """The payloads of the registered plan, in plan order (a worker joining a run reads its
        plan here); empty when the plan lives only in the run directory."""

    def open_ids(self) -> list[str]:
        """Items nobody finished or holds a live claim on, in plan order."""

    def claim(self, item_id: str) -> bool:
        """Take one item; False when someone else holds it or it is done."""

    def complete(self, item_id: str, result: dict[str, Any]) -> bool:
        """Record the item's result; False when the claim was lost and someone else took it over."""

    def fail(self, item_id: str, error: str) -> None:
        """Give the item up after an error (it is retried when the run resumes)."""

    def results(self) -> list[dict[str, Any]]:
        """Every finished item's result."""

    def counts(self) -> ItemCounts: ...


class LocalItems:
    """One process: results in the run's record log, keyed by ``key``."""

    def __init__(self, log: RecordLog, plan: Iterable[str]):
        self.log = log
        self.plan = list(plan)

    def add(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        self.plan = list(dict.fromkeys([*self.plan, *(item_id for item_id, _ in items)]))

    def planned(self) -> list[dict[str, Any]]:
        return []

    def open_ids(self) -> list[str]:
        done = self.log.ids()
        return [item_id for item_id in self.plan if item_id not in done]

    def claim(self, item_id: str) -> bool:
        return item_id not in self.log

    def complete(self, item_id: str, result: dict[str, Any]) -> bool:
        return self.log.append_once(result)

    def fail(self, item_id: str, error: str) -> None:
        """Nothing to release: the run stops on the error and resumes from the log."""

    def results(self) -> list[dict[str, Any]]:
        return load_jsonl(self.log.path) if self.log.path.exists() else []

    def counts(self) -> ItemCounts:
        done = len(self.log.ids() & set(self.plan))
        return ItemCounts(total=len(self.plan), pending=len(self.plan) - done, done=done)


class PostgresItems:
    """Items of one run in ``benchsmith_items``, claimed by ``worker`` with a lease."""

    def __init__(self, url: str, run_id: str, worker: str, lease_s: float = DEFAULT_LEASE_S):
        self.url, self.run_id, self.worker, self.lease_s = url, run_id, worker, lease_s
        self._connection = connect(url)
        self._lock = threading.Lock()  # one connection, shared by a process's threads
        self._stopped = threading.Event()
        self._heartbeat: threading.Thread | None = None

    def start_heartbeat(self) -> None:
        """Renew this worker's leases every third of a lease, in a daemon thread, until
        :meth:`close`: an item that takes longer than a lease stays this worker's while it lives."""
        if self._heartbeat is None:
            self._heartbeat = threading.Thread(target=self._beat, name=f"lease-{self.run_id}", daemon=True)
            self._heartbeat.start()

    def _beat(self) -> None:
        while not self._stopped.wait(self.lease_s / 3):
            try:
                self.renew()
            except Exception:  # a dropped connection: the next beat tries again; the lease is the safety net
                continue

    def _execute(self, sql: str, parameters: Sequence[Any] = ()) -> Any:
        with self._lock:
            return self._connection.execute(sql, parameters).fetchall()

    def add(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        with self._lock, self._connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO benchsmith_items (run_id, item_id, position, payload) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (run_id, item_id) DO NOTHING",
                [
                    (self.run_id, item_id, position, json.dumps(payload))
                    for position, (item_id, payload) in enumerate(items)
                ],
            )

    def planned(self) -> list[dict[str, Any]]:
        rows = self._execute("SELECT payload FROM benchsmith_items WHERE run_id = %s ORDER BY position", (self.run_id,))
        return [row[0] for row in rows]

    def open_ids(self) -> list[str]:
        rows = self._execute(
            "SELECT item_id FROM benchsmith_items WHERE run_id = %s AND (status IN ('pending', 'failed') "
            "OR (status = 'claimed' AND lease_until < now())) ORDER BY position",
            (self.run_id,),
        )
        return [row[0] for row in rows]

    def claim(self, item_id: str) -> bool:
        """This item, if it is open (pending, failed before, or its lease ran out)."""
        rows = self._execute(
            "UPDATE benchsmith_items SET status = 'claimed', worker = %s, attempts = attempts + 1, "
            "claimed_at = now(), lease_until = now() + %s * interval '1 second' "
            "WHERE run_id = %s AND item_id = %s AND (status IN ('pending', 'failed') "
            "OR (status = 'claimed' AND lease_until < now())) RETURNING item_id",
            (self.worker, self.lease_s, self.run_id, item_id),
        )
        return bool(rows)

    def claim_next(self) -> tuple[str, dict[str, Any]] | None:
        """The first open item in plan order that no other worker is claiming right now."""
        rows = self._execute(
            "UPDATE benchsmith_items SET status = 'claimed', worker = %s, attempts = attempts + 1, "
            "claimed_at = now(), lease_until = now() + %s * interval '1 second' "
            "WHERE (run_id, item_id) = (SELECT run_id, item_id FROM benchsmith_items WHERE run_id = %s "
            "AND (status IN ('pending', 'failed') OR (status = 'claimed' AND lease_until < now())) "
            "ORDER BY position FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING item_id, payload",
            (self.worker, self.lease_s, self.run_id),
        )
        return (rows[0][0], rows[0][1]) if rows else None

    def renew(self) -> None:
        """Extend the lease of every item this worker holds (its heartbeat)."""
        self._execute(
            "UPDATE benchsmith_items SET lease_until = now() + %s * interval '1 second' "
            "WHERE run_id = %s AND worker = %s AND status = 'claimed' RETURNING item_id",
            (self.lease_s, self.run_id, self.worker),
        )

    def complete(self, item_id: str, result: dict[str, Any]) -> bool:
        rows = self._execute(
            "UPDATE benchsmith_items SET status = 'done', result = %s, done_at = now(), error = NULL "
            "WHERE run_id = %s AND item_id = %s AND worker = %s AND status = 'claimed' RETURNING item_id",
            (json.dumps(result), self.run_id, item_id, self.worker),
        )
        return bool(rows)

    def fail(self, item_id: str, error: str) -> None:
        self._execute(
            "UPDATE benchsmith_items SET status = 'failed', error = %s, lease_until = NULL "
            "WHERE run_id = %s AND item_id = %s AND worker = %s AND status = 'claimed' RETURNING item_id",
            (error, self.run_id, item_id, self.worker),
        )

    def results(self) -> list[dict[str, Any]]:
        rows = self._execute(
            "SELECT result FROM benchsmith_items WHERE run_id = %s AND status = 'done' ORDER BY position",
            (self.run_id,),
        )
        return [row[0] for row in rows]

    def counts(self) -> ItemCounts:
        rows = self._execute(
            "SELECT status, count(*) FROM benchsmith_items WHERE run_id = %s GROUP BY status", (self.run_id,)
        )
        by_status = dict(rows)
        return ItemCounts(
            total=sum(by_status.values()),
            pending=by_status.get("pending", 0),
            claimed=by_status.get("claimed", 0),
            done=by_status.get("done", 0),
            failed=by_status.get("failed", 0),
        )

    def close(self) -> None:
        self._stopped.set()
        with self._lock:
            self._connection.close()
