"""Fan-out in batches.

LangGraph submits every ``Send`` of a step at once and, at each completion, waits again on
all the step's unfinished tasks, so one step of N tasks costs O(N²) in the scheduler
(measured at 1,600 conversations: 13 s of the run's 76 s in ``concurrent.futures.wait``).
Graphs therefore send at most one batch per step and come back for the next: the cost per
item stays flat at any size, each step is one small checkpoint, and the batch is large
enough that the pause while a batch drains costs little (about concurrency / batch).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from langgraph.graph import START, StateGraph
from langgraph.types import Send

from benchsmith.agents.seam.redaction import redact
from benchsmith.graphs.runtime.progress import progress_reporter
from benchsmith.stores.persistence.work_items import WorkItems

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
# Fanning out over a run's work items (graphs/runtime/resources.run_items), alone or beside other workers.

WAIT_FOR_WORKERS_S = 1.0


def dispatch_items(
    items: WorkItems, stage: str, concurrency: int, send: Callable[[str], Send], finished: str
) -> list[Send] | str:
    """The next batch of items nobody finished or holds, one ``send(item_id)`` each; else
    ``finished`` when every item is done, or ``"wait"`` while other workers hold the last ones."""
    counts = items.counts()
    progress_reporter(stage)(counts.done, counts.total)
    sends = [send(item_id) for item_id in next_batch(items.open_ids(), concurrency)]
    if sends:
        return sends
    return finished if counts.done >= counts.total else "wait"


def gather(state: Any) -> dict[str, Any]:
    """The ``gather`` node: joins a batch of work before the next one is dispatched."""
    return {}


def wait_for_workers(state: Any) -> dict[str, Any]:
    """The ``wait`` node: other workers hold the last items; look again shortly (a dead worker's
    lease runs out and its items come back open)."""
    time.sleep(WAIT_FOR_WORKERS_S)
    return {}


def claimed_work(items: WorkItems, item_id: str, work: Callable[[], Result]) -> Result | None:
    """``work()`` on an item this worker could claim; None when another worker holds it or did it.
    An error gives the item up (with a redacted reason) and propagates."""
    if not items.claim(item_id):
        return None
    try:
        return work()
    except BaseException as error:
        items.fail(item_id, redact(f"{type(error).__name__}: {error}"))
        raise


# ---------------------------------------------------------------------------------------
# The nodes and edges of a fan-out, the same in every job that has one.


def add_fan_out(
    builder: StateGraph[Any, Any, Any, Any],
    *,
    plan: Callable[..., Any],
    dispatch: Callable[..., Any],
    work: Callable[..., Any],
    finish: Callable[..., Any],
    shared_by_workers: bool = True,
) -> None:
    """A job's fan-out from START to its ``finish`` node, on ``builder``: ``plan`` registers the work,
    ``dispatch`` sends a batch to ``work``, the batch joins at ``gather`` and ``dispatch`` runs again,
    until it routes to ``finish``; in a run ``shared_by_workers`` it may route to ``wait`` instead
    (other workers hold the last items). The job's nodes are named after their functions; the job
    adds ``finish``'s edges onward. Node names and edges are what checkpoints and Studio know: keep them."""
    waits = ["wait"] if shared_by_workers else []
    routes = [work.__name__, *waits, finish.__name__]
    builder.add_node(plan.__name__, plan)
    builder.add_node(work.__name__, work)
    builder.add_node("gather", gather)
    if waits:
        builder.add_node("wait", wait_for_workers)
    builder.add_node(finish.__name__, finish)
    builder.add_edge(START, plan.__name__)
    builder.add_conditional_edges(plan.__name__, dispatch, routes)
    builder.add_edge(work.__name__, "gather")
    for source in ["gather", *waits]:
        builder.add_conditional_edges(source, dispatch, routes)
