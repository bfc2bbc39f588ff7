"""What a graph's nodes read of their runtime, one accessor for every graph module: the job's
settings (its Context; the defaults when a graph runs with none, as in Studio or an app), its
workspace and a run's directory; and how a node runs the work of one of a run's items."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar, runtime_checkable

from langgraph.runtime import Runtime

from benchsmith.graphs.runtime.fanout import work_once
from benchsmith.graphs.runtime.inline import once_per_run
from benchsmith.graphs.runtime.ray_items import run_item
from benchsmith.graphs.runtime.resources import concurrency_slot
from benchsmith.graphs.runtime.settings import StoreOptions
from benchsmith.stores.persistence.bounded_cache import BoundedCache
from benchsmith.stores.persistence.run_items import RunItems
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import WORKSPACE_ENV, Workspace

Context = TypeVar("Context", bound=StoreOptions)  # every job's context keeps its files somewhere
Payload = TypeVar("Payload")
Result = TypeVar("Result")


@runtime_checkable
class FansOut(Protocol):
    """The context of a job whose items run at once, ``concurrency`` of them."""

    concurrency: int


class JobRuntime(Generic[Context]):
    """``job = JobRuntime(AuditContext)`` at a graph module's top; its nodes call
    ``job.context(runtime)``, ``job.workspace(runtime)`` and ``job.run_dir(runtime, run_id)``."""

    def __init__(self, context_type: type[Context]):
        self.context_type = context_type

    def context(self, runtime: Runtime[Context]) -> Context:
        return runtime.context or self.context_type()

    def workspace(self, runtime: Runtime[Context]) -> Workspace:
        """The job's workspace, resolved once (the job function hands the graph the resolved folder)
        and reused by every node: once per run in line (a conversation's nodes ask on every turn),
        else once per process while the folder exists."""
        return once_per_run("workspace", lambda: _resolved(self.context(runtime).workspace))

    def run_dir(self, runtime: Runtime[Context], run_id: str) -> RunDirectory:
        return RunDirectory(self.workspace(runtime), run_id)

    def slot(self, runtime: Runtime[Context], run_id: str) -> threading.BoundedSemaphore:
        """One of run ``run_id``'s ``concurrency`` slots, held while a node works on one of its items
        (graphs/runtime/resources.py)."""
        context = self.context(runtime)
        if not isinstance(context, FansOut):
            raise TypeError(f"{type(context).__name__} has no concurrency setting: its job runs no items at once")
        return concurrency_slot(run_id, context.concurrency)

    def run_item(
        self, runtime: Runtime[Context], run_id: str, work: Callable[[Payload, Context], Result], payload: Payload
    ) -> Result:
        """``work(payload, context)``, the work of one of run ``run_id``'s items, in one of its slots: here, or as a
        Ray task with --ray (graphs/runtime/ray_items.py)."""
        with self.slot(runtime, run_id):
            return run_item(work, payload, self.context(runtime), workspace=self.workspace(runtime), run_id=run_id)

    def run_new_item(
        self,
        runtime: Runtime[Context],
        run_id: str,
        items: RunItems,
        item_id: str,
        work: Callable[[Payload, Context], Result],
        payload: Payload,
    ) -> Result | None:
        """:meth:`run_item` for an item whose result is not on file yet, looked up once the slot is held; None when
        it is (a batch that a resumed run sends again)."""
        with self.slot(runtime, run_id):
            return work_once(
                items,
                item_id,
                lambda: run_item(
                    work, payload, self.context(runtime), workspace=self.workspace(runtime), run_id=run_id
                ),
            )


def _resolved(workspace: str | None) -> Workspace:
    """``Workspace.resolve(workspace)`` (a realpath and two mkdirs), kept per (setting,
    $BENCHSMITH_WORKSPACE, working directory), which decide what it resolves to."""
    key = (workspace, os.environ.get(WORKSPACE_ENV), os.getcwd())
    known = _workspaces.get(key)
    if known is not None and os.path.isdir(known[1]):
        return known[0]
    resolved = Workspace.resolve(workspace)
    _workspaces[key] = (resolved, str(resolved.runs_dir))
    return resolved


_workspaces: BoundedCache[tuple[str | None, str | None, str], tuple[Workspace, str]] = BoundedCache(256)
