"""A node runs an item's work through its graph's ``job`` accessor (graphs/runtime/job_runtime.py): in one of
the run's ``concurrency`` slots, here when no Ray cluster is named, and once per item (a resumed run's batch)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from langgraph.runtime import Runtime

from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.settings import StoreOptions
from benchsmith.stores.persistence.jsonl import record_log
from benchsmith.stores.persistence.run_items import RunItems


@dataclass(kw_only=True)
class _ItemsContext(StoreOptions):
    concurrency: int = 2
    ray: str | None = None


@dataclass(kw_only=True)
class _NoItemsContext(StoreOptions):
    pass


def test_an_item_runs_here_holding_one_of_the_runs_slots(tmp_path):
    job = JobRuntime(_ItemsContext)
    runtime = Runtime(context=_ItemsContext(workspace=str(tmp_path), concurrency=1))
    slot = job.slot(runtime, "run-a")
    free_while_working: list[bool] = []

    def work(payload: dict[str, Any], context: _ItemsContext) -> int:
        free = slot.acquire(blocking=False)  # the run's one slot is the work's while it runs
        if free:
            slot.release()
        free_while_working.append(free)
        return payload["n"] * 10 + context.concurrency

    assert job.run_item(runtime, "run-a", work, {"n": 4}) == 41
    assert free_while_working == [False]
    assert slot.acquire(blocking=False)  # given back after it
    slot.release()


def test_an_item_already_on_file_is_not_worked_again(tmp_path):
    job = JobRuntime(_ItemsContext)
    runtime = Runtime(context=_ItemsContext(workspace=str(tmp_path)))
    items = RunItems(record_log(tmp_path / "items.jsonl", "item"))
    items.add([("i1", {"item": "i1"})])
    calls: list[str] = []

    def work(payload: str, context: _ItemsContext) -> str:
        calls.append(payload)
        return payload.upper()

    assert job.run_new_item(runtime, "run-b", items, "i1", work, "first") == "FIRST"
    items.complete("i1", {"item": "i1", "result": "FIRST"})
    assert job.run_new_item(runtime, "run-b", items, "i1", work, "again") is None
    assert calls == ["first"]


def test_a_job_without_a_concurrency_setting_has_no_slots(tmp_path):
    job = JobRuntime(_NoItemsContext)
    with pytest.raises(TypeError, match="no concurrency setting"):
        job.slot(Runtime(context=_NoItemsContext(workspace=str(tmp_path))), "run-c")
