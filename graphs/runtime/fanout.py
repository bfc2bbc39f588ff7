"""Fan-out in batches.

LangGraph submits every ``Send`` of a step at once and, at each completion, waits again on
all the step's unfinished tasks, so one step of N tasks costs O(N²) in the scheduler
(measured at 1,600 conversations: 13 s of the run's 76 s in ``concurrent.futures.wait``).
Graphs therefore send at most one batch per step and come back for the next: the cost per
item stays flat at any size, each step is one small checkpoint, and the batch is large
enough that the pause while a batch drains costs little (about concurrency / batch).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, TypeVar

from langgraph.graph import START, StateGraph
from langgraph.types import Send

from benchsmith.graphs.runtime.progress import progress_reporter
from benchsmith.stores.persistence.run_items import RunItems

Item = TypeVar("Item")
Result = TypeVar("Result")
TASKS_PER_WORKER = 16
MIN_BATCH = 64


def batch_size(concurrency: int) -> int:
    """Items sent in one step for ``concurrency`` workers."""
    return max(MIN_BATCH, TASKS_PER_WORKER * concurrency)


def next_batch(pending: Sequence[Item], concurrency: int) -> list[Item]:
    """The items of the next step: the first batch of those still pending."""
    return list(pending[: batch_size(concurrency)])


# ---------------------------------------------------------------------------------------
# Fanning out over a run's items (graphs/runtime/resources.run_items).


def dispatch_items(
    items: RunItems, stage: str, concurrency: int, send: Callable[[str], Send], finished: str
) -> list[Send] | str:
    """The next batch of items not finished, one ``send(item_id)`` each; else ``finished``."""
    counts = items.counts()
    progress_reporter(stage)(counts.done, counts.total)
    return [send(item_id) for item_id in next_batch(items.open_ids(), concurrency)] or finished


def sends_for_missing(node: str, run_id: str, key: str, item_ids: Iterable[str], done: Collection[str]) -> list[Send]:
    """One ``Send`` to ``node``, ``{"run_id": run_id, key: item id}``, per item not ``done``, in
    order, all in one step (for a job of few items: its documents or its questions)."""
    return [Send(node, {"run_id": run_id, key: item_id}) for item_id in item_ids if item_id not in done]


def gather(state: Any) -> dict[str, Any]:
    """The ``gather`` node: joins a batch of work before the next one is dispatched."""
    return {}


def work_once(items: RunItems, item_id: str, work: Callable[[], Result]) -> Result | None:
    """``work()`` on an item whose result is not on file yet; None when it is (a batch that a
    resumed run sends again)."""
    return None if items.is_done(item_id) else work()


# ---------------------------------------------------------------------------------------
# The nodes and edges of a fan-out, the same in every job that has one.


def add_fan_out(
    builder: StateGraph[Any, Any, Any, Any],
    *,
    plan: Callable[..., Any],
    dispatch: Callable[..., Any],
    work: Callable[..., Any],
    finish: Callable[..., Any],
    in_batches: bool = True,
) -> None:
    """A job's fan-out from START to its ``finish`` node, on ``builder``: ``plan`` registers the work,
    ``dispatch`` sends a batch to ``work``, the batch joins at ``gather`` and ``dispatch`` runs again,
    until it routes to ``finish``. With ``in_batches=False`` (a job of few items: its documents or its
    scorers) ``dispatch`` sends every item at once and the work joins at ``finish``, with no ``gather``.
    The job's nodes are named after their functions; the job adds ``finish``'s edges onward. Node
    names and edges are what checkpoints and Studio know: keep them."""
    builder.add_node(plan.__name__, plan)
    add_worker(builder, work)
    if in_batches:
        builder.add_node("gather", gather)
    builder.add_node(finish.__name__, finish)
    builder.add_edge(START, plan.__name__)
    if not in_batches:
        add_sends(builder, after=plan.__name__, dispatch=dispatch, work=work.__name__, then=finish.__name__)
        return
    routes = [work.__name__, finish.__name__]
    builder.add_conditional_edges(plan.__name__, dispatch, routes)
    builder.add_edge(work.__name__, "gather")
    builder.add_conditional_edges("gather", dispatch, routes)


def add_worker(builder: StateGraph[Any, Any, Any, Any], work: Callable[..., Any]) -> None:
    """The node of a ``Send``'s work, named after its function. It takes the task sent to it, not the
    graph's state, which ``StateGraph.add_node``'s types cannot say."""
    builder.add_node(work.__name__, work)


def add_sends(
    builder: StateGraph[Any, Any, Any, Any], *, after: str, dispatch: Callable[..., Any], work: str, then: str
) -> None:
    """The edges of one step of ``Send``s: after the node ``after``, ``dispatch`` sends items to
    ``work`` (or, with none to send, routes to ``then``), and ``work`` joins at ``then``."""
    builder.add_conditional_edges(after, dispatch, [work, then])
    builder.add_edge(work, then)
