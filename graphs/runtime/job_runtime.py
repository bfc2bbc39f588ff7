"""What a graph's nodes read of their runtime, one accessor for every graph module: the job's
settings (its Context; the defaults when a graph runs with none, as in Studio or an app), its
workspace and a run's directory."""

from __future__ import annotations

from typing import Generic, TypeVar

from langgraph.runtime import Runtime

from benchsmith.graphs.runtime.inline import once_per_run
from benchsmith.graphs.runtime.resources import workspace_of
from benchsmith.graphs.runtime.settings import StoreOptions
from benchsmith.stores.runs import RunDirectory
from benchsmith.stores.workspace import Workspace

Context = TypeVar("Context", bound=StoreOptions)  # every job's context keeps its files somewhere


class JobRuntime(Generic[Context]):
    """``job = JobRuntime(AuditContext)`` at a graph module's top; its nodes call
    ``job.context(runtime)``, ``job.workspace(runtime)`` and ``job.run_dir(runtime, run_id)``."""

    def __init__(self, context_type: type[Context]):
        self.context_type = context_type

    def context(self, runtime: Runtime[Context]) -> Context:
        return runtime.context or self.context_type()

    def workspace(self, runtime: Runtime[Context]) -> Workspace:
        # Once per run in line (a conversation's nodes ask on every turn), else cached by workspace_of.
        return once_per_run("workspace", lambda: workspace_of(self.context(runtime)))

    def run_dir(self, runtime: Runtime[Context], run_id: str) -> RunDirectory:
        return RunDirectory(self.workspace(runtime), run_id)
