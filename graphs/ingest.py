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
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from itertools import pairwise
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from benchsmith.agents.quality import LLMQualityScorer
from benchsmith.graphs.contexts.ingest import IngestContext
from benchsmith.graphs.ingest_batches import chunk_batch, finished_batch, marked_batch, row_key_batch, scored_batch
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.progress import progress_reporter
from benchsmith.graphs.runtime.ray_data import mapped_batches
from benchsmith.graphs.runtime.ray_embedding import RayEmbedder
from benchsmith.graphs.runtime.ray_key_groups import shared_key_groups
from benchsmith.graphs.runtime.resources import chroma_client, embedder_for, run_seam
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import JsonlRows, jsonl_writer_atomic, write_jsonl_atomic
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.vectors import VectorStore
from benchsmith.tools.corpus.cleaning import RepeatedLines
from benchsmith.tools.corpus.dedup import MINHASH_SEED, candidate_bands, decide_near_duplicates
from benchsmith.tools.corpus.documents import Chunk, SkippedFile, note_id, span_id
from benchsmith.tools.corpus.includes import IncludeNotes
from benchsmith.tools.corpus.loaders import empty_corpus, iter_sources
from benchsmith.tools.corpus.path_patterns import PathPatterns
from benchsmith.tools.corpus.quality import InformationDensityScorer, QualityScorer
from benchsmith.tools.retrieval.cached_embedding import cached_embedder
from benchsmith.tools.retrieval.embedded_text import embedded_text
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction, is_server_spec
from benchsmith.tools.retrieval.indexing import IndexItem, embed_into
from benchsmith.tools.text.page_kinds import DEFAULT_PAGE_KIND

STAGES = ("load", "clean", "chunk", "dedup", "quality", "embed")
DOCUMENTS_FILE, SKIPPED_FILE = "documents.jsonl", "skipped.jsonl"
# {"warning"}: an --include / --exclude pattern that matched no file; include lines whose files were not found
WARNINGS_FILE = "warnings.jsonl"
CLEANED_FILE, CHUNKS_FILE = "cleaned.jsonl", "chunks.jsonl"
UNIQUE_FILE, DUPLICATES_FILE = "unique.jsonl", "duplicates.jsonl"
KEPT_FILE, FILTERED_FILE = "kept.jsonl", "filtered.jsonl"
MARKED_FILE = "marked.jsonl"  # the clean stage's scratch file between its two passes
QUALITY_BATCH = 512  # chunks scored at once (the LLM scorer's calls in flight come from one batch)
DOCUMENT_BATCH = 512  # documents cleaned or chunked by one task (with --ray, one Ray Data task: each costs some ms)
CHUNK_BATCH = 2048  # chunks keyed for dedup or scored by one task


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
    page_kinds: dict[str, int]  # chunks indexed per page kind (tools/text/page_kinds.py)
    stage_seconds: dict[str, float]
    stage_cpu_seconds: dict[str, float]


class IngestState(IngestInput, IngestOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    stage_seconds: Annotated[dict[str, float], operator.or_]
    stage_cpu_seconds: Annotated[dict[str, float], operator.or_]


job = JobRuntime(IngestContext)  # the runtime's settings, workspace and run directories


def timed(stage: Callable[[IngestState, Runtime[IngestContext]], dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Adds the stage's wall-clock and CPU seconds to its update (the summary's per-stage times;
    the CPU is the process's, so the embed stage's is benchsmith's side of embedding alone)."""

    @functools.wraps(stage)
    def node(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
        started, cpu_started = time.perf_counter(), time.process_time()
        update = stage(state, runtime)
        return {
            **update,
            "stage_seconds": {stage.__name__: time.perf_counter() - started},
            "stage_cpu_seconds": {stage.__name__: time.process_time() - cpu_started},
        }

    return node


def load(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    context, run_dir = job.context(runtime), job.run_dir(runtime, state["run_id"])
    skipped: list[SkippedFile] = []
    patterns, includes = PathPatterns(context.include, context.exclude), IncludeNotes()
    with jsonl_writer_atomic(run_dir.file(DOCUMENTS_FILE)) as documents:
        for item in iter_sources(state["sources"], on_progress=progress_reporter("load"), patterns=patterns):
            if isinstance(item, SkippedFile):
                skipped.append(item)
            else:
                includes.note(item.id, tuple(item.missing_includes))
                documents(item.to_json())
        if not documents.count:
            raise empty_corpus(state["sources"], skipped)
    write_jsonl_atomic(run_dir.file(SKIPPED_FILE), (s.to_json() for s in skipped))
    warnings = [*patterns.unmatched(), *includes.warnings()]
    write_jsonl_atomic(run_dir.file(WARNINGS_FILE), ({"warning": warning} for warning in warnings))
    return {"files_read": documents.count, "files_skipped": len(skipped)}


def clean(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    """Two passes, so no document is held: each document marked up (into a scratch file) while
    its lines are counted; then the corpus's boilerplate lines out, headings recorded."""
    context, run_dir = job.context(runtime), job.run_dir(runtime, state["run_id"])
    marked_file, lines, report = run_dir.file(MARKED_FILE), RepeatedLines(), progress_reporter("clean")

    def marked() -> Iterator[dict[str, Any]]:
        batches = mapped_batches(run_dir.file(DOCUMENTS_FILE), marked_batch, None, context.ray, DOCUMENT_BATCH)
        for done, (document, digests) in enumerate(batches, start=1):
            lines.count(digests)
            report(done, state.get("files_read"))  # per document: a long corpus shows it moving
            yield document

    write_jsonl_atomic(marked_file, marked())
    finished = mapped_batches(marked_file, finished_batch, lines.boilerplate(), context.ray, DOCUMENT_BATCH)
    count = write_jsonl_atomic(run_dir.file(CLEANED_FILE), (document for document in finished if document is not None))
    marked_file.unlink()
    return {"documents": count}


def chunk(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    """Documents chunked a batch at a time; an id two documents have stops the stage when the
    second comes (only ids are held)."""
    context, run_dir = job.context(runtime), job.run_dir(runtime, state["run_id"])
    sizes, report = (context.chunk_size, context.min_chars), progress_reporter("chunk")
    sources: dict[str, str] = {}  # document id → source: a second document of an id stops the stage

    def chunks() -> Iterator[dict[str, Any]]:
        batches = mapped_batches(run_dir.file(CLEANED_FILE), chunk_batch, sizes, context.ray, DOCUMENT_BATCH)
        for done, (document_id, source, document_chunks) in enumerate(batches, start=1):
            note_id(document_id, source, sources)
            yield from document_chunks
            report(done, state.get("documents"))

    return {"chunks": write_jsonl_atomic(run_dir.file(CHUNKS_FILE), chunks())}


def dedup(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    """Near-duplicates and repeated ids out, streaming: each row's MinHash band keys and id key are
    computed a batch at a time and the rows sharing a key grouped (both on the cluster with --ray:
    graphs/runtime/ray_key_groups.py); the decisions are made here in row order from those candidate
    groups, reading back by row the ids and texts of grouped rows only. This process holds the
    candidate groups and each row's offset in the file, no text (a million chunks), and with --ray
    no keys either (without it, every row's keys while they are grouped)."""
    context, run_dir = job.context(runtime), job.run_dir(runtime, state["run_id"])
    bands = candidate_bands(context.dedup_threshold, context.num_perm)
    banding = (bands, context.num_perm, MINHASH_SEED)
    chunks = JsonlRows(run_dir.file(CHUNKS_FILE)).note_rows()  # the ids and texts a check needs are read back by row
    try:
        groups = shared_key_groups(
            run_dir.file(CHUNKS_FILE),
            row_key_batch,
            banding,
            context.ray,
            CHUNK_BATCH,
            total=state.get("chunks"),
            on_progress=progress_reporter("dedup"),
        )
        result = decide_near_duplicates(
            groups,
            lambda row: chunks.record(row)["id"],
            lambda row: chunks.record(row)["text"],
            threshold=context.dedup_threshold,
            id_column=len(bands),
        )
    finally:
        chunks.close()
    write_jsonl_atomic(run_dir.file(DUPLICATES_FILE), (m.to_json() for m in result.matches))
    write_jsonl_atomic(
        run_dir.file(UNIQUE_FILE), (record for row, (_, record) in enumerate(chunks) if row not in result.dropped)
    )
    return {"duplicates": len(result.dropped)}


def quality(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    context, run_dir = job.context(runtime), job.run_dir(runtime, state["run_id"])
    scorer, report = _quality_scorer(runtime, run_dir), progress_reporter("quality")
    # The heuristic scores on the cluster with --ray; the LLM scorer's calls leave from here, a batch in flight.
    address, batch = (context.ray, CHUNK_BATCH) if context.quality == "heuristic" else (None, QUALITY_BATCH)
    total = state.get("chunks", 0) - state.get("duplicates", 0)
    with (
        jsonl_writer_atomic(run_dir.file(KEPT_FILE)) as kept,
        jsonl_writer_atomic(run_dir.file(FILTERED_FILE)) as filtered,
    ):
        for done, item in enumerate(mapped_batches(run_dir.file(UNIQUE_FILE), scored_batch, scorer, address, batch), 1):
            (kept if item["quality"] >= context.min_quality else filtered)(item)
            if done % QUALITY_BATCH == 0 or done == total:
                report(done, total)
    return {"filtered": filtered.count}


def _quality_scorer(runtime: Runtime[IngestContext], run_dir: RunDirectory) -> QualityScorer:
    context = job.context(runtime)
    if context.quality == "heuristic":
        return InformationDensityScorer()
    return LLMQualityScorer(run_seam(job.workspace(runtime), run_dir.run_id, context.llm, context))


def embed(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    """Embed and upsert in batches, skipping chunks the collection already holds."""
    context, workspace, run_dir = job.context(runtime), job.workspace(runtime), job.run_dir(runtime, state["run_id"])
    chunks = JsonlRows(run_dir.file(KEPT_FILE))
    # Cached by text: another job over the same tree (select, nuggets) reuses these vectors.
    on_cluster = bool(context.ray) and not is_server_spec(context.embedder)  # a server embeds for every caller
    raw = (
        RayEmbedder(context.embedder, context.ray or "", context.batch_size)
        if on_cluster
        else embedder_for(context.embedder, workspace, run_dir.run_id, context)
    )
    embedder = cached_embedder(raw, workspace)
    store = VectorStore(
        chroma_client(workspace, context.chroma_host),
        state["collection"],
        ChromaEmbeddingFunction(embedder),
        embedder.name,
    )
    _check_id_scheme(store, state["collection"])
    report = progress_reporter("embed")

    def progress(done: int, total: int) -> None:
        run_dir.set_progress("embed", done, total)
        report(done, total)

    # One pass notes each chunk's row and length (and counts the page kinds); the batches then read their
    # chunks back by row.
    page_kinds: Counter[str] = Counter()

    def noted(record: dict[str, Any]) -> int:
        page_kinds[record.get("page_kind") or DEFAULT_PAGE_KIND] += 1
        return len(record["text"])

    lengths = array("q", (noted(record) for _, record in chunks))
    items = _IndexItems(chunks)
    # On the cluster a batch is a slice per actor, each slice the batch one process embeds.
    batch_size = context.batch_size * (raw.actor_count if isinstance(raw, RayEmbedder) else 1)
    try:
        newly_embedded = embed_into(store, items, embedder, batch_size, progress, text_lengths=lengths)
    finally:
        chunks.close()
        if isinstance(raw, RayEmbedder):
            raw.close()
    return {
        "indexed": len(lengths),
        "newly_embedded": newly_embedded,
        "collection_count": store.count(),
        "page_kinds": dict(sorted(page_kinds.items())),
    }


class _IndexItems(Sequence[IndexItem]):
    """The kept chunks as index items, read from the run directory by row (none held)."""

    def __init__(self, chunks: JsonlRows):
        self.chunks = chunks

    def __len__(self) -> int:
        return len(self.chunks)

    def __getitem__(self, row: int) -> IndexItem:  # type: ignore[override]
        chunk = Chunk(**self.chunks.record(row))
        return IndexItem(chunk.id, embedded_text(chunk.title, chunk.text), chunk.metadata())


def _check_id_scheme(store: VectorStore, collection: str) -> None:
    """Refuse a collection ingested when chunk ids were content hashes: every chunk would be in it twice."""
    sample = store.collection.get(limit=1, include=["metadatas"])
    for chunk_id, metadata in zip(sample["ids"], sample["metadatas"] or []):
        doc_id = str((metadata or {}).get("doc_id") or "")
        if doc_id and chunk_id != doc_id and not chunk_id.startswith(span_id(doc_id, 0, 0).rpartition(":")[0] + ":"):
            raise InputError(
                f"collection {collection!r} holds chunks named by content hash ({chunk_id}), from before "
                "chunk ids became <path>:<start>-<end>; ingest into a new --collection or delete this one"
            )


builder = StateGraph(IngestState, context_schema=IngestContext, input_schema=IngestInput, output_schema=IngestOutput)
for stage_node in (load, clean, chunk, dedup, quality, embed):
    builder.add_node(stage_node.__name__, timed(stage_node))
builder.add_edge(START, "load")
for before, after in pairwise(STAGES):
    builder.add_edge(before, after)
builder.add_edge("embed", END)

graph = builder.compile(name="ingest")  # the Studio copy: no checkpointer (the server brings its own)
