"""Work items as Ray tasks (``--ray ADDRESS``, graphs/runtime/ray_options.py): the one seam
between a job's fan-out (graphs/runtime/fanout.py) and a Ray cluster.

The run's own process (the driver) keeps everything durable: checkpoints, the run's record logs,
its usage ledger and its run record. A task runs one item's work function on a node and returns
its result with the model calls it made; the driver books those calls in the run's ledger and the
job records the item as it does in one process, so the files are the same bytes. Model replies go
to the response cache from the node (the workspace's SQLite where nodes share the filesystem,
the database's with ``--database``) before the task returns: a task Ray runs again after its
node was lost finds the calls it had finished there. Ray retries a task whose node or worker
died (``TASK_RETRIES``); an error of the work itself is not retried and stops the run as it
would in one process.

Ray is an optional extra (``benchsmith[ray]``): it is imported only when a run asks for it.
"""

from __future__ import annotations

import os
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from benchsmith.agents.seam.endpoints import share_rate_limits_with
from benchsmith.graphs.runtime.ray_limits import forget_shared_rates, shared_turn, start_shared_rates
from benchsmith.graphs.runtime.ray_options import AUTO_RAY, LOCAL_RAY
from benchsmith.graphs.runtime.resources import (
    collect_usage_in_memory,
    register_objects,
    registered_objects,
    usage_ledger,
)
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.stores.persistence.write_behind import drain_all

Payload = TypeVar("Payload")
Context = TypeVar("Context")
Result = TypeVar("Result")

RAY_EXTRA = "pip install 'benchsmith[ray]'"
TASK_RETRIES = 3  # runs of a task whose node or worker process died, after the first
LOCAL_OBJECT_STORE_BYTES = 128 * 1024 * 1024  # results are small records: a local instance needs little
PROBE_S = 5.0  # Ray waits minutes on an address nothing answers at: a plain connection is tried first

_lock = threading.Lock()
_connected: str | None = None
_task: Any = None
_registered: tuple[Any, Any] | None = None  # (the session and what was registered, its object store reference)


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InputError(f"--ray needs Ray, an optional extra: {RAY_EXTRA}") from None
    return ray


def where_items_run(address: str | None, items: str) -> str:
    """Where a run's ``items`` would run, in words (a dry run's note); connects to nothing."""
    if not address:
        return f"the {items} would run in this process"
    try:
        _ray()
    except InputError as error:
        return f"a real run would stop at once: {error}"
    if address == LOCAL_RAY:
        return f"the {items} would run as Ray tasks on a Ray instance started on this machine ({os.cpu_count()} CPUs)"
    if address == AUTO_RAY:
        return (
            f"the {items} would run as Ray tasks on the Ray cluster this machine runs ($RAY_ADDRESS, or `ray start`'s)"
        )
    return f"the {items} would run as Ray tasks on the Ray cluster at {address}"


def connect(address: str) -> None:
    """This process connected to the Ray cluster at ``address`` (once; ``local`` starts an instance
    on this machine). An unreachable cluster or a missing Ray is an InputError, before a run starts;
    a connection this process already has (an app's own ``ray.init``) is kept."""
    global _connected
    ray = _ray()
    with _lock:
        if ray.is_initialized() and _connected in (None, address):
            _connected = _connected or address
            return
        if ray.is_initialized():
            ray.shutdown()
        if address not in (LOCAL_RAY, AUTO_RAY):
            _check_reachable(address)
        options: dict[str, Any] = {"log_to_driver": False}
        if address == LOCAL_RAY:  # a new instance: its size is ours to give
            options.update(
                num_cpus=os.cpu_count(), include_dashboard=False, object_store_memory=LOCAL_OBJECT_STORE_BYTES
            )
        try:
            ray.init(address=address, **options)
        except (ConnectionError, ValueError, RuntimeError) as error:
            raise InputError(f"--ray {address}: no Ray cluster could be joined there ({error})") from None
        _connected = address
        forget_shared_rates()
        share_rate_limits_with(shared_turn)  # this process's calls share the nodes' budget too


def prepare(address: str | None) -> None:
    """Before a run starts: the registered objects can travel (:func:`check_sendable`) and the
    cluster is joined (:func:`connect`); nothing without an address. Errors are InputErrors."""
    if address:
        check_sendable(address)
        connect(address)


def _check_reachable(address: str) -> None:
    """``HOST:PORT`` (or ``ray://HOST:PORT``) answers a TCP connection within ``PROBE_S``; else an InputError."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise InputError(f"--ray {address!r}: give 'local', 'auto', HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_S).close()
    except OSError as error:
        raise InputError(f"--ray {address}: no Ray cluster answers there ({error})") from None


def check_sendable(address: str | None) -> None:
    """The objects this process registered (models, embedders, rerankers) can travel to a node;
    else an InputError that names them, before a run starts."""
    if not address:
        return
    from ray import cloudpickle

    for kind, objects in registered_objects().items():
        for name, value in objects.items():
            try:
                cloudpickle.dumps(value)  # type: ignore[no-untyped-call]  # Ray vendors cloudpickle untyped
            except Exception as error:
                raise InputError(
                    f"--ray: the {kind[:-1]} registered as {name!r} cannot be sent to a Ray node ({error}); "
                    "use a model spec, or run without --ray"
                ) from None


def _run_task(
    work: Callable[[Any, Any], Any], payload: Any, context: Any, registered: dict[str, dict[str, Any]]
) -> tuple[Any, list[dict[str, Any]]]:
    """On a node: ``work(payload, context)`` with the driver's registered objects, its model calls
    collected for the driver, and the replies it paid for written to the response cache."""
    register_objects(registered)
    share_rate_limits_with(shared_turn)  # every node's calls to an endpoint share one budget
    calls = collect_usage_in_memory()
    calls.take()  # a call left by an earlier task of this worker that failed belongs to no result
    result = work(payload, context)
    drain_all()  # the replies are in the cache before the driver records the item
    return result, calls.take()


def _registered_reference() -> Any:
    """The registered objects in the object store, put once per connection while they stay the same
    (an app may register an embedder of hundreds of megabytes: it is not pickled per task)."""
    global _registered
    ray = _ray()
    registered = registered_objects()
    context = ray.get_runtime_context()
    identity = (
        context.gcs_address,  # a reference of another connection's object store means nothing in this one
        context.get_job_id(),
        sorted((kind, name, id(value)) for kind, objects in registered.items() for name, value in objects.items()),
    )
    with _lock:
        if _registered is None or _registered[0] != identity:
            _registered = (identity, ray.put(registered))
        return _registered[1]


def _remote_task() -> Any:
    global _task
    with _lock:
        if _task is None:
            _task = _ray().remote(max_retries=TASK_RETRIES)(_run_task)
        return _task


def run_item(
    work: Callable[[Payload, Context], Result],
    payload: Payload,
    context: Context,
    *,
    workspace: Workspace,
    run_id: str,
) -> Result:
    """``work(payload, context)``: here when the context names no Ray cluster, else as a Ray task,
    whose model calls are then booked in run ``run_id``'s ledger here. ``work`` is a module-level
    function (a node imports it by name)."""
    return next(run_items(work, [payload], context, workspace=workspace, run_id=run_id))


def run_items(
    work: Callable[[Payload, Context], Result],
    payloads: Iterable[Payload],
    context: Context,
    *,
    workspace: Workspace,
    run_id: str,
    in_flight: int = 1,
) -> Iterator[Result]:
    """``work(payload, context)`` for each payload, results in the payloads' order: here, one at a
    time, when the context names no Ray cluster; else as Ray tasks, up to ``in_flight`` at once (a
    node a block, where one item's parts run in sequence in one process), each task's model calls
    booked here in the order of the results."""
    address = getattr(context, "ray", None)
    if not address:
        yield from (work(payload, context) for payload in payloads)
        return
    connect(address)
    ray = _ray()
    registered = _registered_reference()
    if getattr(context, "rate_limit", None):
        start_shared_rates(ray)  # owned by this process: it lives as long as the run's driver
    pending: deque[Any] = deque()
    waiting = iter(payloads)
    while True:
        while len(pending) < max(1, in_flight) and (payload := next(waiting, _END)) is not _END:
            pending.append(_remote_task().remote(work, payload, context, registered))
        if not pending:
            return
        try:
            result, calls = ray.get(pending.popleft())
        except ray.exceptions.RayTaskError as error:
            for reference in pending:
                ray.cancel(reference)
            cause = error.cause
            raise (cause if isinstance(cause, Exception) else error) from None
        _book(context, workspace, run_id, calls)
        yield result


_END: Any = object()


def _book(context: Any, workspace: Workspace, run_id: str, calls: list[dict[str, Any]]) -> None:
    """A task's model calls in the run's usage ledger, here (the driver is the one writer)."""
    database = context.database_url() if hasattr(context, "database_url") else None
    ledger = usage_ledger(workspace, run_id, database)
    for call in calls:
        ledger.record(call)
