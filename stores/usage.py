"""Per-run ledger of model calls: tokens, cost, retries and cache hits.

One JSON line per call, appended by a background writer within about 10 ms of the call
(stores/persistence/write_behind.py: the call's thread neither opens nor writes the file, and the lines of
many calls go in one write), so a killed process keeps the account of what it paid for but for
its last moment. Lines are synced to disk per finished item (:meth:`sync`, called where the item
is recorded: it waits for the writer first), not per call: a disk flush per model call cost 14%
of synthesis.
"""

from __future__ import annotations

import functools
import json
import os
import threading
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchsmith.stores.persistence.jsonl import load_jsonl, sync_file
from benchsmith.stores.persistence.write_behind import WriteBehind, drain_all

TOTAL_FIELDS = ("input_tokens", "output_tokens", "cost_usd", "retries")
OFFLINE_MODEL = "baseline"  # the model name the offline agents' calls are recorded under
_JSON = json.JSONEncoder(ensure_ascii=False)  # built once: json.dumps builds one per call given options


class UsageLedger:
    """The ledger of the file ``path``; every ledger object of one path shares one writer."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lines = _line_writer(self.path)

    def record(self, call: dict[str, Any]) -> None:
        """Append one call: ``model``, ``input_tokens``, ``output_tokens``, ``cost_usd``,
        ``retries`` and ``cached``. Lines of parallel calls never interleave (one writer, whole lines)."""
        self._lines.submit((_JSON.encode(call) + "\n").encode("utf-8"))

    def sync(self) -> None:
        """Make every recorded call durable, with every reply the process's caches hold (call it before
        a finished item is recorded: a resumed run that redoes an unrecorded item finds its replies)."""
        drain_all()
        self._lines.drain()
        if self.path.exists():
            sync_file(self.path)

    def totals(self) -> dict[str, Any]:
        """Calls, cache hits and the sums of tokens, cost and retries."""
        self._lines.drain()
        return usage_totals(load_jsonl(self.path) if self.path.exists() else [])


# Held by the ledgers of a path and, while it has lines to write, by its thread: a writer nobody
# holds has nothing left to write, and goes.
_writers: weakref.WeakValueDictionary[Path, WriteBehind[bytes]] = weakref.WeakValueDictionary()
_writers_lock = threading.Lock()


def _line_writer(path: Path) -> WriteBehind[bytes]:
    """The one writer of ``path`` in this process (ledgers of a run are made afresh where needed)."""
    key = path.absolute()
    with _writers_lock:
        if (writer := _writers.get(key)) is None:
            writer = _writers[key] = WriteBehind(
                functools.partial(_append_lines, key), name=f"usage-{path.parent.name}"
            )
        return writer


def _append_lines(path: Path, lines: list[bytes]) -> None:
    """One write of whole lines at the file's end (its folder made at the first)."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        os.write(descriptor, b"".join(lines))
    finally:
        os.close(descriptor)


def usage_totals(calls: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Calls, cache hits, calls the offline baseline answered (model ``baseline``: no model was
    asked), and the sums of tokens, cost and retries, over recorded calls."""
    totals: dict[str, Any] = {"calls": 0, "cached_calls": 0, "offline_calls": 0, **{name: 0 for name in TOTAL_FIELDS}}
    for call in calls:
        totals["calls"] += 1
        totals["cached_calls"] += int(bool(call.get("cached")))
        totals["offline_calls"] += int(call.get("model") == OFFLINE_MODEL)
        for name in TOTAL_FIELDS:
            totals[name] += call.get(name, 0)
    return totals
