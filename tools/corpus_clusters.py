"""Cluster a stored collection: read its embeddings from Chroma, run the greedy traversal
(tools/clustering.py), persist the clusters of chunk ids in the workspace."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from benchsmith.stores.clusters import StoredClustering, load_clustering, save_clustering
from benchsmith.stores.errors import InputError
from benchsmith.stores.vectors import VectorStore
from benchsmith.stores.workspace import Workspace
from benchsmith.tools.clustering import greedy_traversal_clusters, mean_consecutive_similarity
from benchsmith.tools.defaults import DEFAULT_CLUSTER_NEIGHBOURS as DEFAULT_NEIGHBOURS
from benchsmith.tools.defaults import DEFAULT_CLUSTER_SIZE



def stored_vectors(store: VectorStore) -> tuple[list[str], np.ndarray]:
    """Ids and embeddings (n, d) of every chunk, in a stable (id-sorted) order; no text."""
    ids: list[str] = []
    vectors: list[np.ndarray] = []
    for page in store.iter_all(include=("embeddings",)):
        ids.extend(page["ids"])
        vectors.append(np.asarray(page["embeddings"], dtype=np.float32))
    if not ids:
        raise InputError(f"collection {store.name!r} is empty: ingest a corpus into it first")
    order = np.argsort(ids)
    matrix = np.concatenate(vectors)[order]
    return [ids[i] for i in order], matrix


def stored_texts_of(store: VectorStore, ids: list[str]) -> Callable[[Sequence[int]], list[str]]:
    """``texts_of(rows)``: the stored texts of ``ids[row]`` for these rows, read from the store."""

    def texts_of(rows: Sequence[int]) -> list[str]:
        wanted = [ids[row] for row in rows]
        found = store.stored_texts(wanted)
        return [found[chunk_id] for chunk_id in wanted]

    return texts_of


def cluster_collection(workspace: Workspace, store: VectorStore, size: int = DEFAULT_CLUSTER_SIZE,
                       neighbours: int = DEFAULT_NEIGHBOURS, seed: int = 0) -> StoredClustering:
    """The collection's clustering for these parameters, computed once and then reused."""
    if existing := load_clustering(workspace, store.name, size, neighbours, seed):
        if existing.chunk_count + len(existing.dropped) == store.count():
            return existing
    started = time.perf_counter()
    ids, vectors = stored_vectors(store)
    # The texts are read along the path, a window at a time, for the near-identical check.
    result = greedy_traversal_clusters(vectors, size=size, neighbours=neighbours, seed=seed,
                                       texts=stored_texts_of(store, ids))
    random_order = np.random.default_rng(seed).permutation(len(ids)).tolist()
    clustering = StoredClustering(
        collection=store.name, size=size, neighbours=neighbours, seed=seed,
        clusters=[[ids[i] for i in cluster] for cluster in result.clusters],
        dropped=[ids[i] for i in result.dropped],
        stats={
            "chunks": len(ids),
            "clusters": len(result.clusters),
            "dropped_near_identical": len(result.dropped),
            "searches": result.searches,
            "path_similarity": round(mean_consecutive_similarity(vectors, result.path), 4),
            "random_order_similarity": round(mean_consecutive_similarity(vectors, random_order), 4),
            "seconds": round(time.perf_counter() - started, 2),
        },
    )
    save_clustering(workspace, clustering)
    return clustering
