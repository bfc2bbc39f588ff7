"""``benchsmith.nuggets``: a nugget-judged benchmark from real questions with accepted answers
and a document corpus (FreshStack): nuggets, pooling from several techniques and retrievers
with fusion, support judgments per batch of pooled chunks."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.agents.models import BASELINE, estimate_tokens
from benchsmith.agents.nuggets import DEFAULT_MAX_NUGGETS, NuggetWriter
from benchsmith.graphs.jobs.common import (CostEstimate, dry_run, EventHandler, JobRun, check_at_least, check_collection_name,
                                           check_models, checked_run_id, job_run, priced, workspace_for)
from benchsmith.graphs.nuggets import NUGGETS_FILE, NUGGET_QRELS_FILE, NuggetsContext, builder
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.stores.errors import InputError
from benchsmith.stores.postgres import database_url
from benchsmith.tools.chunking import DEFAULT_CHUNK_SIZE, DEFAULT_MIN_CHARS
from benchsmith.tools.embedding import DEFAULT_EMBEDDER
from benchsmith.tools.loaders import STDLIB_SOURCE
from benchsmith.tools.pooling import DEFAULT_POOL_DEPTH, MAX_BATCH_SIZE, POOL_FUSION_METHODS, TECHNIQUES
from benchsmith.tools.qa_text import load_qa_pairs

PROMPT_CHARS = 900  # an agent's instructions and tags
OUTPUT_TOKENS = {"nuggets": 250, "sub_questions": 80, "closed_book": 300, "support_per_chunk": 40}


@dataclass(frozen=True)
class NuggetsResult(JobRun):
    questions_read: int = 0  # imported questions (after tags and limit)
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)  # {reason: questions}
    nuggets: int = 0
    support_rate: float = 0.0
    table: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)  # {technique: {retriever: {measure}}}
    benchmark: Path | None = None  # the BEIR directory
    nuggets_file: Path | None = None
    nugget_qrels: Path | None = None
    report: dict[str, Path] = field(default_factory=dict)  # markdown, html, results

    def results(self) -> dict[str, Any]:
        """Everything ``nuggets-results.json`` holds: statistics, the pooling table, the
        per-query measures of the retriever comparison, the filtered questions."""
        return json.loads(self.report["results"].read_text(encoding="utf-8"))


def nuggets(questions: str | Path, corpus: Sequence[str | Path] = (), *, collection: str | None = None,
            tags: Sequence[str] = (), limit: int | None = None, llm: str = BASELINE,
            embedder: str = DEFAULT_EMBEDDER, max_nuggets: int = DEFAULT_MAX_NUGGETS,
            pool_depth: int = DEFAULT_POOL_DEPTH, batch_size: int = MAX_BATCH_SIZE, fusion: str = "combsum",
            all_nuggets_supported: bool = False, chunk_size: int = DEFAULT_CHUNK_SIZE,
            min_chars: int = DEFAULT_MIN_CHARS, concurrency: int = 4, requests_per_second: float | None = None,
            timeout_s: float = 60.0, max_attempts: int = 6, structured_output: str = "auto",
            workspace: str | Path | None = None,
            chroma_host: str | None = None, database: str | None = None, run_id: str | None = None,
            on_event: EventHandler | None = None, resume: str | None = None) -> NuggetsResult:
    """Build a nugget benchmark from ``questions`` (JSONL of ``{id, question, answer}`` or a
    Stack Exchange ``Posts.xml``) over ``corpus`` (directories, git checkouts, files, BEIR
    corpora or ``"stdlib"``) or an ingested ``collection``. The same call with the same
    ``run_id`` resumes. With ``database`` (a postgresql:// URL) its checkpoints, run record and
    model cache are kept in PostgreSQL."""

    resolved = workspace_for(workspace)
    settings = _checked_settings(questions, corpus, collection, tags, limit, llm, embedder, max_nuggets, pool_depth,
                                 batch_size, fusion, all_nuggets_supported, chunk_size, min_chars)
    check_at_least(1, concurrency=concurrency)
    database = database_url(database)
    run_id = checked_run_id(run_id, "nuggets")
    context = NuggetsContext(
        workspace=str(resolved.root), chroma_host=chroma_host, llm=llm, embedder=embedder, tags=tuple(tags),
        limit=limit, max_nuggets=max_nuggets, pool_depth=pool_depth, batch_size=batch_size, fusion=fusion,
        all_nuggets_supported=all_nuggets_supported, chunk_size=chunk_size, min_chars=min_chars,
        requests_per_second=requests_per_second, timeout_s=timeout_s, max_attempts=max_attempts,
        structured_output=structured_output, concurrency=concurrency, database=database)
    context.model_settings()  # an impossible model setting stops here, before the run exists
    outcome = run_job(builder, job="nuggets", workspace=resolved, run_id=run_id,
                      inputs={"run_id": run_id, "questions": settings["questions"], "corpus": settings["corpus"],
                              "collection": collection},
                      context=context, settings=settings, on_event=on_event, max_concurrency=concurrency,
                      resume=resume, database=database)
    values = outcome.values
    return NuggetsResult(**job_run(outcome), questions_read=values["questions_read"], kept=values["kept"],
                         dropped=values["dropped"], nuggets=values["nuggets"], support_rate=values["support_rate"],
                         table=values["table"], benchmark=Path(values["benchmark"]),
                         nuggets_file=outcome.run_dir.file(NUGGETS_FILE),
                         nugget_qrels=outcome.run_dir.file(NUGGET_QRELS_FILE),
                         report={kind: Path(path) for kind, path in values["report"].items()})


def _checked_settings(questions: str | Path, corpus: Sequence[str | Path], collection: str | None,
                      tags: Sequence[str], limit: int | None, llm: str, embedder: str, max_nuggets: int,
                      pool_depth: int, batch_size: int, fusion: str, all_nuggets_supported: bool, chunk_size: int,
                      min_chars: int) -> dict[str, Any]:
    """The run's settings, every one checked before any work starts."""
    if bool(corpus) == bool(collection):
        raise InputError("give the corpus: one or more --corpus sources, or --collection NAME (not both)")
    if collection:
        check_collection_name(collection)
    sources = [_source(str(source)) for source in corpus]
    questions_path = Path(questions)
    load_qa_pairs(questions_path, tags)  # a missing or malformed questions file stops here, before the run exists
    check_models(llm)
    check_at_least(1, limit=limit, max_nuggets=max_nuggets, pool_depth=pool_depth, batch_size=batch_size,
                   chunk_size=chunk_size)
    check_at_least(0, min_chars=min_chars)
    if batch_size > MAX_BATCH_SIZE:
        raise InputError(f"--batch-size must be at most {MAX_BATCH_SIZE}, got {batch_size}")
    if fusion not in POOL_FUSION_METHODS:
        raise InputError(f"--fusion must be one of {', '.join(POOL_FUSION_METHODS)}, got {fusion!r}")
    return {"questions": str(questions_path.resolve()), "corpus": sources, "collection": collection,
            "tags": list(tags), "limit": limit, "llm": llm, "embedder": embedder, "max_nuggets": max_nuggets,
            "pool_depth": pool_depth, "batch_size": batch_size, "fusion": fusion,
            "all_nuggets_supported": all_nuggets_supported, "chunk_size": chunk_size, "min_chars": min_chars}


def _source(source: str) -> str:
    if source == STDLIB_SOURCE:
        return source
    if not Path(source).exists():
        raise InputError(f"{source}: no such file or directory")
    return str(Path(source).resolve())


@dry_run
def estimate_nuggets(questions: str | Path, *, tags: Sequence[str] = (), limit: int | None = None,
                     llm: str = BASELINE, max_nuggets: int = DEFAULT_MAX_NUGGETS,
                     pool_depth: int = DEFAULT_POOL_DEPTH, batch_size: int = MAX_BATCH_SIZE,
                     chunk_size: int = DEFAULT_CHUNK_SIZE) -> CostEstimate:
    """Model calls and tokens (about 4 characters each) a build would spend, before spending.
    The pool is taken at its largest (every technique adds ``pool_depth`` new chunks)."""
    check_models(llm)
    loaded = load_qa_pairs(questions, tags)
    pairs = loaded.pairs[:limit] if limit is not None else loaded.pairs
    pool = len(TECHNIQUES) * pool_depth
    batch_count = math.ceil(pool / min(batch_size, MAX_BATCH_SIZE))
    chunk_tokens = estimate_tokens("x" * int(chunk_size * 0.8))
    writer = NuggetWriter(max_nuggets)
    input_tokens = output_tokens = 0
    for pair in pairs:
        prompt = estimate_tokens("".join(m["content"] for m in writer.messages(question=pair.question,
                                                                               answer=pair.answer)))
        question = estimate_tokens(pair.question) + PROMPT_CHARS // 4
        nugget_text = OUTPUT_TOKENS["nuggets"]
        input_tokens += prompt + 2 * question + batch_count * (question + nugget_text) + pool * chunk_tokens
        output_tokens += (OUTPUT_TOKENS["nuggets"] + OUTPUT_TOKENS["sub_questions"] + OUTPUT_TOKENS["closed_book"]
                          + pool * OUTPUT_TOKENS["support_per_chunk"])
    calls = len(pairs) * (3 + batch_count)
    notes = [f"{len(pairs):,} questions: 3 writing calls each (nuggets, sub-questions, closed-book answer) and "
             f"up to {batch_count} support calls (pools of at most {pool} chunks in batches of {batch_size}).",
             "Pools shrink when techniques retrieve the same chunks, so this is an upper bound."]
    return priced(f"{len(pairs):,} questions", [(llm, calls, input_tokens, output_tokens)], notes)
