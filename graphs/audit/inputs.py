"""What the audit's nodes read: ``job`` (their settings, workspace and run directories), the
benchmark, the run's instances, a judge's model seam, the retrievers' rankings, the turn lists a
synthesis run records, and each instance's gold document."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.agents.seam.models import ModelSeam
from benchsmith.evals.measures.question_form import DocumentCounter
from benchsmith.graphs.audit.state import INSTANCES_FILE, JUDGMENTS_FILE
from benchsmith.graphs.contexts.audit import AuditContext
from benchsmith.graphs.runtime.corpus_indexes import bm25_index, cached_benchmark, dense_index
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.progress import progress_reporter
from benchsmith.graphs.runtime.resources import embedder_for, run_items, run_seam
from benchsmith.stores.formats.beir import Benchmark, BenchmarkQuery
from benchsmith.stores.formats.benchmark_files import run_dialogues_file, turn_query_id
from benchsmith.stores.persistence.jsonl import load_jsonl, records_by
from benchsmith.stores.persistence.run_items import RunItems
from benchsmith.tools.retrieval.query_building import HistoryMode, build_query

job = JobRuntime(AuditContext)  # the runtime's settings, workspace and run directories


def benchmark_of(runtime: Runtime[AuditContext], spec: str) -> Benchmark:
    return cached_benchmark(spec, job.workspace(runtime), job.context(runtime).split, job.context(runtime).corpus)


def instances_of(runtime: Runtime[AuditContext], run_id: str) -> dict[str, dict[str, Any]]:
    return records_by(job.run_dir(runtime, run_id).file(INSTANCES_FILE), "instance")


def judge_seam(runtime: Runtime[AuditContext], run_id: str, judge: str) -> ModelSeam:
    return run_seam(job.workspace(runtime), run_id, judge, job.context(runtime))


def audit_items(runtime: Runtime[AuditContext], run_id: str) -> RunItems:
    """The run's instances as items: judged once in the judgments log."""
    return run_items(job.workspace(runtime), run_id, JUDGMENTS_FILE, "instance")


def retriever_rankings(
    runtime: Runtime[AuditContext],
    run_id: str,
    benchmark: Benchmark,
    queries: list[BenchmarkQuery],
    depth: int,
    stage: str,
) -> dict[str, list[list[str]]]:
    """Per query, BM25's and the dense retriever's top ``depth`` of the corpus for the turn with its history."""
    context = job.context(runtime)
    texts = {query.id: build_query(query, HistoryMode("full")) for query in queries}
    lexical = bm25_index(benchmark, job.workspace(runtime)).search(texts, depth, progress_reporter(f"{stage} bm25"))
    embedder = embedder_for(context.embedder, job.workspace(runtime), run_id, context)
    index = dense_index(job.workspace(runtime), context.chroma_host, benchmark, embedder)
    query_ids = list(texts)
    semantic = index.search(
        query_ids, embedder.encode([texts[q] for q in query_ids]), depth, progress_reporter(f"{stage} dense")
    )
    return {query_id: [list(lexical.get(query_id, {})), list(semantic.get(query_id, {}))] for query_id in query_ids}


def gold_document(benchmark: Benchmark, query_id: str, asked: Sequence[str] = ()) -> str | None:
    """The instance's gold document: the most relevant judged one (ties: the first in ``asked``,
    the order a synthesis run's questioner read its golds in, then by id)."""
    golds = asked_golds(benchmark, query_id, asked)
    return golds[0] if golds else None


def asked_golds(benchmark: Benchmark, query_id: str, asked: Sequence[str] = ()) -> list[str]:
    """The query's judged relevant documents, most relevant first, then in ``asked`` order, then by id."""
    order = {doc_id: position for position, doc_id in enumerate(asked)}
    relevant = [(relevance, doc_id) for doc_id, relevance in benchmark.qrels.get(query_id, {}).items() if relevance > 0]
    return [
        doc_id for _, doc_id in sorted(relevant, key=lambda item: (-item[0], order.get(item[1], len(order)), item[1]))
    ]


def turn_values(benchmark: Benchmark, key: str) -> dict[str, Any]:
    """``{query id: the turn's value under key}`` of a synthesis run's turns; {} for other benchmarks."""
    dialogues = run_dialogues_file(benchmark.directory)
    if dialogues is None:
        return {}
    return {
        turn_query_id(dialogue["conversation_id"], turn["index"]): turn[key]
        for dialogue in load_jsonl(dialogues)
        for turn in dialogue["turns"]
        if turn.get(key)
    }


def turn_candidates(benchmark: Benchmark) -> dict[str, list[str]]:
    """``{query id: candidate chunk ids}`` of the underspecified turns of a synthesis run (its
    ``dialogues.jsonl`` beside the BEIR export); other benchmarks name no candidates."""
    return _turn_lists(benchmark, "candidate_ids")


def turn_golds(benchmark: Benchmark) -> dict[str, list[str]]:
    """``{query id: gold chunk ids}`` of a synthesis run's turns in the order the questioner read
    them (the chunk the question was asked from first); other benchmarks give no order."""
    return _turn_lists(benchmark, "gold_ids")


def _turn_lists(benchmark: Benchmark, key: str) -> dict[str, list[str]]:
    """``{query id: the turn's list under key}``, for the turns where it is not empty, of the
    synthesis run's ``dialogues.jsonl`` beside the BEIR export; {} for other benchmarks."""
    dialogues = run_dialogues_file(benchmark.directory)
    if dialogues is None:
        return {}
    return {
        turn_query_id(dialogue["conversation_id"], turn["index"]): list(turn[key])
        for dialogue in load_jsonl(dialogues)
        for turn in dialogue["turns"]
        if turn.get(key)
    }


class LazyCounter:
    """Builds the document counter on the first quoted span: most audits have none."""

    def __init__(self, build: Callable[[], DocumentCounter]):
        self._build = build
        self._counter: DocumentCounter | None = None

    def __call__(self, span: str) -> int:
        if self._counter is None:
            self._counter = self._build()
        return self._counter(span)
