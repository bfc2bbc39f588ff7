"""``benchsmith.audit``: grade a benchmark with a judge ensemble (MTR-Eval): alignment,
discriminability against hard negatives, answer faithfulness and quality; find the gold
documents it misses."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchsmith.agents.defaults import StructuredOutput
from benchsmith.agents.seam.models import BASELINE
from benchsmith.evals.defaults import DEFAULT_MIN_VOTES
from benchsmith.evals.measures.question_form import DEFAULT_MANY_DOCUMENTS
from benchsmith.graphs.audit.graph import builder
from benchsmith.graphs.audit.inputs import gold_document
from benchsmith.graphs.contexts.audit import (
    DEFAULT_LABEL_AGREEMENT,
    DEFAULT_LABEL_POOL_DEPTH,
    DEFAULT_NEGATIVES,
    AuditContext,
)
from benchsmith.graphs.runtime.corpus_indexes import cached_benchmark, corpus_documents, document_text
from benchsmith.graphs.runtime.ray_items import prepare as prepare_ray
from benchsmith.graphs.runtime.ray_items import where_items_run
from benchsmith.graphs.runtime.settings import accepts_old_setting_names, check_bounds, settings_given
from benchsmith.jobs.common import (
    CostEstimate,
    EventHandler,
    JobRun,
    check_embedders,
    check_models,
    estimate_of,
    job_result,
    priced,
    resolved_path,
    run_settled,
    stop_if_dry_run,
)
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.integrity import unknown_ids
from benchsmith.stores.persistence.jsonl import read_json_object
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.defaults import DEFAULT_EMBEDDER
from benchsmith.tools.retrieval.query_building import HistoryMode, build_query

PROMPT_CHARS = 800  # a judge's instructions and tags
VERDICT_OUTPUT_TOKENS = 60


@dataclass(frozen=True)
class Verdict:
    label: str  # reliable, usable with caveats, unreliable
    explanation: str


@dataclass(frozen=True)
class AuditResult(JobRun):
    instances: int = 0
    verdict: Verdict = Verdict("", "")
    means: dict[str, float] = field(default_factory=dict)  # per dimension (1-5), and gold_pick_rate (0-1)
    confirmed_missing_gold: int = 0
    suspected_missing_gold: int = 0
    ill_formed_questions: int = 0  # flagged as noise: fragments, templates, markup, an ambiguous quote...
    shortcut_flags: list[str] = field(default_factory=list)  # lexically_trivial, answer_leak, ill_formed, history_free
    lexical_overlap: dict[str, float | None] = field(default_factory=dict)  # mean, median, p90 (shortcuts.json)
    # Per checked turn label (unanswerable, underspecified, multi-passage, partial): the share of its
    # turns the judges confirmed; empty for a benchmark without labels.
    label_agreement: dict[str, float] = field(default_factory=dict)
    # The offline quality gate (evals/quality_gate/): turns read, turns flagged, flagged turns per rubric class.
    quality_gate: dict[str, Any] = field(default_factory=dict)
    report: dict[str, Path] = field(default_factory=dict)  # markdown, html, results (audit.json)
    extra_qrels: Path | None = None  # the confirmed missing gold, for evaluate(extra_qrels=...)

    def results(self) -> dict[str, Any]:
        """Everything ``audit.json`` holds: dimensions, discriminability, agreement, the worst
        instances and every missing-gold candidate with the judges' reasons."""
        return read_json_object(self.report["results"])


@accepts_old_setting_names
def audit(
    benchmark: str | Path,
    *,
    judges: Sequence[str] = (BASELINE,),
    run_id: str | None = None,
    on_event: EventHandler | None = None,
    resume: str | None = None,
    seed: int = 0,
    split: str = "test",
    corpus: str | None = None,
    negatives: int = DEFAULT_NEGATIVES,
    sample: int | None = None,
    position_check: bool = False,
    min_votes: int = DEFAULT_MIN_VOTES,
    label_pool_depth: int = DEFAULT_LABEL_POOL_DEPTH,
    label_agreement: float = DEFAULT_LABEL_AGREEMENT,
    many_documents: int = DEFAULT_MANY_DOCUMENTS,
    embedder: str = DEFAULT_EMBEDDER,
    concurrency: int = 4,
    rate_limit: float | None = None,
    timeout_s: float = 60.0,
    max_attempts: int = 6,
    structured_output: StructuredOutput = "auto",
    workspace: str | None = None,
    chroma_host: str | None = None,
    database: str | None = None,
    ray: str | None = None,
) -> AuditResult:
    """Audit ``benchmark`` (a BEIR directory, a synthesis run directory or run id, or a turn
    JSONL file with ``corpus``); every setting of :class:`AuditContext` is a keyword argument
    too. The same call with the same ``run_id`` resumes. With ``ray`` each instance is judged
    as a Ray task (graphs/runtime/ray_items.py)."""
    settings = settings_given(AuditContext, locals())

    resolved = Workspace.resolve(settings.workspace)
    check_bounds(settings)
    inputs = _checked_inputs(resolved, benchmark, judges, settings)
    stop_if_dry_run(lambda: _estimate(resolved, benchmark, judges, settings))
    check_embedders(settings.embedder)
    corpus = str(Path(settings.corpus).resolve()) if settings.corpus else None
    prepare_ray(settings.ray)  # a cluster that cannot be joined stops here, before the run exists
    outcome = run_settled(
        builder,
        "audit",
        resolved,
        inputs,
        replace(settings, corpus=corpus),
        run_id=run_id,
        on_event=on_event,
        resume=resume,
    )
    return job_result(
        AuditResult,
        outcome,
        verdict=Verdict(**outcome.values["verdict"]),
        extra_qrels=outcome.run_dir.file("extra_qrels.tsv"),
    )


def _checked_inputs(
    workspace: Workspace, benchmark: str | Path, judges: Sequence[str], settings: AuditContext
) -> dict[str, Any]:
    if not judges:
        raise InputError("give at least one --judge")
    if len(set(judges)) != len(judges):
        raise InputError("each --judge may be given once")
    check_models(*judges)
    corpus_path = str(Path(settings.corpus).resolve()) if settings.corpus else None
    loaded = cached_benchmark(resolved_path(str(benchmark)), workspace, settings.split, corpus_path)  # bad input stops
    documents = corpus_documents(loaded)  # here, a malformed corpus too (read once: the run reuses it)
    # The judges read every gold document: one the corpus lacks would stop the run at its turn.
    missing = unknown_ids(
        loaded.qrels_file or loaded.directory,
        (doc_id for judged in loaded.qrels.values() for doc_id, relevance in judged.items() if relevance > 0),
        documents,
        f"gold document ids not in the corpus {loaded.corpus_path}",
        "the judges cannot read them; add them to the corpus or remove them from the gold",
    )
    if missing:
        raise InputError(missing.message())
    return {"benchmark": resolved_path(str(benchmark)), "judges": list(judges)}


estimate_audit = estimate_of(
    "estimate_audit",
    audit,
    CostEstimate,
    "Model calls and tokens (about 4 characters each) an audit (:func:`audit`'s arguments) would spend, before spending.",
)


def _estimate(
    workspace: Workspace, benchmark: str | Path, judges: Sequence[str], settings: AuditContext
) -> CostEstimate:
    """:func:`estimate_audit` once the call is checked."""
    sample, negatives, position_check = settings.sample, settings.negatives, settings.position_check
    loaded = cached_benchmark(
        resolved_path(str(benchmark)),
        workspace,
        settings.split,
        str(Path(settings.corpus).resolve()) if settings.corpus else None,
    )
    documents = corpus_documents(loaded)
    mean_document = sum(len(document_text(*d)) for d in documents.values()) // max(len(documents), 1)
    queries = [query for query in loaded.queries if gold_document(loaded, query.id)]
    instances = min(len(queries), sample) if sample is not None else len(queries)
    conversation = sum(len(build_query(q, HistoryMode("full"))) for q in queries) // max(len(queries), 1)
    per_instance = [
        conversation + mean_document + PROMPT_CHARS,  # alignment
        conversation + (negatives + 1) * mean_document + PROMPT_CHARS,
    ]  # choice
    if position_check:
        per_instance.append(per_instance[1])
    if loaded.has_answers:
        per_instance += [mean_document + 2 * PROMPT_CHARS, conversation + 2 * PROMPT_CHARS]  # faithfulness, quality
    calls = instances * len(per_instance)
    return priced(
        f"{instances:,} instances × {len(judges)} judge(s)",
        [(judge, calls, instances * sum(per_instance) // 4, calls * VERDICT_OUTPUT_TOKENS) for judge in judges],
        notes=[where_items_run(settings.ray, "judgments")],
    )
