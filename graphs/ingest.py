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
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from benchsmith.agents.models import ModelSettings, build_seam
from benchsmith.agents.quality import LLMQualityScorer
from benchsmith.stores.jsonl import load_jsonl, write_jsonl_atomic
from benchsmith.stores.llm_cache import LLMCache
from benchsmith.stores.runs import RunDirectory
from benchsmith.stores.vectors import VectorStore, open_client
from benchsmith.stores.workspace import Workspace
from benchsmith.tools.chunking import DEFAULT_CHUNK_SIZE, DEFAULT_MIN_CHARS, chunk_document
from benchsmith.tools.cleaning import clean_documents
from benchsmith.tools.dedup import DEFAULT_NUM_PERM, DEFAULT_THRESHOLD, find_near_duplicates
from benchsmith.tools.documents import Chunk, Document
from benchsmith.tools.embedding import DEFAULT_EMBEDDER, ChromaEmbeddingFunction, Embedder, load_embedder
from benchsmith.tools.indexing import IndexItem, embed_into
from benchsmith.tools.loaders import load_sources
from benchsmith.tools.quality import DEFAULT_MIN_QUALITY, InformationDensityScorer, QualityScorer

STAGES = ("load", "clean", "chunk", "dedup", "quality", "embed")
DOCUMENTS_FILE, SKIPPED_FILE = "documents.jsonl", "skipped.jsonl"
CLEANED_FILE, CHUNKS_FILE = "cleaned.jsonl", "chunks.jsonl"
UNIQUE_FILE, DUPLICATES_FILE = "unique.jsonl", "duplicates.jsonl"
KEPT_FILE, FILTERED_FILE = "kept.jsonl", "filtered.jsonl"


@dataclass
class IngestContext:
    """Settings of one ingestion (not checkpointed: the CLI passes them again on resume)."""

    workspace: str | None = None  # None: $BENCHSMITH_WORKSPACE, else ./.benchsmith
    chunk_size: int = DEFAULT_CHUNK_SIZE
    min_chars: int = DEFAULT_MIN_CHARS
    dedup_threshold: float = DEFAULT_THRESHOLD
    num_perm: int = DEFAULT_NUM_PERM
    min_quality: float = DEFAULT_MIN_QUALITY
    quality: Literal["heuristic", "llm"] = "heuristic"
    llm: str = "baseline"
    llm_requests_per_second: float | None = None
    embedder: Any = DEFAULT_EMBEDDER  # a sentence-transformers name or path, or an Embedder object
    batch_size: int = 256
    chroma_host: str | None = None


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


def _run_dir(runtime: Runtime[IngestContext], state: IngestState) -> RunDirectory:
    return RunDirectory(Workspace.resolve(runtime.context.workspace), state["run_id"])


def _progress(stage: str) -> Any:
    """Progress events for the CLI's bars (a no-op when the graph is not streamed)."""
    writer = get_stream_writer()
    return lambda done, total=None: writer({"stage": stage, "done": done, "total": total})


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
    result = load_sources(state["sources"], on_progress=_progress("load"))
    write_jsonl_atomic(run_dir.file(DOCUMENTS_FILE), (d.to_json() for d in result.documents))
    write_jsonl_atomic(run_dir.file(SKIPPED_FILE), (s.to_json() for s in result.skipped))
    return {"files_read": result.files_read, "files_skipped": len(result.skipped)}


def clean(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    run_dir = _run_dir(runtime, state)
    documents = clean_documents(_read(run_dir, DOCUMENTS_FILE, Document))
    count = write_jsonl_atomic(run_dir.file(CLEANED_FILE), (d.to_json() for d in documents))
    return {"documents": count}


def chunk(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    context, run_dir = runtime.context, _run_dir(runtime, state)
    documents = _read(run_dir, CLEANED_FILE, Document)
    report = _progress("chunk")
    chunks: list[Chunk] = []
    for done, document in enumerate(documents, start=1):
        chunks.extend(chunk_document(document, context.chunk_size, context.min_chars))
        report(done, len(documents))
    count = write_jsonl_atomic(run_dir.file(CHUNKS_FILE), (c.to_json() for c in chunks))
    return {"chunks": count}


def dedup(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    context, run_dir = runtime.context, _run_dir(runtime, state)
    chunks = _read(run_dir, CHUNKS_FILE, Chunk)
    matches = find_near_duplicates(
        [c.id for c in chunks], [c.text for c in chunks],
        threshold=context.dedup_threshold, num_perm=context.num_perm, on_progress=_progress("dedup"))
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
    context, run_dir = runtime.context, _run_dir(runtime, state)
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
    workspace = Workspace.resolve(context.workspace)
    seam = build_seam(context.llm, ModelSettings(requests_per_second=context.llm_requests_per_second),
                      cache=LLMCache(workspace.llm_cache_path), usage=run_dir.usage)
    return LLMQualityScorer(seam)


def resolve_embedder(embedder: str | Embedder) -> Embedder:
    return load_embedder(embedder) if isinstance(embedder, str) else embedder


def embed(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    """Embed and upsert in batches, skipping chunks the collection already holds."""
    context, run_dir = runtime.context, _run_dir(runtime, state)
    chunks = _read(run_dir, KEPT_FILE, Chunk)
    embedder = resolve_embedder(context.embedder)
    store = VectorStore(
        open_client(Workspace.resolve(context.workspace), context.chroma_host),
        state["collection"], ChromaEmbeddingFunction(embedder), embedder.name)
    report = _progress("embed")

    def progress(done: int, total: int) -> None:
        run_dir.set_progress("embed", done, total)
        report(done, total)

    items = [IndexItem(chunk.id, chunk.text, chunk.metadata()) for chunk in chunks]
    newly_embedded = embed_into(store, items, embedder, context.batch_size, progress)
    return {"indexed": len(chunks), "newly_embedded": newly_embedded, "collection_count": store.count()}


builder = StateGraph(IngestState, context_schema=IngestContext, input_schema=IngestInput, output_schema=IngestOutput)
for stage_node in (load, clean, chunk, dedup, quality, embed):
    builder.add_node(stage_node.__name__, timed(stage_node))
builder.add_edge(START, "load")
for before, after in zip(STAGES, STAGES[1:]):
    builder.add_edge(before, after)
builder.add_edge("embed", END)

# The Studio copy: compiled without a checkpointer (the server brings its own).
graph = builder.compile()
graph.name = "ingest"

