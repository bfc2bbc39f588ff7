"""What a graph's nodes read of their runtime, one accessor for every graph module: the job's
settings (its Context; the defaults when a graph runs with none, as in Studio or an app), its
workspace and a run's directory."""

from __future__ import annotations

import os
from typing import Generic, TypeVar

from langgraph.runtime import Runtime

from benchsmith.graphs.runtime.inline import once_per_run
from benchsmith.graphs.runtime.settings import StoreOptions
from benchsmith.stores.persistence.bounded_cache import BoundedCache
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import WORKSPACE_ENV, Workspace

Context = TypeVar("Context", bound=StoreOptions)  # every job's context keeps its files somewhere


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
