"""Cluster a stored collection: read its embeddings from Chroma, run the greedy traversal
(tools/corpus/clustering.py), persist the clusters of chunk ids in the workspace.

A clustering may walk the chunks of some page kinds only (``page_kinds``, tools/text/page_kinds.py:
synthesis leaves changelogs out unless asked); a chunk stored without a page kind counts as
narrative. Such a clustering is stored under a name of its own (stores/persistence/clusters.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence

import numpy as np

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.clusters import StoredClustering, find_clustering, save_clustering
from benchsmith.stores.persistence.spooled_texts import SpooledTexts
from benchsmith.stores.persistence.vectors import VectorStore
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.clustering import BlockMap, greedy_traversal_clusters, mean_consecutive_similarity
from benchsmith.tools.defaults import DEFAULT_CLUSTER_NEIGHBOURS, DEFAULT_CLUSTER_SIZE
from benchsmith.tools.text.page_kinds import PAGE_KINDS, chunk_page_kind


def stored_vectors(store: VectorStore) -> tuple[list[str], np.ndarray]:
    """Ids and embeddings (n, d) of every chunk, in a stable (id-sorted) order; no text."""
    ids, matrix, _ = _read_collection(store, None)
    return ids, matrix


class PageKindsSeen(set[str]):
    """The page kinds of every chunk a read went through (kept or not)."""


def stored_vectors_and_texts(
    store: VectorStore,
    texts: SpooledTexts,
    page_kinds: Collection[str] | None = None,
    seen: PageKindsSeen | None = None,
) -> tuple[list[str], np.ndarray, Callable[[Sequence[int]], list[str]]]:
    """As :func:`stored_vectors`, in the same one pass, with each chunk's text spooled to ``texts``:
    also ``texts_of(rows)``, the texts of these rows of the id order. With ``page_kinds``, only the
    chunks of those page kinds; ``seen`` gets the page kinds of all."""
    ids, matrix, positions = _read_collection(store, texts, page_kinds, seen)

    def texts_of(rows: Sequence[int]) -> list[str]:
        return texts.texts([int(positions[row]) for row in rows])

    return ids, matrix, texts_of


def _read_collection(
    store: VectorStore,
    texts: SpooledTexts | None,
    page_kinds: Collection[str] | None = None,
    seen: PageKindsSeen | None = None,
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Ids and vectors in id order (of the chunks of ``page_kinds``, when given), and for each of those
    rows the position it was read at (its text's in ``texts``); ``seen`` gets every chunk's page kind."""
    ids: list[str] = []
    vectors: list[np.ndarray] = []
    include = (
        "embeddings",
        *(("documents",) if texts is not None else ()),
        *(("metadatas",) if page_kinds is not None or seen is not None else ()),
    )
    for page in store.iter_all(include=include):
        kinds = [chunk_page_kind(metadata) for metadata in page["metadatas"]] if "metadatas" in include else []
        if seen is not None:
            seen.update(kinds)
        rows = (
            list(range(len(page["ids"])))
            if page_kinds is None
            else [row for row, kind in enumerate(kinds) if kind in page_kinds]
        )
        ids.extend(page["ids"][row] for row in rows)
        vectors.append(np.asarray(page["embeddings"], dtype=np.float32)[rows])
        if texts is not None:
            texts.extend([page["documents"][row] for row in rows])
    if not ids and page_kinds is not None and store.count():
        raise InputError(
            f"collection {store.name!r} holds no chunk of the page kinds {', '.join(sorted(page_kinds))}:"
            f" ask for other --page-kind values ({', '.join(PAGE_KINDS)})"
        )
    if not ids:
        raise InputError(f"collection {store.name!r} is empty: ingest a corpus into it first")
    order = np.argsort(ids)
    return [ids[i] for i in order], np.concatenate(vectors)[order], order


def clustering_kinds(page_kinds: Collection[str] | None) -> list[str] | None:
    """The page kinds a clustering walks, as stored: sorted; None when all kinds (every chunk)."""
    if page_kinds is None or set(PAGE_KINDS) <= set(page_kinds):
        return None
    return sorted(set(page_kinds))


def cluster_collection(
    workspace: Workspace,
    store: VectorStore,
    size: int = DEFAULT_CLUSTER_SIZE,
    neighbours: int = DEFAULT_CLUSTER_NEIGHBOURS,
    seed: int = 0,
    page_kinds: Collection[str] | None = None,
    map_blocks: BlockMap | None = None,
) -> StoredClustering:
    """The collection's clustering for these parameters (of the chunks of ``page_kinds``; None: all),
    computed once and then reused while the collection holds as many chunks as it did. The
    nearest-neighbour graph's blocks go through ``map_blocks`` (here by default; Ray with ``--ray``)."""
    kinds = clustering_kinds(page_kinds)
    existing = find_clustering(workspace, store.name, size, neighbours, seed, kinds)
    if (
        existing
        and existing.stats.get("collection_chunks", existing.chunk_count + len(existing.dropped)) == store.count()
    ):
        return existing
    started = time.perf_counter()
    seen = PageKindsSeen()
    # The texts come in the same pass as the vectors, spooled to a file, and are read back along
    # the path, a window at a time, for the near-identical check.
    with SpooledTexts() as texts:
        ids, vectors, texts_of = stored_vectors_and_texts(store, texts, kinds, seen)
        result = greedy_traversal_clusters(
            vectors, size=size, neighbours=neighbours, seed=seed, texts=texts_of, map_blocks=map_blocks
        )
    random_order = np.random.default_rng(seed).permutation(len(ids)).tolist()
    clustering = StoredClustering(
        collection=store.name,
        size=size,
        neighbours=neighbours,
        seed=seed,
        clusters=[[ids[i] for i in cluster] for cluster in result.clusters],
        dropped=[ids[i] for i in result.dropped],
        page_kinds=kinds if kinds is not None and seen - set(kinds) else None,  # none left out: every chunk
        stats={
            "chunks": len(ids),
            "collection_chunks": store.count(),
            "page_kinds_present": sorted(seen),
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
