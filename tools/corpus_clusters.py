"""Cluster a stored collection: read its embeddings from Chroma, run the greedy traversal
(tools/clustering.py), persist the clusters of chunk ids in the workspace."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from benchsmith.stores.clusters import StoredClustering, load_clustering, save_clustering
from benchsmith.stores.errors import InputError
from benchsmith.stores.spooled_texts import SpooledTexts
from benchsmith.stores.vectors import VectorStore
from benchsmith.stores.workspace import Workspace
from benchsmith.tools.clustering import greedy_traversal_clusters, mean_consecutive_similarity
from benchsmith.tools.defaults import DEFAULT_CLUSTER_NEIGHBOURS as DEFAULT_NEIGHBOURS
from benchsmith.tools.defaults import DEFAULT_CLUSTER_SIZE



def stored_vectors(store: VectorStore) -> tuple[list[str], np.ndarray]:
    """Ids and embeddings (n, d) of every chunk, in a stable (id-sorted) order; no text."""
    ids, matrix, _ = _read_collection(store, None)
    return ids, matrix


def stored_vectors_and_texts(store: VectorStore, texts: SpooledTexts) -> tuple[list[str], np.ndarray,
                                                                             Callable[[Sequence[int]], list[str]]]:
    """As :func:`stored_vectors`, in the same one pass, with each chunk's text spooled to ``texts``:
    also ``texts_of(rows)``, the texts of these rows of the id order."""
    ids, matrix, positions = _read_collection(store, texts)

    def texts_of(rows: Sequence[int]) -> list[str]:
        return texts.texts([int(positions[row]) for row in rows])

    return ids, matrix, texts_of


def _read_collection(store: VectorStore, texts: SpooledTexts | None) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Ids and vectors in id order, and for each of those rows the position it was read at (its
    text's in ``texts``)."""
    ids: list[str] = []
    vectors: list[np.ndarray] = []
    for page in store.iter_all(include=("embeddings", "documents") if texts is not None else ("embeddings",)):
        ids.extend(page["ids"])
        vectors.append(np.asarray(page["embeddings"], dtype=np.float32))
        if texts is not None:
            texts.extend(page["documents"])
    if not ids:
        raise InputError(f"collection {store.name!r} is empty: ingest a corpus into it first")
    order = np.argsort(ids)
    return [ids[i] for i in order], np.concatenate(vectors)[order], order


def cluster_collection(workspace: Workspace, store: VectorStore, size: int = DEFAULT_CLUSTER_SIZE,
                       neighbours: int = DEFAULT_NEIGHBOURS, seed: int = 0) -> StoredClustering:
    """The collection's clustering for these parameters, computed once and then reused."""
    if existing := load_clustering(workspace, store.name, size, neighbours, seed):
        if existing.chunk_count + len(existing.dropped) == store.count():
            return existing
    started = time.perf_counter()
    # The texts come in the same pass as the vectors, spooled to a file, and are read back along
    # the path, a window at a time, for the near-identical check.
    with SpooledTexts() as texts:
        ids, vectors, texts_of = stored_vectors_and_texts(store, texts)
        result = greedy_traversal_clusters(vectors, size=size, neighbours=neighbours, seed=seed, texts=texts_of)
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
