"""A benchmark, its corpus and its retrieval indexes, loaded once per process (per file
version) and shared by the graphs that read them (evaluation runs, the audit)."""

from __future__ import annotations

import functools
import re
import threading
from array import array
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchsmith.agents.text import WordStatistics
from benchsmith.graphs.runtime.progress import progress_reporter
from benchsmith.graphs.runtime.resources import chroma_client
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import Benchmark, file_fingerprint, load_benchmark
from benchsmith.stores.formats.integrity import DuplicateIds, IdProblem
from benchsmith.stores.persistence.bounded_cache import BoundedCache
from benchsmith.stores.persistence.jsonl import JsonlRows
from benchsmith.stores.persistence.lexical_indexes import load_bm25, save_bm25
from benchsmith.stores.persistence.vectors import VectorStore
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.corpus_statistics import exact_word_statistics
from benchsmith.tools.corpus.loaders import beir_document, beir_documents
from benchsmith.tools.defaults import DEFAULT_INDEX_BATCH_SIZE
from benchsmith.tools.retrieval.bm25 import DEFAULT_B, DEFAULT_K1, BM25Index
from benchsmith.tools.retrieval.dense_retrieval import DenseIndex
from benchsmith.tools.retrieval.embedded_text import embedded_text
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction, Embedder
from benchsmith.tools.retrieval.indexing import IndexItem, embed_into

COLLECTION_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]+")

_lock = threading.Lock()
# A dense index holds the collection's whole matrix: a long-lived process keeps the last few.
_dense_indexes: BoundedCache[tuple[str, str], DenseIndex] = BoundedCache(4)


def cached_benchmark(spec: str, workspace: Workspace, split: str = "test", corpus: str | None = None) -> Benchmark:
    """``load_benchmark``, parsed again only when one of its files changed."""
    path = Path(spec) if Path(spec).exists() else workspace.run_dir(spec)
    # Every layout's files: BEIR and dialogue JSONL, TSV qrels and labels, MTRAG's conversations.json.
    patterns = ("*.jsonl", "*.tsv", "conversations*.json")
    files = (
        [path]
        if path.is_file()
        else [file for pattern in patterns for file in path.rglob(pattern)]
        if path.exists()
        else []
    )
    if corpus:
        files.append(Path(corpus))
    modified = max((file.stat().st_mtime for file in files if file.exists()), default=0.0)
    return _load_benchmark(spec, workspace, split, corpus, modified)


@functools.lru_cache(maxsize=2)
def _load_benchmark(spec: str, workspace: Workspace, split: str, corpus: str | None, modified: float) -> Benchmark:
    return load_benchmark(spec, workspace, split, Path(corpus) if corpus else None)


class CorpusFile(Mapping[str, tuple[str, str]]):
    """``{doc id: (title, text)}`` of a BEIR ``corpus.jsonl``, each read from the file when asked
    for: one pass checks the file and notes each document's row, so a million documents cost
    their ids, not their texts. Of documents sharing an id, the first (``duplicates`` the rest)."""

    def __init__(self, path: Path):
        self.path = path
        self._rows = JsonlRows(path)
        self._row_of: dict[str, int] = {}
        self.duplicates = DuplicateIds(str(path))
        for row, _, document in beir_documents(self._rows, path):
            if document.id in self._row_of:
                self.duplicates.add(document.id)  # the first document of an id is kept
            else:
                self._row_of[document.id] = row
        if not self._row_of:
            raise InputError(f"{path}: the corpus has no documents")

    def __getitem__(self, doc_id: str) -> tuple[str, str]:
        document = beir_document(self._rows.record(self._row_of[doc_id]), self.path)
        return document.title, document.text

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._row_of

    def __iter__(self) -> Iterator[str]:
        return iter(self._row_of)

    def __len__(self) -> int:
        return len(self._row_of)


@functools.lru_cache(maxsize=2)
def _corpus(path: Path, modified: float) -> CorpusFile:
    return CorpusFile(path)


def corpus_documents(benchmark: Benchmark) -> Mapping[str, tuple[str, str]]:
    """``{doc id: (title, text)}`` of the benchmark's corpus, checked once per file version and
    read from the file when asked for; of documents sharing an id, the first (see
    :func:`corpus_duplicates`)."""
    return _corpus(benchmark.corpus_path, benchmark.corpus_path.stat().st_mtime)


def corpus_duplicates(benchmark: Benchmark) -> IdProblem | None:
    """Document ids the corpus names more than once, if any."""
    duplicates = _corpus(benchmark.corpus_path, benchmark.corpus_path.stat().st_mtime).duplicates
    return duplicates.problem("document ids", "the first document of each id is kept, the later ones are ignored")


def document_text(title: str, text: str) -> str:
    """What retrievers and rerankers see of a document: its title, then its text."""
    return f"{title} {text}".strip()


class DocumentTexts(Mapping[str, str]):
    """``{doc id: document_text}`` of a corpus, each text joined when asked for (not all at once)."""

    def __init__(self, documents: Mapping[str, tuple[str, str]]):
        self.documents = documents

    def __getitem__(self, doc_id: str) -> str:
        return document_text(*self.documents[doc_id])

    def __iter__(self) -> Iterator[str]:
        return iter(self.documents)

    def __len__(self) -> int:
        return len(self.documents)


@functools.lru_cache(maxsize=2)
def _bm25(path: Path, modified: float, workspace: Workspace | None) -> BM25Index:
    fingerprint = file_fingerprint(path) if workspace else ""
    if workspace and (stored := load_bm25(workspace, fingerprint, DEFAULT_K1, DEFAULT_B)) is not None:
        return BM25Index.from_stored(stored)
    corpus = _corpus(path, modified)
    index = BM25Index.from_stream((doc_id, document_text(title, text)) for doc_id, (title, text) in corpus.items())
    if workspace:
        save_bm25(workspace, fingerprint, index.stored())
    return index


def bm25_index(benchmark: Benchmark, workspace: Workspace | None = None) -> BM25Index:
    """BM25 over the benchmark's corpus, built once per process; with a ``workspace``, kept there
    for the next process over the same corpus bytes (stores/persistence/lexical_indexes.py)."""
    with _lock:
        return _bm25(benchmark.corpus_path, benchmark.corpus_path.stat().st_mtime, workspace)


def dense_index(workspace: Workspace, chroma_host: str | None, benchmark: Benchmark, embedder: Embedder) -> DenseIndex:
    """The corpus's vectors under ``embedder``, each passage embedded as tools/retrieval/embedded_text.py says:
    those of a collection that holds every document of this corpus with the same text and embedder
    (the collection a synthesis run was built from first; the corpus may leave out chunks the
    benchmark holds out), else a collection per (corpus, embedder), filled on demand (resumably:
    stored ids are skipped)."""
    key = (benchmark.corpus_fingerprint(), embedder.name)
    with _lock:
        if key not in _dense_indexes:
            client = chroma_client(workspace, chroma_host)
            documents = corpus_documents(benchmark)
            index = _held_index(client, benchmark, embedder, documents)
            if index is None:
                name = COLLECTION_UNSAFE.sub("-", f"eval-{key[0]}-{embedder.name}")[:60].strip("-_")
                store = VectorStore(client, name, ChromaEmbeddingFunction(embedder), embedder.name)
                lengths = array("q", (len(embedded_text(*document)) for document in documents.values()))
                embed_into(
                    store,
                    _IndexItems(documents),
                    embedder,
                    DEFAULT_INDEX_BATCH_SIZE,
                    progress_reporter("embed corpus"),
                    text_lengths=lengths,
                )
                index = DenseIndex.from_store(store)
            _dense_indexes[key] = index
        return _dense_indexes[key]


class _IndexItems(Sequence[IndexItem]):
    """The corpus's documents as index items by position, each read when a batch asks for it."""

    def __init__(self, documents: Mapping[str, tuple[str, str]]):
        self.documents, self.ids = documents, list(documents)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, position: int) -> IndexItem:  # type: ignore[override]
        return IndexItem(self.ids[position], embedded_text(*self.documents[self.ids[position]]))


PROBED_DOCUMENTS = 16  # checked in each candidate collection before the whole corpus is


def _held_index(
    client: Any, benchmark: Benchmark, embedder: Embedder, documents: Mapping[str, tuple[str, str]]
) -> DenseIndex | None:
    """The vectors of a collection of the workspace that holds every document of the corpus with
    the text it would be embedded as, built with ``embedder``: the benchmark's source collection
    first, then the others by name. Its vectors are the ones an embedding would give (the same
    text, the same model), read instead of computed, and the same ones `validate` reads."""
    candidates = sorted(collection.name for collection in client.list_collections())
    if benchmark.source_collection in candidates:
        candidates.remove(benchmark.source_collection)
        candidates.insert(0, benchmark.source_collection)
    doc_ids = list(documents)
    for name in candidates:
        metadata = client.get_collection(name).metadata or {}
        if metadata.get("embedder") != embedder.name:
            continue
        store = VectorStore(client, name, ChromaEmbeddingFunction(embedder), embedder.name)
        if (
            store.count() < len(doc_ids)
            or not _holds(store, doc_ids[:PROBED_DOCUMENTS], documents)
            or not _holds(store, doc_ids, documents)
        ):
            continue
        return DenseIndex.from_store(store).restricted_to(set(doc_ids))
    return None


def _holds(store: VectorStore, doc_ids: Sequence[str], documents: Mapping[str, tuple[str, str]]) -> bool:
    stored = store.stored_texts(doc_ids)
    return all(stored.get(doc_id) == embedded_text(*documents[doc_id]) for doc_id in doc_ids)


_statistics_cache: dict[tuple[str, float], WordStatistics] = {}
_statistics_lock = threading.Lock()


def corpus_statistics(benchmark: Benchmark) -> WordStatistics:
    """The corpus's word statistics, which the offline pool judge weighs the question's terms by
    (the last corpus's, per file version): the audit's and validate's judges read the same."""
    key = (str(benchmark.corpus_path), benchmark.corpus_path.stat().st_mtime)
    with _statistics_lock:
        if key not in _statistics_cache:
            _statistics_cache.clear()
            _statistics_cache[key] = exact_word_statistics(
                document_text(*document) for document in corpus_documents(benchmark).values()
            )
        return _statistics_cache[key]
