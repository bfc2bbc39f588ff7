"""A run's items: what is left to do and what came out.

The plan is given by the run's first node (conversations, audit instances, turns to paraphrase);
the results are the run's record log (stores/persistence/jsonl.RecordLog), so an item is done
once its result is on file, and a resumed run does only the items the log does not hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from benchsmith.stores.persistence.jsonl import RecordLog, load_jsonl


@dataclass(frozen=True)
class ItemCounts:
    total: int = 0
    done: int = 0


class RunItems:
    """One run's plan and its results in the run's record log, keyed by the log's key."""

    def __init__(self, log: RecordLog, plan: Iterable[str] = ()):
        self.log = log
        self.plan = list(plan)

    def add(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Register the plan's items (idempotent: known ids keep their place)."""
        self.plan = list(dict.fromkeys([*self.plan, *(item_id for item_id, _ in items)]))

    def open_ids(self) -> list[str]:
        """Items not finished, in plan order."""
        done = self.log.ids()
        return [item_id for item_id in self.plan if item_id not in done]

    def is_done(self, item_id: str) -> bool:
        return item_id in self.log

    def complete(self, item_id: str, result: dict[str, Any]) -> bool:
        """Record the item's result; False when the log already held it."""
        return self.log.append_once(result)

    def results(self) -> list[dict[str, Any]]:
        """Every finished item's result."""
        return load_jsonl(self.log.path) if self.log.path.exists() else []

    def counts(self) -> ItemCounts:
        done = len(self.log.ids() & set(self.plan))
        return ItemCounts(total=len(self.plan), done=done)
