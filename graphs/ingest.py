"""Ingestion graph: load → clean → chunk → dedup → quality → embed.

Each stage reads the previous stage's file in the run directory and writes its own
(atomically), so the state carries counts only and any node can be re-run after a crash
with the same result. The embed stage upserts in batches and skips chunks already in the
collection: a resumed run re-embeds nothing that was stored.
"""

from __future__ import annotations

import functools
import operator
import time
from collections.abc import Callable
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from benchsmith.agents.quality import LLMQualityScorer
from benchsmith.graphs.contexts.ingest import IngestContext
from benchsmith.graphs.runtime.progress import progress_reporter
from benchsmith.graphs.runtime.resources import chroma_client, embedder_for, run_seam, workspace_of
from benchsmith.stores.errors import InputError
from benchsmith.stores.jsonl import load_jsonl, write_jsonl_atomic
from benchsmith.stores.runs import RunDirectory
from benchsmith.stores.vectors import VectorStore
from benchsmith.tools.cached_embedding import cached_embedder
from benchsmith.tools.chunking import chunk_documents
from benchsmith.tools.cleaning import clean_documents
from benchsmith.tools.dedup import find_near_duplicates
from benchsmith.tools.documents import Chunk, Document, span_id
from benchsmith.tools.embedding import ChromaEmbeddingFunction
from benchsmith.tools.indexing import IndexItem, embed_into
from benchsmith.tools.loaders import load_sources
from benchsmith.tools.quality import InformationDensityScorer, QualityScorer

STAGES = ("load", "clean", "chunk", "dedup", "quality", "embed")
DOCUMENTS_FILE, SKIPPED_FILE = "documents.jsonl", "skipped.jsonl"
CLEANED_FILE, CHUNKS_FILE = "cleaned.jsonl", "chunks.jsonl"
UNIQUE_FILE, DUPLICATES_FILE = "unique.jsonl", "duplicates.jsonl"
KEPT_FILE, FILTERED_FILE = "kept.jsonl", "filtered.jsonl"


class IngestInput(TypedDict):
    run_id: str
    sources: list[str]
    collection: str


class IngestOutput(TypedDict, total=False):
    run_id: str
    collection: str
    files_read: int
    files_skipped: int
    documents: int
    chunks: int
    duplicates: int
    filtered: int
    indexed: int
    newly_embedded: int
    collection_count: int
    stage_seconds: dict[str, float]


class IngestState(IngestInput, IngestOutput, total=False):
    stage_seconds: Annotated[dict[str, float], operator.or_]


def _context(runtime: Runtime[IngestContext]) -> IngestContext:
    return runtime.context or IngestContext()


def _run_dir(runtime: Runtime[IngestContext], state: IngestState) -> RunDirectory:
    return RunDirectory(workspace_of(_context(runtime)), state["run_id"])


def _read(run_dir: RunDirectory, name: str, record_type: type) -> list[Any]:
    return [record_type(**record) for record in load_jsonl(run_dir.file(name))]


def timed(stage: Callable[[IngestState, Runtime[IngestContext]], dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Adds the stage's wall-clock seconds to its update (the summary's per-stage times)."""

    @functools.wraps(stage)
    def node(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
        started = time.perf_counter()
        update = stage(state, runtime)
        return {**update, "stage_seconds": {stage.__name__: time.perf_counter() - started}}

    return node


def load(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    run_dir = _run_dir(runtime, state)
    result = load_sources(state["sources"], on_progress=progress_reporter("load"))
    write_jsonl_atomic(run_dir.file(DOCUMENTS_FILE), (d.to_json() for d in result.documents))
    write_jsonl_atomic(run_dir.file(SKIPPED_FILE), (s.to_json() for s in result.skipped))
    return {"files_read": result.files_read, "files_skipped": len(result.skipped)}


def clean(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    run_dir = _run_dir(runtime, state)
    documents = clean_documents(_read(run_dir, DOCUMENTS_FILE, Document))
    count = write_jsonl_atomic(run_dir.file(CLEANED_FILE), (d.to_json() for d in documents))
    return {"documents": count}


def chunk(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    context, run_dir = _context(runtime), _run_dir(runtime, state)
    documents = _read(run_dir, CLEANED_FILE, Document)
    chunks = chunk_documents(documents, context.chunk_size, context.min_chars, progress_reporter("chunk"))
    count = write_jsonl_atomic(run_dir.file(CHUNKS_FILE), (c.to_json() for c in chunks))
    return {"chunks": count}


def dedup(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    context, run_dir = _context(runtime), _run_dir(runtime, state)
    chunks = _read(run_dir, CHUNKS_FILE, Chunk)
    matches = find_near_duplicates(
        [c.id for c in chunks], [c.text for c in chunks],
        threshold=context.dedup_threshold, num_perm=context.num_perm, on_progress=progress_reporter("dedup"))
    write_jsonl_atomic(run_dir.file(DUPLICATES_FILE), (m.to_json() for m in matches))
    near_duplicates = {m.removed_id for m in matches if m.removed_id != m.kept_id}
    seen: set[str] = set()
    unique = []
    for item in chunks:  # keep the first occurrence of each text, drop near-duplicates
        if item.id not in seen and item.id not in near_duplicates:
            unique.append(item)
        seen.add(item.id)
    write_jsonl_atomic(run_dir.file(UNIQUE_FILE), (c.to_json() for c in unique))
    return {"duplicates": len(chunks) - len(unique)}


def quality(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    context, run_dir = _context(runtime), _run_dir(runtime, state)
    chunks = _read(run_dir, UNIQUE_FILE, Chunk)
    scores = _quality_scorer(context, run_dir).score([c.text for c in chunks])
    for item, score in zip(chunks, scores):
        item.quality = round(float(score), 4)
    write_jsonl_atomic(run_dir.file(KEPT_FILE), (c.to_json() for c in chunks if c.quality >= context.min_quality))
    filtered = write_jsonl_atomic(run_dir.file(FILTERED_FILE),
                                  (c.to_json() for c in chunks if c.quality < context.min_quality))
    return {"filtered": filtered}


def _quality_scorer(context: IngestContext, run_dir: RunDirectory) -> QualityScorer:
    if context.quality == "heuristic":
        return InformationDensityScorer()
    return LLMQualityScorer(run_seam(workspace_of(context), run_dir.run_id, context.llm, context))


def embed(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    """Embed and upsert in batches, skipping chunks the collection already holds."""
    context, run_dir = _context(runtime), _run_dir(runtime, state)
    chunks = _read(run_dir, KEPT_FILE, Chunk)
    # Cached by text: another job over the same tree (select, nuggets) reuses these vectors.
    embedder = cached_embedder(embedder_for(context.embedder, workspace_of(context), run_dir.run_id, context),
                               workspace_of(context))
    store = VectorStore(chroma_client(workspace_of(context), context.chroma_host),
                        state["collection"], ChromaEmbeddingFunction(embedder), embedder.name)
    _check_id_scheme(store, state["collection"])
    report = progress_reporter("embed")

    def progress(done: int, total: int) -> None:
        run_dir.set_progress("embed", done, total)
        report(done, total)

    items = [IndexItem(chunk.id, chunk.text, chunk.metadata()) for chunk in chunks]
    newly_embedded = embed_into(store, items, embedder, context.batch_size, progress)
    return {"indexed": len(chunks), "newly_embedded": newly_embedded, "collection_count": store.count()}


def _check_id_scheme(store: VectorStore, collection: str) -> None:
    """Refuse a collection ingested when chunk ids were content hashes: every chunk would be in it twice."""
    sample = store.collection.get(limit=1, include=["metadatas"])
    for chunk_id, metadata in zip(sample["ids"], sample["metadatas"] or []):
        doc_id = str((metadata or {}).get("doc_id") or "")
        if doc_id and chunk_id != doc_id and not chunk_id.startswith(span_id(doc_id, 0, 0).rpartition(":")[0] + ":"):
            raise InputError(f"collection {collection!r} holds chunks named by content hash ({chunk_id}), from before "
                             "chunk ids became <path>:<start>-<end>; ingest into a new --collection or delete this one")


builder = StateGraph(IngestState, context_schema=IngestContext, input_schema=IngestInput, output_schema=IngestOutput)
for stage_node in (load, clean, chunk, dedup, quality, embed):
    builder.add_node(stage_node.__name__, timed(stage_node))
builder.add_edge(START, "load")
for before, after in zip(STAGES, STAGES[1:]):
    builder.add_edge(before, after)
builder.add_edge("embed", END)

graph = builder.compile(name="ingest")  # the Studio copy: no checkpointer (the server brings its own)

