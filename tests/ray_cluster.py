"""A real local Ray cluster for the tests: a head with no CPU (work goes to the workers) and two worker
nodes of one CPU each, on this machine (``ray.cluster_utils.Cluster``, loopback only); an embedder
that shows, from a node, that it is embedding; ingestion's keying of chunks for deduplication,
showing which node keyed each batch; and a stage's mapping of batches that stalls on the first one
until the test has killed its node."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from benchsmith.graphs.ingest_batches import row_key_batch
from tests.embedders import HashingEmbedder

NODE = {"num_cpus": 1, "object_store_memory": 80 * 1024 * 1024}
STALL_S = 300.0  # the stalled batch's wait for its node to be killed: a bound, never reached


@contextmanager
def local_cluster(workers: int = 2) -> Iterator[dict[str, Any]]:
    """``{"cluster", "workers"}``: the cluster, and its worker nodes (a test may remove one and add
    another); shut down after."""
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 0, "include_dashboard": False, "object_store_memory": 80 * 1024 * 1024},
    )
    nodes = [cluster.add_node(**NODE) for _ in range(workers)]
    cluster.wait_for_nodes()
    try:
        yield {"cluster": cluster, "workers": nodes}
    finally:
        ray.shutdown()
        cluster.shutdown()


class MarkingEmbedder(HashingEmbedder):
    """The hashing embedder, slowed: each call leaves a file named by its process id in ``marks``
    (the test sees which processes embed) and takes ``delay_s``."""

    def __init__(self, marks: Path, delay_s: float):
        super().__init__()
        self.name = "test-hashing-marked"
        self.marks, self.delay_s = str(marks), delay_s

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        Path(self.marks, str(os.getpid())).touch()
        time.sleep(self.delay_s)
        return super().encode(texts)


def batch_mark(first: str) -> str:
    """The name of the mark left by the batch whose first chunk is ``first`` (its id, or its line)."""
    return hashlib.sha256(first.encode("utf-8")).hexdigest()


def keyed_on_node(marks: str, lines: list[str], banding: Any) -> list[np.ndarray]:
    """``row_key_batch``, leaving in ``marks`` a file named by the batch's first chunk
    (:func:`batch_mark`) that holds the id of the node that keyed it."""
    import ray

    Path(marks, batch_mark(json.loads(lines[0])["id"])).write_text(ray.get_runtime_context().get_node_id())
    return row_key_batch(lines, banding)


def stalled_on_node(marks: str, work: Any, lines: list[str], argument: Any) -> Any:
    """``work(lines, argument)``, except for the first batch mapped: it leaves in ``marks`` the file
    ``stalled`` (``{"node", "batch"}``: its node's id, its first line's :func:`batch_mark`) and waits there for the
    test to kill that node, its task dying with it. When that batch is mapped again (Ray Data
    re-running the lost task), the file ``rerun`` names the node that maps it."""
    import ray

    node, batch = ray.get_runtime_context().get_node_id(), batch_mark(lines[0])
    claim = Path(marks, f"claim-{os.getpid()}-{batch}")
    claim.write_text(json.dumps({"node": node, "batch": batch}))
    try:
        os.link(claim, Path(marks, "stalled"))  # at once and only once: the first batch stalls, whole
    except FileExistsError:
        if json.loads(Path(marks, "stalled").read_text())["batch"] == batch:
            # whole when it appears: the test reads it as soon as it exists (read empty once, under load, in CI)
            written = Path(marks, f"rerun-{os.getpid()}")
            written.write_text(node)
            os.replace(written, Path(marks, "rerun"))
        return work(lines, argument)
    time.sleep(STALL_S)
    raise RuntimeError(f"the node {node} that stalled on a batch was not killed")
