"""``benchsmith.ingest``: load, clean, chunk, deduplicate, filter and index a corpus into Chroma."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.agents.defaults import StructuredOutput
from benchsmith.agents.seam.backends import estimate_tokens
from benchsmith.agents.seam.models import BASELINE
from benchsmith.graphs.contexts.ingest import IngestContext, QualityScorerName
from benchsmith.graphs.ingest import DUPLICATES_FILE, SKIPPED_FILE, WARNINGS_FILE, builder
from benchsmith.graphs.runtime.ray_items import prepare as prepare_ray
from benchsmith.graphs.runtime.ray_items import where_items_run
from benchsmith.graphs.runtime.settings import accepts_old_setting_names, check_bounds, settings_given
from benchsmith.jobs.common import (
    CostEstimate,
    EventHandler,
    JobRun,
    check_chunk_sizes,
    check_collection_name,
    check_embedders,
    check_models,
    checked_run_id,
    estimate_of,
    job_result,
    priced,
    run_settled,
    stop_if_dry_run,
)
from benchsmith.jobs.defaults import INGEST_COLLECTION
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.chunking import chunk_document
from benchsmith.tools.corpus.cleaning import clean_documents
from benchsmith.tools.corpus.dedup import PageLoss, pages_that_lost_chunks
from benchsmith.tools.corpus.loaders import STDLIB_SOURCE, load_sources
from benchsmith.tools.corpus.quality import DEFAULT_MIN_QUALITY
from benchsmith.tools.defaults import (
    DEFAULT_CHUNK_SIZE,
    DEFAULT_DEDUP_NUM_PERM,
    DEFAULT_DEDUP_THRESHOLD,
    DEFAULT_EMBEDDER,
    DEFAULT_INDEX_BATCH_SIZE,
    DEFAULT_MIN_CHARS,
)
from benchsmith.tools.text.page_kinds import DEFAULT_PAGE_KIND

QUALITY_PROMPT_TOKENS = 120  # the LLM quality scorer's instructions, per chunk


@dataclass(frozen=True)
class IngestResult(JobRun):
    collection: str = ""
    files_read: int = 0
    files_skipped: int = 0
    documents: int = 0
    chunks: int = 0
    duplicates: int = 0
    filtered: int = 0
    indexed: int = 0
    newly_embedded: int = 0
    collection_count: int = 0
    page_kinds: dict[str, int] = field(default_factory=dict)  # chunks indexed per page kind
    warnings: list[str] = field(default_factory=list)  # unmatched --include / --exclude patterns, missing include files
    stage_seconds: dict[str, float] = field(default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)  # {"path", "reason"} per skipped file
    # Pages that lost chunks to near-duplicate removal, and to which page (duplicates.jsonl has each chunk).
    pages_that_lost_chunks: list[PageLoss] = field(default_factory=list)


@accepts_old_setting_names
def ingest(
    sources: Sequence[str | Path],
    *,
    collection: str = INGEST_COLLECTION,
    run_id: str | None = None,
    on_event: EventHandler | None = None,
    resume: str | None = None,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    min_chars: int = DEFAULT_MIN_CHARS,
    dedup_threshold: float = DEFAULT_DEDUP_THRESHOLD,
    num_perm: int = DEFAULT_DEDUP_NUM_PERM,
    min_quality: float = DEFAULT_MIN_QUALITY,
    quality: QualityScorerName = "heuristic",
    llm: str = BASELINE,
    embedder: str = DEFAULT_EMBEDDER,
    batch_size: int = DEFAULT_INDEX_BATCH_SIZE,
    seed: int = 0,
    rate_limit: float | None = None,
    timeout_s: float = 60.0,
    max_attempts: int = 6,
    structured_output: StructuredOutput = "auto",
    workspace: str | None = None,
    chroma_host: str | None = None,
    database: str | None = None,
    ray: str | None = None,
) -> IngestResult:
    """Index ``sources`` (directories, files, a BEIR corpus.jsonl or its folder, or ``"stdlib"``)
    into the Chroma collection ``collection``; every setting of :class:`IngestContext` is a keyword
    argument too. The same call with the same ``run_id`` resumes an interrupted run and returns a
    finished one without redoing it. With ``database`` (a postgresql:// URL) its checkpoints, run
    record and model cache are kept in PostgreSQL. With ``ray`` (``local``, ``auto`` or a cluster's
    address) the stages run as Ray Data pipelines and the embedder on Ray actors; the files and the
    collection are the single-process run's."""
    settings = settings_given(IngestContext, locals())

    inputs = _checked_inputs(sources, collection, settings)
    stop_if_dry_run(lambda: _preview(sources, settings))
    run_id = checked_run_id(run_id, "ingest")
    resolved = Workspace.resolve(settings.workspace)
    prepare_ray(settings.ray)  # a cluster that cannot be joined, or an embedder no node can take, stops here
    outcome = run_settled(
        builder, "ingest", resolved, inputs, settings, run_id=run_id, on_event=on_event, resume=resume
    )
    skipped_file, warnings_file = outcome.run_dir.file(SKIPPED_FILE), outcome.run_dir.file(WARNINGS_FILE)
    return job_result(
        IngestResult,
        outcome,
        collection=collection,
        warnings=[record["warning"] for record in load_jsonl(warnings_file)] if warnings_file.exists() else [],
        skipped=load_jsonl(skipped_file) if skipped_file.exists() else [],
        pages_that_lost_chunks=_page_losses(outcome.run_dir.file(DUPLICATES_FILE)),
    )


def _page_losses(duplicates_file: Path) -> list[PageLoss]:
    return pages_that_lost_chunks(load_jsonl(duplicates_file)) if duplicates_file.exists() else []


def _checked_inputs(sources: Sequence[str | Path], collection: str, settings: IngestContext) -> dict[str, Any]:
    """The run's inputs, they and the settings checked before any work starts."""
    if not sources:
        raise InputError("give at least one source: a directory, a file, a BEIR corpus.jsonl or 'stdlib'")
    check_collection_name(collection)
    # A missing source stops here. What only reading finds (a bad line, no document) stops the load
    # step, and a new run whose first step finds bad input is forgotten (graphs/runtime/runner.py).
    for source in sources:
        if str(source) != STDLIB_SOURCE and not Path(source).exists():
            raise InputError(f"{source}: no such file or directory")
    if settings.quality not in ("heuristic", "llm"):
        raise InputError(f"--quality must be 'heuristic' or 'llm', got {settings.quality!r}")
    check_models(settings.llm)
    check_embedders(settings.embedder)
    if settings.quality == "llm" and settings.llm == BASELINE:
        raise InputError("--quality llm asks a model to score chunks: give one with --llm openai:<model>")
    check_bounds(settings)
    check_chunk_sizes(settings.chunk_size, settings.min_chars)
    return {"sources": [str(source) for source in sources], "collection": collection}


@dataclass(frozen=True)
class IngestPreview:
    """What an ingestion would index (before deduplication and filtering), and its model cost."""

    files_read: int
    files_skipped: int
    documents: int
    chunks: int
    characters: int
    cost: CostEstimate
    skipped: list[dict[str, str]] = field(default_factory=list)  # {"path", "reason"} per skipped file
    page_kinds: dict[str, int] = field(default_factory=dict)  # chunks per page kind (before dedup and filtering)
    warnings: list[str] = field(default_factory=list)  # unmatched --include / --exclude patterns, missing include files


preview_ingest = estimate_of(
    "preview_ingest",
    ingest,
    IngestPreview,
    """Load, clean and chunk only (:func:`ingest`'s arguments; nothing is written): counts, and the cost
    of ``quality="llm"``.""",
)


def _preview(sources: Sequence[str | Path], settings: IngestContext) -> IngestPreview:
    """:func:`preview_ingest` once the call is checked."""
    chunk_size, min_chars, quality, llm = settings.chunk_size, settings.min_chars, settings.quality, settings.llm
    loaded = load_sources([str(source) for source in sources], include=settings.include, exclude=settings.exclude)
    documents = clean_documents(loaded.documents)
    chunks = [chunk for document in documents for chunk in chunk_document(document, chunk_size, min_chars)]
    calls = len(chunks) if quality == "llm" else 0
    tokens = sum(estimate_tokens(chunk.text) + QUALITY_PROMPT_TOKENS for chunk in chunks) if calls else 0
    cost = priced(
        f"{calls} quality calls" if calls else "no model calls (heuristic quality filter)",
        [(llm, calls, tokens, 10 * calls)],
        notes=[where_items_run(settings.ray, "stages (clean, chunk, dedup keys, quality, embedding)")],
    )
    page_kinds = Counter(chunk.page_kind or DEFAULT_PAGE_KIND for chunk in chunks)
    return IngestPreview(
        loaded.files_read,
        len(loaded.skipped),
        len(documents),
        len(chunks),
        sum(len(chunk.text) for chunk in chunks),
        cost,
        [item.to_json() for item in loaded.skipped],
        dict(sorted(page_kinds.items())),
        loaded.warnings,
    )
