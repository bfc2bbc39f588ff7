"""Per-run ledger of model calls: tokens, cost, retries and cache hits.

One JSON line per call, appended as the call finishes, so a killed process keeps the account
of what it already paid for. Lines are synced to disk per finished item (:meth:`sync`, called
where the item is recorded), not per call: a disk flush per model call cost 14% of synthesis.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from collections.abc import Iterable
from typing import Any

from benchsmith.stores.jsonl import append_jsonl, load_jsonl, sync_file

TOTAL_FIELDS = ("input_tokens", "output_tokens", "cost_usd", "retries")
OFFLINE_MODEL = "baseline"  # the model name the offline agents' calls are recorded under
_JSON = json.JSONEncoder(ensure_ascii=False)  # built once: json.dumps builds one per call given options


class UsageLedger:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()

    def record(self, call: dict[str, Any]) -> None:
        """Append one call: ``model``, ``input_tokens``, ``output_tokens``, ``cost_usd``,
        ``retries`` and ``cached``. One write of one line, under a lock: lines of parallel calls
        never interleave. Through the descriptor, not a file object: a third of the cost."""
        line = (_JSON.encode(call) + "\n").encode("utf-8")
        with self._lock:
            try:
                descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            except FileNotFoundError:  # the first call of a run: its folder is made once, not per call
                append_jsonl(self.path, call, durable=False)
                return
            try:
                os.write(descriptor, line)
            finally:
                os.close(descriptor)

    def sync(self) -> None:
        """Make every recorded call durable (call it when a finished item is recorded)."""
        if self.path.exists():
            sync_file(self.path)

    def totals(self) -> dict[str, Any]:
        """Calls, cache hits and the sums of tokens, cost and retries."""
        return usage_totals(load_jsonl(self.path) if self.path.exists() else [])


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
