"""``benchsmith.nuggets``: a nugget-judged benchmark from real questions with accepted answers
and a document corpus (FreshStack): nuggets, pooling from several techniques and retrievers
with fusion, support judgments per batch of pooled chunks."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchsmith.agents.defaults import BASELINE, DEFAULT_MAX_NUGGETS, StructuredOutput
from benchsmith.agents.nuggets import NuggetWriter
from benchsmith.agents.seam.backends import estimate_tokens
from benchsmith.graphs.contexts.nuggets import NuggetsContext
from benchsmith.graphs.nuggets.graph import builder
from benchsmith.graphs.nuggets.state import NUGGET_QRELS_FILE, NUGGETS_FILE
from benchsmith.graphs.runtime.ray_items import prepare as prepare_ray
from benchsmith.graphs.runtime.ray_items import where_items_run
from benchsmith.graphs.runtime.settings import accepts_old_setting_names, check_bounds, settings_given
from benchsmith.jobs.common import (
    CostEstimate,
    EventHandler,
    JobRun,
    check_chunk_sizes,
    check_collection_name,
    check_models,
    estimate_of,
    job_result,
    priced,
    run_settled,
    stop_if_dry_run,
)
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import read_json_object
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.loaders import STDLIB_SOURCE
from benchsmith.tools.defaults import (
    DEFAULT_CHUNK_SIZE,
    DEFAULT_EMBEDDER,
    DEFAULT_MIN_CHARS,
    DEFAULT_POOL_DEPTH,
    MAX_POOL_BATCH_SIZE,
)
from benchsmith.tools.retrieval.pooling import POOL_FUSION_METHODS, TECHNIQUES
from benchsmith.tools.text.qa_text import load_qa_pairs, pairs_to_use

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
        return read_json_object(self.report["results"])


@accepts_old_setting_names
def nuggets(
    questions: str | Path,
    corpus: Sequence[str | Path] = (),
    *,
    collection: str | None = None,
    run_id: str | None = None,
    on_event: EventHandler | None = None,
    resume: str | None = None,
    tags: tuple[str, ...] = (),
    limit: int | None = None,
    llm: str = BASELINE,
    embedder: str = DEFAULT_EMBEDDER,
    max_nuggets: int = DEFAULT_MAX_NUGGETS,
    pool_depth: int = DEFAULT_POOL_DEPTH,
    batch_size: int = MAX_POOL_BATCH_SIZE,
    fusion: Literal["combsum", "rrf"] = "combsum",
    all_nuggets_supported: bool = False,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    min_chars: int = DEFAULT_MIN_CHARS,
    concurrency: int = 4,
    seed: int = 0,
    rate_limit: float | None = None,
    timeout_s: float = 60.0,
    max_attempts: int = 6,
    structured_output: StructuredOutput = "auto",
    workspace: str | None = None,
    chroma_host: str | None = None,
    database: str | None = None,
    ray: str | None = None,
) -> NuggetsResult:
    """Build a nugget benchmark from ``questions`` (JSONL of ``{id, question, answer}`` or a
    Stack Exchange ``Posts.xml``) over ``corpus`` (directories, git checkouts, files, BEIR
    corpora or ``"stdlib"``) or an ingested ``collection``; every setting of
    :class:`NuggetsContext` is a keyword argument too. The same call with the same ``run_id``
    resumes. With ``database`` (a postgresql:// URL) its checkpoints, run record and model cache
    are kept in PostgreSQL."""
    settings = settings_given(NuggetsContext, locals())

    resolved = Workspace.resolve(settings.workspace)
    check_bounds(settings)
    check_chunk_sizes(settings.chunk_size, settings.min_chars)
    # The dry run prices the questions; the corpus is not read for it.
    stop_if_dry_run(lambda: _estimate(questions, settings))
    inputs = _checked_inputs(questions, corpus, collection, settings)
    prepare_ray(settings.ray)  # a cluster that cannot be joined stops here, before the run exists
    outcome = run_settled(
        builder, "nuggets", resolved, inputs, settings, run_id=run_id, on_event=on_event, resume=resume
    )
    return job_result(
        NuggetsResult,
        outcome,
        benchmark=Path(outcome.values["benchmark"]),
        nuggets_file=outcome.run_dir.file(NUGGETS_FILE),
        nugget_qrels=outcome.run_dir.file(NUGGET_QRELS_FILE),
    )


def _checked_inputs(
    questions: str | Path, corpus: Sequence[str | Path], collection: str | None, settings: NuggetsContext
) -> dict[str, Any]:
    """The run's inputs, every one checked with the settings they depend on before any work starts."""
    if bool(corpus) == bool(collection):
        raise InputError("give the corpus: one or more --corpus sources, or --collection NAME (not both)")
    if collection:
        check_collection_name(collection)
    sources = [_source(str(source)) for source in corpus]
    questions_path = Path(questions)
    # A missing or malformed questions file, or one with no pair to use, stops here.
    pairs_to_use(load_qa_pairs(questions_path, settings.tags), questions_path, settings.tags, settings.limit)
    check_models(settings.llm)
    if settings.fusion not in POOL_FUSION_METHODS:
        raise InputError(f"--fusion must be one of {', '.join(POOL_FUSION_METHODS)}, got {settings.fusion!r}")
    return {"questions": str(questions_path.resolve()), "corpus": sources, "collection": collection}


def _source(source: str) -> str:
    if source == STDLIB_SOURCE:
        return source
    if not Path(source).exists():
        raise InputError(f"{source}: no such file or directory")
    return str(Path(source).resolve())


estimate_nuggets = estimate_of(
    "estimate_nuggets",
    nuggets,
    CostEstimate,
    """Model calls and tokens (about 4 characters each) a build (:func:`nuggets`'s arguments; the corpus
    may be left out) would spend, before spending. The pool is taken at its largest (every technique
    adds ``pool_depth`` new chunks).""",
)


def _estimate(questions: str | Path, settings: NuggetsContext) -> CostEstimate:
    """:func:`estimate_nuggets` once the settings are checked."""
    llm, limit, max_nuggets = settings.llm, settings.limit, settings.max_nuggets
    pool_depth, batch_size, chunk_size = settings.pool_depth, settings.batch_size, settings.chunk_size
    check_models(llm)
    loaded = load_qa_pairs(questions, settings.tags)
    pairs = loaded.pairs[:limit] if limit is not None else loaded.pairs
    pool = len(TECHNIQUES) * pool_depth
    batch_count = math.ceil(pool / min(batch_size, MAX_POOL_BATCH_SIZE))
    chunk_tokens = estimate_tokens("x" * int(chunk_size * 0.8))
    writer = NuggetWriter(max_nuggets)
    input_tokens = output_tokens = 0
    for pair in pairs:
        prompt = estimate_tokens(
            "".join(m["content"] for m in writer.messages(question=pair.question, answer=pair.answer))
        )
        question = estimate_tokens(pair.question) + PROMPT_CHARS // 4
        nugget_text = OUTPUT_TOKENS["nuggets"]
        input_tokens += prompt + 2 * question + batch_count * (question + nugget_text) + pool * chunk_tokens
        output_tokens += (
            OUTPUT_TOKENS["nuggets"]
            + OUTPUT_TOKENS["sub_questions"]
            + OUTPUT_TOKENS["closed_book"]
            + pool * OUTPUT_TOKENS["support_per_chunk"]
        )
    calls = len(pairs) * (3 + batch_count)
    notes = [
        f"{len(pairs):,} questions: 3 writing calls each (nuggets, sub-questions, closed-book answer) and "
        f"up to {batch_count} support calls (pools of at most {pool} chunks in batches of {batch_size}).",
        "Pools shrink when techniques retrieve the same chunks, so this is an upper bound.",
        where_items_run(settings.ray, "model calls of each question and support batch"),
    ]
    return priced(f"{len(pairs):,} questions", [(llm, calls, input_tokens, output_tokens)], notes)
