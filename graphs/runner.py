"""Run a graph as a resumable job: one run id, one checkpoint thread, one run record.

Running the same job with the same run id resumes it from its last checkpoint when it did
not finish, and reports it without redoing anything when it did. Settings are recorded
with the run; resuming with different settings is refused rather than mixing two runs. A
run that ends on an exception or a signal is recorded as ``crashed`` with its reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langgraph.graph.state import StateGraph

from benchsmith.agents.endpoints import forget_endpoints
from benchsmith.agents.redaction import redact
from benchsmith.stores.checkpoints import sqlite_checkpointer
from benchsmith.stores.errors import InputError
from benchsmith.stores.runs import RunDirectory
from benchsmith.stores.workspace import Workspace

EventHandler = Callable[[dict[str, Any]], None]


@dataclass
class RunOutcome:
    run_id: str
    values: dict[str, Any]
    resumed: bool
    already_finished: bool
    usage: dict[str, Any]
    run_dir: RunDirectory


def run_job(
    builder: StateGraph,
    *,
    job: str,
    workspace: Workspace,
    run_id: str,
    inputs: dict[str, Any],
    context: Any,
    settings: dict[str, Any],
    on_event: EventHandler | None = None,
    max_concurrency: int | None = None,
    resume: str | None = None,
) -> RunOutcome:
    """Start, resume or report the run ``run_id`` of ``job``; ``resume`` says how to resume it
    (kept in the record for `benchsmith runs`)."""
    run_dir = RunDirectory(workspace, run_id)
    new_run = not run_dir.exists()
    if not new_run:
        record = run_dir.load()
        if record.job != job:
            raise InputError(f"run {run_id!r} is a {record.job} run, not {job}; choose another --run-id")
        check_same_settings(run_id, record.config, settings)
        if record.status == "finished":
            return RunOutcome(run_id, record.summary, resumed=False, already_finished=True,
                              usage=run_dir.usage.totals(), run_dir=run_dir)
    run_dir.start(job, settings, resume)
    forget_endpoints()  # a key or server fixed since an endpoint failed in this process gets a fresh try
    config: dict[str, Any] = {"configurable": {"thread_id": run_id}}
    if max_concurrency:
        # Top level: under "configurable" it is ignored. LangGraph uses a worker of the pool for
        # its own work while a superstep runs (measured: with N workers only N - 1 Send tasks
        # ran at once, and a subgraph deadlocked at 1), so N tasks get N + 1 workers; a graph
        # that needs an exact bound holds its own semaphore.
        config["max_concurrency"] = max_concurrency + 1
    try:
        with sqlite_checkpointer(workspace) as checkpointer:
            if new_run:  # a deleted run's checkpoints must not answer for a new run of the same id
                checkpointer.delete_thread(run_id)
            graph = builder.compile(checkpointer=checkpointer)
            snapshot = graph.get_state(config)
            resumed = bool(snapshot.values)
            if snapshot.next or not resumed:
                # durability="sync": a step is on disk before the next starts, so a kill -9
                # loses at most the step in flight.
                stream_input = None if resumed else inputs
                for mode, payload in graph.stream(stream_input, config, context=context,
                                                  stream_mode=["custom", "updates"], durability="sync"):
                    if on_event is None:
                        continue
                    if mode == "custom":
                        on_event(payload)
                    else:  # a node (or one Send worker) finished: {"node_name": update}
                        for node in payload:
                            on_event({"node": node})
            final = graph.get_state(config)
            if final.next:  # the stream ended with work left (a signal can end it quietly): not finished
                raise RuntimeError(f"the run stopped before finishing (next: {', '.join(final.next)})")
            values = dict(final.values)
    except BaseException as error:
        run_dir.crash(crash_reason(error))
        raise
    run_dir.finish(values)
    return RunOutcome(run_id, values, resumed=resumed, already_finished=False, usage=run_dir.usage.totals(),
                      run_dir=run_dir)


def crash_reason(error: BaseException) -> str:
    """What the run record says about how a run ended."""
    if isinstance(error, KeyboardInterrupt):
        return "interrupted (Ctrl-C)"
    if isinstance(error, SystemExit):
        return f"stopped by a signal or exit ({error.code})"
    return redact(f"{type(error).__name__}: {error}")  # no key reaches the run record


def check_same_settings(run_id: str, recorded: dict[str, Any], requested: dict[str, Any]) -> None:
    differing = sorted(key for key in recorded.keys() | requested.keys() if recorded.get(key) != requested.get(key))
    if differing:
        details = ", ".join(f"{key}: {recorded.get(key)!r} → {requested.get(key)!r}" for key in differing)
        raise InputError(f"run {run_id!r} was started with other settings ({details}); "
                         "rerun with the same settings to resume, or choose a new --run-id")
