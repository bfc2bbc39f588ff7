"""Run a graph as a resumable job: one run id, one checkpoint thread, one run record.

Running the same job with the same run id resumes it from its last checkpoint when it did
not finish, and reports it without redoing anything when it did. Settings are recorded
with the run; resuming with different settings is refused rather than mixing two runs. A
run that ends on an exception or a signal is recorded as ``crashed`` with its reason (also when
the database failed and cannot record it: run.json says so). A finished run's summary is the
graph's declared output, whose figures its last nodes read from the run's durable records, so
it counts the whole run whichever processes and resumes did the work (:func:`run_summary`).

With a database (``--database``) checkpoints, the model cache, the usage ledger and the run
record are in PostgreSQL. A run belongs to its workspace, where its files are: its thread is
``RUN_ID@host:workspace``, so the same run id in another workspace is another run, and never
resumes onto (or deletes) this one's checkpoints. One process drives a run (its claim,
stores/persistence/run_claims.py); with ``--ray`` its items run as tasks on a cluster
(graphs/runtime/ray_items.py).
"""

from __future__ import annotations

import gc
import socket
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from typing import Any, cast, get_type_hints

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import StateGraph

from benchsmith.agents.seam.endpoints import forget_endpoints
from benchsmith.agents.seam.redaction import redact
from benchsmith.graphs.runtime.resources import release_run_items, usage_totals
from benchsmith.graphs.runtime.settings import current_names
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.checkpoints import run_checkpointer
from benchsmith.stores.persistence.postgres_runs import (
    database_claim,
    find_run,
    forget_run,
    save_run,
    worker_name,
    worker_seen,
)
from benchsmith.stores.persistence.run_claims import workspace_claim
from benchsmith.stores.persistence.runs import RunDirectory, RunRecord
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.stores.persistence.write_behind import drain_all

# A graph of any state, context, input and output: the runner runs it, it does not read its types.
AnyGraph = StateGraph[Any, Any, Any, Any]

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
    builder: AnyGraph,
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
    database: str | None = None,
) -> RunOutcome:
    """Start, resume or report the run ``run_id`` of ``job``; ``resume`` says how to resume it
    (kept in the record for `benchsmith runs`). With ``database`` its state is in PostgreSQL. A second start of a
    run that a live process works on stops with
    :class:`~benchsmith.stores.persistence.run_claims.RunInUse` naming that process (stores/persistence/run_claims.py)."""
    run_dir = RunDirectory(workspace, run_id)
    with ExitStack() as claims:
        claims.enter_context(workspace_claim(run_dir.path, run_id))
        if database:
            claims.enter_context(database_claim(database, run_id))
        return _start_or_resume(
            builder,
            job=job,
            workspace=workspace,
            run_dir=run_dir,
            inputs=inputs,
            context=context,
            settings=settings,
            on_event=on_event,
            max_concurrency=max_concurrency,
            resume=resume,
            database=database,
        )


def _start_or_resume(
    builder: AnyGraph,
    *,
    job: str,
    workspace: Workspace,
    run_dir: RunDirectory,
    inputs: dict[str, Any],
    context: Any,
    settings: dict[str, Any],
    on_event: EventHandler | None,
    max_concurrency: int | None,
    resume: str | None,
    database: str | None,
) -> RunOutcome:
    """:func:`run_job` once this process holds the run's claim: whether the run is new is decided
    here, so a new run deletes only checkpoints no live process writes."""
    run_id = run_dir.run_id
    new_run = not run_dir.exists()
    if not new_run:
        record = run_dir.load()
        check_same_job(run_id, record.job, job)
        check_same_settings(run_id, record.config, settings)
        if record.status == "finished":
            return RunOutcome(
                run_id,
                record.summary,
                resumed=False,
                already_finished=True,
                usage=usage_totals(workspace, run_id, database),
                run_dir=run_dir,
            )
    run_dir.start(job, settings, resume)
    forgettable = new_run  # bad input before its first step finished: it never was a run
    steps = FinishedSteps()
    new_in_database = False  # this start recorded the run in the database (another workspace's is not ours)
    try:
        if database:
            new_in_database = _record_in_database(database, run_dir.load())
        forget_endpoints()  # a key or server fixed since an endpoint failed in this process gets a fresh try
        thread_id = checkpoint_thread(run_id, workspace, database)
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        if max_concurrency:
            # Top level: under "configurable" it is ignored. LangGraph uses a worker of the pool for
            # its own work while a superstep runs (measured: with N workers only N - 1 Send tasks
            # ran at once, and a subgraph deadlocked at 1), so N tasks get N + 1 workers; a graph
            # that needs an exact bound holds its own semaphore.
            config["max_concurrency"] = max_concurrency + 1
        with run_checkpointer(workspace, database) as checkpointer:
            if new_run:  # a deleted run's checkpoints must not answer for a new run of the same id
                checkpointer.delete_thread(thread_id)
            graph = builder.compile(checkpointer=checkpointer)
            snapshot = graph.get_state(config)
            resumed = bool(snapshot.values)
            if snapshot.next or not resumed:
                # durability="sync": a step is on disk before the next starts, so a kill -9
                # loses at most the step in flight.
                stream_input = None if resumed else inputs
                with (
                    garbage_collection_of_the_run(),
                    steps.forgotten_if_bad_input(forgettable, checkpointer, thread_id),
                ):
                    for mode, payload in graph.stream(
                        stream_input, config, context=context, stream_mode=["custom", "updates"], durability="sync"
                    ):
                        if mode == "updates":  # a node (or one Send worker) finished: {"node_name": update}
                            steps.count += len(payload)
                        if on_event is None:
                            continue
                        if mode == "custom":
                            on_event(cast(dict[str, Any], payload))  # what the nodes' stream writers emit
                        else:
                            for node in payload:
                                on_event({"node": node})
            drain_all()  # the run's cache puts and ledger lines are on file when it returns
            final = graph.get_state(config)
            if final.next:  # the stream ended with work left (a signal can end it quietly): not finished
                raise RuntimeError(f"the run stopped before finishing (next: {', '.join(final.next)})")
            summary = run_summary(builder, final.values)
    except BaseException as error:
        with suppress(Exception):  # what the run paid for, as far as it can be written
            drain_all()
        if forgettable and isinstance(error, InputError) and not steps.count:  # never was a run: the id stays free
            _forget(run_dir, database, recorded_here=new_in_database)
        else:
            _record_crash(run_dir, database, error)
        raise
    finally:
        release_run_items(run_id)
    finished = run_dir.finish(summary)
    try:
        if database:
            save_run(database, finished)
            worker_seen(database, worker_name(), stopped=True)
        usage = usage_totals(workspace, run_id, database)
    except Exception as error:
        if not database:
            raise
        raise DatabaseFailure(
            f"run {run_id} finished and its files are written ({run_dir.record_path} says finished), but the "
            f"database could not record it: {crash_reason(error)}"
        ) from error
    return RunOutcome(run_id, summary, resumed=resumed, already_finished=False, usage=usage, run_dir=run_dir)


class FinishedSteps:
    """The steps a run finished in this process. A new run that meets bad input before any step
    finished (an :class:`InputError`: a corpus its first step reads as it streams in, settings
    another workspace's run of the same id in the database has) was never a run: the error stands
    (exit 2) and the run is forgotten, its checkpoints here and its record by :func:`run_job`, as if
    the input had been checked before it started. A run that finished a step keeps it and is
    recorded crashed, as any run that stops."""

    def __init__(self) -> None:
        self.count = 0

    @contextmanager
    def forgotten_if_bad_input(self, forgettable: bool, checkpointer: Any, thread_id: str) -> Iterator[None]:
        try:
            yield
        except InputError:
            if forgettable and not self.count:
                checkpointer.delete_thread(thread_id)
            raise


class DatabaseFailure(RuntimeError):
    """The database failed (its connection lost, its server gone) while a run used it."""


def run_summary(builder: AnyGraph, values: dict[str, Any]) -> dict[str, Any]:
    """What run.json keeps of a finished run: the graph's declared output, not its working state.

    The output's figures are read from the run's durable records (record logs, files) by the
    graph's last nodes, so they count the whole run: every resume. Working counters of the state
    (how many items *this* process did, summed by a reducer) are left out: after a resume they
    count a part of the run, never all of it."""
    output = get_type_hints(builder.output_schema) if builder.output_schema is not None else values
    return {name: value for name, value in values.items() if name in output}


def _forget(run_dir: RunDirectory, database: str | None, recorded_here: bool) -> None:
    """Remove the record of a run that never was, here and in the database where this start
    recorded it (the database holds every run's record from its start; a record of the same id
    from another workspace is not this run's: only this process stops working on it). A database
    that fails now keeps what it has, and the bad input is still what is reported (exit 2)."""
    run_dir.discard()
    if not database:
        return
    try:
        if recorded_here:
            forget_run(database, run_dir.run_id)
        else:
            worker_seen(database, worker_name(), stopped=True)
    except Exception:  # the input error is the one to report
        pass


def _record_crash(run_dir: RunDirectory, database: str | None, error: BaseException) -> None:
    """Record the run as crashed here, then in the database where it still answers. A crash
    the database cannot record (its connection lost) is recorded in this workspace's run.json,
    never left ``running``, and the error that propagates says where (the CLI prints it)."""
    reason = crash_reason(error)
    run_dir.crash(reason)
    if not database:
        return
    try:
        save_run(database, run_dir.load())
        worker_seen(database, worker_name(), stopped=True)
    except Exception as bookkeeping:
        if isinstance(error, Exception) and not isinstance(error, InputError):  # bad input stays exit 2
            raise DatabaseFailure(
                f"{reason}; the database could not record the crash ({crash_reason(bookkeeping)}). Run "
                f"{run_dir.run_id} is recorded as crashed in {run_dir.record_path}"
            ) from error


def checkpoint_thread(run_id: str, workspace: Workspace, database: str | None) -> str:
    """The run's checkpoint thread: the run id in the workspace's own SQLite; in a
    database, one per host and workspace."""
    if not database:
        return run_id
    return f"{run_id}@{socket.gethostname()}:{workspace.root}"


def _record_in_database(database: str, record: RunRecord) -> bool:
    """Record the run in the database, or check it is the same run as the one recorded there (its
    run id given from another workspace); True when the database did not have it."""
    recorded = find_run(database, record.run_id)
    if recorded is not None:
        check_same_job(record.run_id, recorded.job, record.job)
        check_same_settings(record.run_id, recorded.config, record.config)
    if recorded is None or recorded.status != "finished":
        save_run(database, record)
    return recorded is None


def crash_reason(error: BaseException) -> str:
    """What the run record says about how a run ended."""
    if isinstance(error, KeyboardInterrupt):
        return "interrupted (Ctrl-C)"
    if isinstance(error, SystemExit):
        return f"stopped by a signal or exit ({error.code})"
    return redact(f"{type(error).__name__}: {error}")  # no key reaches the run record


@contextmanager
def garbage_collection_of_the_run() -> Iterator[None]:
    """While a run streams, the garbage collector's full collections scan only the objects the run
    made: those alive when it started (the modules, models and clients a process loads, some 270,000
    in a synthesis process) are frozen (``gc.freeze``) and thawed when it ends, cycles among them
    then collected as before. A full collection of them cost 0.15 s of CPU at every 25% growth of
    the long-lived objects: 5% of a 64-in-flight synthesis's CPU (benchmarks/synthesize.py)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def check_same_job(run_id: str, recorded: str, requested: str) -> None:
    if recorded != requested:
        raise InputError(f"run {run_id!r} is a {recorded} run, not {requested}; choose another --run-id")


def check_same_settings(run_id: str, recorded: dict[str, Any], requested: dict[str, Any]) -> None:
    recorded = current_names(recorded, requested.keys())  # a run recorded before a setting's rename resumes
    differing = sorted(key for key in recorded.keys() | requested.keys() if recorded.get(key) != requested.get(key))
    if differing:
        details = ", ".join(f"{key}: {recorded.get(key)!r} → {requested.get(key)!r}" for key in differing)
        raise InputError(
            f"run {run_id!r} was started with other settings ({details}); "
            "rerun with the same settings to resume, or choose a new --run-id"
        )
