"""What a configuration search (graphs/select/graph.py) retrieves with: the corpus, its chunkings
and their indexes, the query texts of each rewrite level, and one configuration's run.

Loaded once per process and shared by the search's workers: the corpus (per file version),
each chunking's chunks and BM25 index, and each (chunking, embedder) dense index. Every
chunking gets its own Chroma collection per embedder, named by the corpus's content hash,
filled resumably (stored ids are skipped) through the workspace's embedding cache
(tools/retrieval/cached_embedding.py): a chunk's vector is computed once per embedder, whichever
chunking, configuration, later run or ingestion of the same tree asked for it first.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchsmith.agents.query_expander import QueryExpander
from benchsmith.agents.rewriter import Rewriter
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.graphs.runtime.corpus_indexes import COLLECTION_UNSAFE
from benchsmith.graphs.runtime.progress import progress_reporter
from benchsmith.graphs.runtime.resources import chroma_client, embedder_for, scorer_for
from benchsmith.stores.formats.beir import BenchmarkQuery
from benchsmith.stores.formats.trec import Run
from benchsmith.stores.persistence.jsonl import load_jsonl, write_jsonl_atomic
from benchsmith.stores.persistence.vectors import VectorStore
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.cleaning import clean_documents
from benchsmith.tools.corpus.documents import Document
from benchsmith.tools.corpus.loaders import STDLIB_SOURCE, load_sources
from benchsmith.tools.defaults import DEFAULT_INDEX_BATCH_SIZE
from benchsmith.tools.retrieval.bm25 import BM25Index
from benchsmith.tools.retrieval.cached_embedding import cached_embedder
from benchsmith.tools.retrieval.chunking_strategies import ChunkingSpec, SelectChunk, chunk_corpus
from benchsmith.tools.retrieval.dense_retrieval import DenseIndex
from benchsmith.tools.retrieval.embedded_text import embedded_text
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction, Embedder
from benchsmith.tools.retrieval.fusion import FusionMethod, fuse_runs
from benchsmith.tools.retrieval.indexing import IndexItem, embed_into
from benchsmith.tools.retrieval.metadata_filters import MetadataFilter
from benchsmith.tools.retrieval.query_building import HistoryMode, build_query
from benchsmith.tools.retrieval.rerank import rerank_run
from benchsmith.tools.retrieval.retriever_specs import RetrieverSpec
from benchsmith.tools.retrieval.strategy_space import RewriteSpec, SelectConfiguration

ID_SCHEME = "path:span"  # chunk ids (tools/corpus/documents.chunk_ids)
FUSION_CANDIDATES = 100  # documents per component run that a fusion ranks (at least the depth wanted)
_lock = threading.Lock()


# ---------------------------------------------------------------------------------------
# The corpus and its chunkings.


@dataclass
class Corpus:
    documents: list[Document]
    fingerprint: str  # content hash: names the collections built from it


_corpora: dict[tuple[Any, ...], Corpus] = {}


def corpus_of(sources: Sequence[str]) -> Corpus:
    """The corpus of ``sources`` (anything ``benchsmith ingest`` reads: folders, files, a BEIR
    corpus.jsonl, ``stdlib``), loaded and cleaned as ingestion does; read again when a file changes."""
    stamp = tuple((source, _modified(source)) for source in sources)
    with _lock:
        if stamp not in _corpora:
            documents = clean_documents(load_sources(list(sources)).documents)
            digest = hashlib.sha256()
            for document in documents:
                digest.update(f"{document.id}\x1f{document.title}\x1f{document.text}\x1e".encode())
            _corpora.clear()  # one corpus per process at a time: a corpus can be large
            _corpora[stamp] = Corpus(documents, digest.hexdigest()[:12])
        return _corpora[stamp]


def _modified(source: str) -> float:
    path = Path(source)
    if source == STDLIB_SOURCE or not path.exists():
        return 0.0
    if path.is_file():
        return path.stat().st_mtime
    return max((item.stat().st_mtime for item in path.rglob("*") if item.is_file()), default=0.0)


@dataclass
class ChunkIndex:
    """One chunking of the corpus, with its indexes, built on first use."""

    corpus: Corpus
    spec: ChunkingSpec
    chunks: list[SelectChunk]
    by_id: dict[str, SelectChunk] = field(init=False)
    _bm25: BM25Index | None = field(default=None, init=False)
    _dense: dict[tuple[str, str], DenseIndex] = field(default_factory=dict, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        self.by_id = {chunk.id: chunk for chunk in self.chunks}

    def bm25(self) -> BM25Index:
        with self._lock:
            if self._bm25 is None:
                self._bm25 = BM25Index([chunk.id for chunk in self.chunks], [chunk.text for chunk in self.chunks])
            return self._bm25

    def allowed_ids(self, metadata_filter: MetadataFilter) -> set[str] | None:
        """The chunks a filter lets through; None when it lets every chunk through."""
        if not metadata_filter.predicates:
            return None
        return {chunk.id for chunk in self.chunks if metadata_filter.allows(chunk.metadata())}

    def dense(
        self, workspace: Workspace, chroma_host: str | None, embedder: Embedder, metadata_filter: MetadataFilter
    ) -> DenseIndex:
        """Exact search over this chunking's vectors under ``embedder`` (only the chunks the filter allows)."""
        with self._lock:
            key = (embedder.name, metadata_filter.label)
            if key not in self._dense:
                everything = self._dense.get((embedder.name, "none")) or self._embedded(
                    workspace, chroma_host, embedder
                )
                self._dense[(embedder.name, "none")] = everything
                allowed = self.allowed_ids(metadata_filter)
                if allowed is not None:
                    mask = np.array([doc_id in allowed for doc_id in everything.doc_ids], dtype=bool)
                    self._dense[key] = DenseIndex(everything.doc_ids[mask].tolist(), everything.vectors[mask])
            return self._dense[key]

    def _embedded(self, workspace: Workspace, chroma_host: str | None, embedder: Embedder) -> DenseIndex:
        store = VectorStore(
            chroma_client(workspace, chroma_host),
            collection_name(self.corpus, self.spec, embedder),
            ChromaEmbeddingFunction(embedder),
            embedder.name,
        )
        items = [IndexItem(chunk.id, embedded_text(chunk.title, chunk.text), chunk.metadata()) for chunk in self.chunks]
        # Cached by text: chunks another chunking, an ingestion or an earlier search embedded are not embedded again.
        embed_into(
            store,
            items,
            cached_embedder(embedder, workspace),
            DEFAULT_INDEX_BATCH_SIZE,
            progress_reporter(f"embed {self.spec.label}"),
        )
        return DenseIndex.from_store(store)


def collection_name(corpus: Corpus, spec: ChunkingSpec, embedder: Embedder) -> str:
    """``select-<corpus hash>-<chunking hash>-<embedder>``, within Chroma's naming rules."""
    # The id scheme is part of the name: a collection of the old `<doc id>#<n>` ids is not reused.
    chunking = hashlib.sha1(f"{spec.label} {ID_SCHEME}".encode()).hexdigest()[:8]
    return COLLECTION_UNSAFE.sub("-", f"select-{corpus.fingerprint}-{chunking}-{embedder.name}")[:60].strip("-_")


_chunk_indexes: dict[tuple[str, str], ChunkIndex] = {}


def chunk_index(corpus: Corpus, spec: ChunkingSpec) -> ChunkIndex:
    key = (corpus.fingerprint, spec.label)
    with _lock:
        for stale in [known for known in _chunk_indexes if known[0] != corpus.fingerprint]:
            del _chunk_indexes[stale]  # another corpus's chunks: a long-lived process (Studio) keeps one corpus
        if key not in _chunk_indexes:
            _chunk_indexes[key] = ChunkIndex(corpus, spec, chunk_corpus(corpus.documents, spec))
        return _chunk_indexes[key]


# ---------------------------------------------------------------------------------------
# Query texts per rewrite level.

_query_lock = threading.Lock()


def query_texts(
    path: Path, queries: Sequence[BenchmarkQuery], rewrite: RewriteSpec, seam: Callable[[], ModelSeam], concurrency: int
) -> dict[str, list[str]]:
    """``{query id: [texts]}`` a rewrite level sends (the first is the query itself or its
    rewrite; expansions follow), from ``path`` when written, else built and written there."""
    with _query_lock:
        if path.exists():
            return {record["_id"]: record["texts"] for record in load_jsonl(path)}
        report = progress_reporter(f"queries {rewrite.label}")

        def texts_of(query: BenchmarkQuery) -> list[str]:
            asked = build_query(query, HistoryMode("full"))
            if rewrite.kind == "rewrite":
                return [
                    build_query(
                        query,
                        HistoryMode("rewrite"),
                        lambda history, question: seam().run(Rewriter(), history=history, question=question).query,
                    )
                ]
            if rewrite.kind == "expand":
                expanded = (
                    seam()
                    .run(QueryExpander(), history=query.history, question=query.question, count=rewrite.expansions)
                    .queries[: rewrite.expansions]
                )
                return list(dict.fromkeys([asked, *expanded]))
            return [asked]

        texts: dict[str, list[str]] = {}
        with ThreadPoolExecutor(max_workers=max(1, concurrency if rewrite.kind != "none" else 1)) as pool:
            futures = {query.id: pool.submit(texts_of, query) for query in queries}
            for done, (query_id, future) in enumerate(futures.items(), start=1):
                texts[query_id] = future.result()
                report(done, len(futures))
        write_jsonl_atomic(path, ({"_id": query_id, "texts": value} for query_id, value in texts.items()))
        return texts


# ---------------------------------------------------------------------------------------
# One configuration's run.


@dataclass(frozen=True)
class RetrievalSettings:
    workspace: Workspace
    chroma_host: str | None
    embedder: str  # for "dense" without a model of its own
    rerank_depth: int


def configuration_run(
    configuration: SelectConfiguration, index: ChunkIndex, texts: Mapping[str, list[str]], settings: RetrievalSettings
) -> Run:
    """The configuration's top K per query: each query text retrieved (expansions fused by RRF),
    reranked when the configuration reranks, cut to K."""
    depth = max(configuration.top_k, settings.rerank_depth if configuration.rerank else 0)
    variants = max((len(value) for value in texts.values()), default=1)
    runs = [
        first_stage(
            configuration.retriever,
            index,
            {query_id: value[variant] for query_id, value in texts.items() if len(value) > variant},
            depth,
            configuration.filter,
            settings,
        )
        for variant in range(variants)
    ]
    run = runs[0] if len(runs) == 1 else fused(runs, "rrf", None, depth)
    if configuration.rerank:
        queries = {query_id: value[0] for query_id, value in texts.items()}
        run = rerank_run(
            run,
            queries,
            {chunk_id: index.by_id[chunk_id].text for docs in run.values() for chunk_id in docs},
            scorer_for(configuration.rerank),
            settings.rerank_depth,
        )
    return {
        query_id: dict(
            sorted(run.get(query_id, {}).items(), key=lambda item: (-item[1], item[0]))[: configuration.top_k]
        )
        for query_id in texts
    }


def first_stage(
    retriever: RetrieverSpec,
    index: ChunkIndex,
    queries: Mapping[str, str],
    depth: int,
    metadata_filter: MetadataFilter,
    settings: RetrievalSettings,
) -> Run:
    """A retriever's top ``depth`` chunks of those the filter allows, per query."""
    if not queries:
        return {}
    if retriever.kind == "hybrid":
        candidates = max(depth, FUSION_CANDIDATES)
        runs = [
            first_stage(component, index, queries, candidates, metadata_filter, settings)
            for component in retriever.components
        ]
        return fused(runs, retriever.method, retriever.weights, depth)
    if retriever.kind == "bm25":
        allowed = index.allowed_ids(metadata_filter)
        # Searching past the excluded chunks finds `depth` allowed ones whenever there are that many.
        excluded = len(index.chunks) - len(allowed) if allowed is not None else 0
        run = index.bm25().search(dict(queries), depth + excluded)
        return {
            query_id: dict(
                list((doc_id, score) for doc_id, score in ranked.items() if allowed is None or doc_id in allowed)[
                    :depth
                ]
            )
            for query_id, ranked in run.items()
        }
    embedder = embedder_for(retriever.model or settings.embedder)
    dense = index.dense(settings.workspace, settings.chroma_host, embedder, metadata_filter)
    if not len(dense.doc_ids):
        return {query_id: {} for query_id in queries}
    query_ids = list(queries)
    return dense.search(query_ids, embedder.encode([queries[query_id] for query_id in query_ids]), depth)


def fused(runs: Sequence[Run], method: FusionMethod | None, weights: Sequence[float] | None, depth: int) -> Run:
    return fuse_runs(list(runs), method or "rrf", weights, depth=depth)
