"""``benchsmith.ingest``: load, clean, chunk, deduplicate, filter and index a corpus into Chroma."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.agents.models import BASELINE, estimate_tokens
from benchsmith.graphs.ingest import IngestContext, builder
from benchsmith.graphs.jobs.common import (CostEstimate, dry_run, EventHandler, JobRun, check_at_least, check_collection_name,
                                           check_embedders, check_fraction, check_models, checked_run_id, job_run,
                                           priced, workspace_for)
from benchsmith.graphs.jobs.defaults import INGEST_COLLECTION as DEFAULT_COLLECTION
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.stores.errors import InputError
from benchsmith.stores.jsonl import load_jsonl
from benchsmith.stores.postgres import database_url
from benchsmith.tools.chunking import DEFAULT_CHUNK_SIZE, DEFAULT_MIN_CHARS, chunk_document
from benchsmith.tools.cleaning import clean_documents
from benchsmith.tools.dedup import DEFAULT_NUM_PERM, DEFAULT_THRESHOLD
from benchsmith.tools.embedding import DEFAULT_EMBEDDER
from benchsmith.tools.indexing import DEFAULT_BATCH_SIZE
from benchsmith.tools.loaders import load_sources
from benchsmith.tools.quality import DEFAULT_MIN_QUALITY

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
    stage_seconds: dict[str, float] = field(default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)  # {"path", "reason"} per skipped file


def ingest(sources: Sequence[str | Path], *, collection: str = DEFAULT_COLLECTION, chunk_size: int = DEFAULT_CHUNK_SIZE,
           min_chars: int = DEFAULT_MIN_CHARS, dedup_threshold: float = DEFAULT_THRESHOLD,
           num_perm: int = DEFAULT_NUM_PERM, min_quality: float = DEFAULT_MIN_QUALITY, quality: str = "heuristic",
           llm: str = BASELINE, embedder: str = DEFAULT_EMBEDDER, batch_size: int = DEFAULT_BATCH_SIZE,
           requests_per_second: float | None = None, timeout_s: float = 60.0, max_attempts: int = 6,
           structured_output: str = "auto",
           workspace: str | Path | None = None, chroma_host: str | None = None, database: str | None = None,
           run_id: str | None = None, on_event: EventHandler | None = None, resume: str | None = None) -> IngestResult:
    """Index ``sources`` (directories, files, a BEIR corpus.jsonl or its folder, or ``"stdlib"``)
    into the Chroma collection ``collection``. The same call with the same ``run_id`` resumes
    an interrupted run and returns a finished one without redoing it. With ``database`` (a
    postgresql:// URL) its checkpoints, run record and model cache are kept in PostgreSQL."""

    settings = _checked_settings(sources, collection, chunk_size, min_chars, dedup_threshold, num_perm, min_quality,
                                 quality, llm, embedder, batch_size)
    database = database_url(database)
    run_id = checked_run_id(run_id, "ingest")
    resolved = workspace_for(workspace)
    context = IngestContext(
        workspace=str(resolved.root), chroma_host=chroma_host, requests_per_second=requests_per_second,
        timeout_s=timeout_s, max_attempts=max_attempts, structured_output=structured_output, database=database,
        **{key: settings[key] for key in ("chunk_size", "min_chars", "dedup_threshold", "num_perm", "min_quality",
                                          "quality", "llm", "embedder", "batch_size")})
    context.model_settings()  # an impossible model setting stops here, before the run exists
    outcome = run_job(builder, job="ingest", workspace=resolved, run_id=run_id,
                      inputs={"run_id": run_id, "sources": settings["sources"], "collection": collection},
                      context=context, settings=settings, on_event=on_event, resume=resume,
                      database=database)
    values = outcome.values
    skipped_file = outcome.run_dir.file("skipped.jsonl")
    counts = {name: values.get(name, 0) for name in ("files_read", "files_skipped", "documents", "chunks", "duplicates",
                                                    "filtered", "indexed", "newly_embedded", "collection_count")}
    return IngestResult(**job_run(outcome), collection=collection, **counts,
                        stage_seconds=dict(values.get("stage_seconds", {})),
                        skipped=load_jsonl(skipped_file) if skipped_file.exists() else [])


def _checked_settings(sources: Sequence[str | Path], collection: str, chunk_size: int, min_chars: int,
                      dedup_threshold: float, num_perm: int, min_quality: float, quality: str, llm: str,
                      embedder: str, batch_size: int) -> dict[str, Any]:
    """The run's settings, every one checked before any work starts."""
    if not sources:
        raise InputError("give at least one source: a directory, a file, a BEIR corpus.jsonl or 'stdlib'")
    check_collection_name(collection)
    if quality not in ("heuristic", "llm"):
        raise InputError(f"--quality must be 'heuristic' or 'llm', got {quality!r}")
    check_models(llm)
    check_embedders(embedder)
    if quality == "llm" and llm == BASELINE:
        raise InputError("--quality llm asks a model to score chunks: give one with --llm openai:<model>")
    check_at_least(1, chunk_size=chunk_size, min_chars=min_chars, num_perm=num_perm, batch_size=batch_size)
    check_fraction(dedup_threshold=dedup_threshold, min_quality=min_quality)
    return {"sources": [str(source) for source in sources], "collection": collection, "chunk_size": chunk_size,
            "min_chars": min_chars, "dedup_threshold": dedup_threshold, "num_perm": num_perm,
            "min_quality": min_quality, "quality": quality, "llm": llm, "embedder": embedder, "batch_size": batch_size}


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


@dry_run
def preview_ingest(sources: Sequence[str | Path], *, chunk_size: int = DEFAULT_CHUNK_SIZE,
                   min_chars: int = DEFAULT_MIN_CHARS, quality: str = "heuristic", llm: str = BASELINE) -> IngestPreview:
    """Load, clean and chunk only (nothing is written): counts, and the cost of ``quality="llm"``."""

    _checked_settings(sources, DEFAULT_COLLECTION, chunk_size, min_chars, DEFAULT_THRESHOLD, DEFAULT_NUM_PERM,
                      DEFAULT_MIN_QUALITY, quality, llm, DEFAULT_EMBEDDER, DEFAULT_BATCH_SIZE)
    loaded = load_sources([str(source) for source in sources])
    documents = clean_documents(loaded.documents)
    chunks = [chunk for document in documents for chunk in chunk_document(document, chunk_size, min_chars)]
    calls = len(chunks) if quality == "llm" else 0
    tokens = sum(estimate_tokens(chunk.text) + QUALITY_PROMPT_TOKENS for chunk in chunks) if calls else 0
    cost = priced(f"{calls} quality calls" if calls else "no model calls (heuristic quality filter)",
                  [(llm, calls, tokens, 10 * calls)])
    return IngestPreview(loaded.files_read, len(loaded.skipped), len(documents), len(chunks),
                         sum(len(chunk.text) for chunk in chunks), cost, [item.to_json() for item in loaded.skipped])
