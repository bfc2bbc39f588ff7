"""What the synthesis nodes read, opened once per process and cached: the collection's store, the
model seam, the clustering, chunk records and vectors, the corpus statistics, a BM25 index over
the collection. A conversation run in line looks each up once (graphs/runtime/inline.once_per_run),
not at every node."""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from benchsmith.agents.seam.models import ModelSeam
from benchsmith.graphs.contexts.synthesize import SynthesisContext
from benchsmith.graphs.runtime.inline import once_per_run
from benchsmith.graphs.runtime.resources import chroma_client, run_seam
from benchsmith.graphs.synthesis.state import STANDALONE_RUN_ID, ConversationState, job
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.bounded_cache import BoundedCache
from benchsmith.stores.persistence.clusters import (
    StoredClustering,
    clustering_paths,
    clustering_serves,
    read_clustering,
)
from benchsmith.stores.persistence.corpus_stats import CorpusStatistics, corpus_stats_path, load_corpus_stats
from benchsmith.stores.persistence.vectors import VectorStore
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.corpus_clusters import clustering_kinds
from benchsmith.tools.corpus.corpus_statistics import corpus_statistics
from benchsmith.tools.retrieval.bm25 import BM25Index
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction


@functools.lru_cache(maxsize=8)
def open_store(workspace: Workspace, collection: str, chroma_host: str | None) -> VectorStore:
    client = chroma_client(workspace, chroma_host)
    return VectorStore.open_existing(client, collection, lambda spec: ChromaEmbeddingFunction(spec=spec))


def vector_store(runtime: Runtime[SynthesisContext], collection: str) -> VectorStore:
    return once_per_run(
        ("vector store", collection),
        lambda: open_store(job.workspace(runtime), collection, job.context(runtime).chroma_host),
    )


def model_seam(runtime: Runtime[SynthesisContext], run_id: str | None) -> ModelSeam:
    context, run_id = job.context(runtime), run_id or STANDALONE_RUN_ID
    return once_per_run(("seam", run_id), lambda: run_seam(job.workspace(runtime), run_id, context.llm, context))


@functools.lru_cache(maxsize=8)
def _load_clustering(path: str, modified: float) -> StoredClustering | None:
    """Parsed once per file version (``modified``), not at every turn."""
    return read_clustering(Path(path))


def clustering_of(runtime: Runtime[SynthesisContext], collection: str) -> StoredClustering:
    return once_per_run(("clustering", collection), lambda: _current_clustering(runtime, collection))


def _current_clustering(runtime: Runtime[SynthesisContext], collection: str) -> StoredClustering:
    context = job.context(runtime)
    workspace = job.workspace(runtime)
    kinds = clustering_kinds(
        context.page_kinds
    )  # a clustering of the chunks of these page kinds (stores/persistence/clusters.py)
    clustering = None
    for path in clustering_paths(workspace, collection, context.cluster_size, context.neighbours, context.seed, kinds):
        found = _load_clustering(str(path), path.stat().st_mtime) if path.exists() else None
        if found is not None and clustering_serves(found, kinds):
            clustering = found
            break
    if clustering is None:
        raise InputError(
            f"no clustering of {collection!r} with size {context.cluster_size}: "
            f"run `benchsmith cluster --collection {collection}` first"
        )
    return clustering


def walked_clusters(runtime: Runtime[SynthesisContext], state: ConversationState) -> list[list[str]]:
    """The clusters a conversation walks: the collection's clustering, or the given chunks as one."""
    if state.get("chunk_ids"):
        return [list(state["chunk_ids"])]
    return clustering_of(runtime, state["collection"]).clusters


# Keyed by (workspace, collection, chunk id): an id names a span of a file (tools/corpus/documents.py), and the same
# path and span in another corpus is another text. Within a collection an id's text and vector stay as ingested
# (re-ingesting changed files is a new collection's job: see `benchsmith ingest`). Bounded, the least recently
# used dropped, so a long-lived process (Studio, a worker) does not keep every chunk it ever read: a turn reads
# about 30 chunks (its cluster and the next one's, and distant candidates), so 4096 holds the working set of 64
# conversations in flight at once (64 × ~30 ≈ 2000; the default runs 4), for ~8 MB of 1 KB passages and ~6 MB
# of 384-d vectors. A chunk's record and vector are read together: a read of the store costs about a
# millisecond of CPU whatever it returns (Chroma's query and its worker threads), and what reads one soon
# reads the other.
PASSAGE_CACHE_SIZE = 4096
Chunk = tuple[dict[str, Any], np.ndarray]  # the record ({"text", **metadata}) and the vector
chunk_cache: BoundedCache[tuple[str, str, str], Chunk] = BoundedCache(PASSAGE_CACHE_SIZE)
_statistics_lock = threading.Lock()


def passage_records(runtime: Runtime[SynthesisContext], collection: str, ids: list[str]) -> dict[str, dict[str, Any]]:
    chunks = chunks_of(runtime, collection, ids)
    if missing := [chunk_id for chunk_id in ids if chunk_id not in chunks]:
        raise InputError(
            f"chunk ids missing from collection {collection!r}: {missing[:3]} (re-cluster after re-ingesting)"
        )
    return {chunk_id: chunk[0] for chunk_id, chunk in chunks.items()}


def passages_of(runtime: Runtime[SynthesisContext], collection: str, ids: list[str]) -> list[dict[str, Any]]:
    records = passage_records(runtime, collection, ids)
    return [
        {"id": chunk_id, "title": records[chunk_id].get("title", ""), "text": records[chunk_id]["text"]}
        for chunk_id in ids
    ]


def embeddings_of(runtime: Runtime[SynthesisContext], collection: str, ids: list[str]) -> dict[str, np.ndarray]:
    chunks = chunks_of(runtime, collection, ids)
    return {chunk_id: chunks[chunk_id][1] for chunk_id in ids}


def chunks_of(runtime: Runtime[SynthesisContext], collection: str, ids: list[str]) -> dict[str, Chunk]:
    """``{chunk id: (record, vector)}`` from the cache, the ids it lacks read from the collection's store at once;
    an id the store lacks is absent."""
    scope = (str(job.workspace(runtime).root), collection)

    def fetch_missing(keys: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], Chunk]:
        fetched = vector_store(runtime, collection).chunks([key[2] for key in keys])
        return {(*scope, chunk_id): chunk for chunk_id, chunk in fetched.items()}

    found = chunk_cache.get_or_fetch([(*scope, chunk_id) for chunk_id in ids], fetch_missing)
    return {key[2]: chunk for key, chunk in found.items()}


@functools.lru_cache(maxsize=4)
def _load_corpus_stats(workspace: Workspace, collection: str, modified: float) -> CorpusStatistics | None:
    """Read once per file version (``modified``), not at every turn."""
    return load_corpus_stats(workspace, collection)


def corpus_stats(runtime: Runtime[SynthesisContext], collection: str) -> CorpusStatistics:
    """The collection's word and similarity statistics; computed here when no run planned them
    (a conversation run on its own)."""
    return once_per_run(("corpus statistics", collection), lambda: _current_corpus_stats(runtime, collection))


def _current_corpus_stats(runtime: Runtime[SynthesisContext], collection: str) -> CorpusStatistics:
    workspace = job.workspace(runtime)
    path = corpus_stats_path(workspace, collection)
    with _statistics_lock:
        if not path.exists():
            corpus_statistics(workspace, vector_store(runtime, collection))
    statistics = _load_corpus_stats(workspace, collection, path.stat().st_mtime)
    if statistics is None:
        raise InputError(f"{path}: unreadable corpus statistics (delete the file to recompute them)")
    return statistics


def cosine(first: np.ndarray, second: np.ndarray) -> float:
    norms = float(np.linalg.norm(first) * np.linalg.norm(second))
    return float(np.dot(first, second) / norms) if norms else 0.0


def document_of(runtime: Runtime[SynthesisContext], collection: str, chunk_id: str) -> str:
    """The document (page) a chunk comes from; a chunk without one is its own."""
    record = passage_records(runtime, collection, [chunk_id])[chunk_id]
    return str(record.get("doc_id") or record.get("source") or chunk_id)


@functools.lru_cache(maxsize=2)
def bm25_index(workspace: Workspace, collection: str, chroma_host: str | None) -> BM25Index:
    """BM25 over the whole collection, built once per process: the pool an unanswerable turn is checked on."""
    store = open_store(workspace, collection, chroma_host)
    return BM25Index.from_stream(
        (chunk_id, f"{(metadata or {}).get('title', '')} {text}")
        for page in store.iter_all()
        for chunk_id, text, metadata in zip(page["ids"], page["documents"], page["metadatas"])
    )
