"""The nearest-neighbour graph of a clustering built in blocks as Ray tasks on a local cluster (a
head and two worker nodes, tests/ray_cluster.py): the same graph, ids, order and ties as the
single-process build, the same clusters, and the blocks really computed on the nodes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import benchsmith
from benchsmith.graphs.runtime.ray_blocks import block_map, where_graph_builds
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.clustering import greedy_traversal_clusters, knn_graph, map_here
from tests.ray_cluster import local_cluster
from tests.synthesis_fixtures import COLLECTION
from tests.turn_type_fixtures import build_rich_collection

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with local_cluster() as started:
        yield {**started, "root": tmp_path_factory.mktemp("ray-clustering")}


def blocks_fail_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process computing a block fails: a graph built with the Ray map was built on the nodes."""

    def in_this_process(*args: Any) -> None:
        raise AssertionError("a block of the nearest-neighbour graph was computed in the run's own process")

    monkeypatch.setattr("benchsmith.tools.corpus.clustering._exact_rows", in_this_process)
    monkeypatch.setattr("benchsmith.tools.corpus.clustering._cell_rows", in_this_process)


def vectors_with_ties() -> np.ndarray:
    """Topics of near copies, with exact duplicates: ties the graph must break as one process does."""
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((12, 24))
    vectors = centres[rng.integers(12, size=900)] + 0.05 * rng.standard_normal((900, 24))
    vectors[100:140] = vectors[99]  # forty copies of one row: every listed neighbour ties
    return vectors.astype(np.float32)


def test_the_graph_built_on_the_nodes_is_the_graph_built_in_one_process(cluster, monkeypatch):
    vectors = vectors_with_ties()
    # Exact (every row), and the inverted file (cells of ~256 rows, in blocks of several cells).
    expected = {limit: knn_graph(vectors, 8, exact_limit=limit, seed=3) for limit in (10_000, 100)}
    sources = [99 if 99 <= row < 140 else row for row in range(len(vectors))]  # the copies' texts are one text
    texts = [f"chunk {source} of the corpus about topic {source % 12}" for source in sources]
    expected_clusters = greedy_traversal_clusters(vectors, size=8, neighbours=8, seed=3, texts=texts, exact_limit=100)
    on_ray = block_map(cluster["cluster"].address)
    blocks_fail_here(monkeypatch)
    with pytest.raises(AssertionError, match="own process"):
        knn_graph(vectors, 8)  # the check itself: in this process the blocks do fail
    for limit, graph in expected.items():
        assert np.array_equal(knn_graph(vectors, 8, exact_limit=limit, seed=3, map_blocks=on_ray), graph), limit
    clustered = greedy_traversal_clusters(
        vectors, size=8, neighbours=8, seed=3, texts=texts, exact_limit=100, map_blocks=on_ray
    )
    assert (clustered.path, clustered.clusters, clustered.dropped, clustered.searches) == (
        expected_clusters.path,
        expected_clusters.clusters,
        expected_clusters.dropped,
        expected_clusters.searches,
    )
    assert clustered.dropped  # the copies were on the path and went: the texts mattered


def test_benchsmith_cluster_with_ray_stores_the_clusters_of_one_process(cluster, monkeypatch):
    results = {}
    for name, ray_address in (("here", None), ("on-ray", cluster["cluster"].address)):
        workspace = Workspace.resolve(cluster["root"] / name / "ws")
        build_rich_collection(workspace, cluster["root"] / name / "corpus", documents=60)
        if ray_address:
            blocks_fail_here(monkeypatch)
        results[name] = benchsmith.cluster(
            COLLECTION, size=4, neighbours=4, workspace=str(workspace.root), ray=ray_address
        )
    here, on_ray = results["here"], results["on-ray"]
    assert on_ray.clusters == here.clusters and len(here.clusters) > 1
    assert {key: value for key, value in on_ray.stats.items() if key != "seconds"} == {
        key: value for key, value in here.stats.items() if key != "seconds"
    }


def test_where_the_graph_would_be_built_is_said_without_connecting():
    assert block_map(None) is map_here
    assert "in this process" in where_graph_builds(None)
    assert "Ray cluster at 10.0.0.9:6379" in where_graph_builds("10.0.0.9:6379")
