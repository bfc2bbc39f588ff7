"""A block map on Ray (``--ray ADDRESS``): the blocks of a computation over one large shared value
(the k-nearest-neighbour graph's rows over the collection's vectors, tools/corpus/clustering.py)
run as Ray tasks, the shared value put once in the object store, which each node maps read-only.
The tools take the map as a function (``BlockMap``) and never import this (they sit below graphs/)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from benchsmith.graphs.runtime.ray_items import TASK_RETRIES, _ray, connect, where_items_run
from benchsmith.tools.corpus.clustering import BlockMap, map_here


def block_map(address: str | None) -> BlockMap:
    """``map_here`` without an address; else a map that runs each block as a Ray task on the cluster
    at ``address`` (joined on first use), results in the blocks' order."""
    if not address:
        return map_here

    def map_on_ray(function: Callable[[Any, Any], Any], shared: Any, blocks: Sequence[Any]) -> list[Any]:
        connect(address)
        ray = _ray()
        task = ray.remote(max_retries=TASK_RETRIES)(function)  # a module-level function: nodes import it by name
        reference = ray.put(shared)  # once, not once per block
        pending = [task.remote(reference, block) for block in blocks]
        try:
            return list(ray.get(pending))
        except ray.exceptions.RayTaskError as error:
            for waiting in pending:
                ray.cancel(waiting)
            cause = error.cause
            raise (cause if isinstance(cause, Exception) else error) from None

    return map_on_ray


def where_graph_builds(address: str | None) -> str:
    """Where a clustering's nearest-neighbour graph would be built, in words (a dry run's note)."""
    return where_items_run(address, "blocks of the nearest-neighbour graph (if the collection needs clustering)")
