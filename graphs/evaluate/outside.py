"""The user's own retrievers in an evaluation (issue 34): asked per query in parallel, rate-limited
and retried (tools/retrieval/outside_retrieval.py), each finished query logged in the run so a
resumed run does not ask it again, and what they return that the corpus lacks named in warnings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.graphs.contexts.evaluate import EvaluationContext
from benchsmith.graphs.evaluate.inputs import job
from benchsmith.graphs.runtime.corpus_indexes import corpus_documents, document_text
from benchsmith.stores.formats.beir import Benchmark
from benchsmith.stores.formats.trec import Run
from benchsmith.tools.retrieval.outside_retrieval import OutsideCall, outside_run_batches, unmapped_warning
from benchsmith.tools.retrieval.outside_retrievers import CorpusIds, resolve_retriever
from benchsmith.tools.retrieval.query_building import history_records
from benchsmith.tools.retrieval.retriever_specs import Configuration

OUTSIDE_DIR = "outside"  # each outside retriever's log of finished queries


def outside_log(runtime: Runtime[EvaluationContext], run_id: str, configuration: Configuration) -> Path:
    return job.run_dir(runtime, run_id).file(OUTSIDE_DIR) / f"{configuration.file_stem}.jsonl"


def outside_batches(
    runtime: Runtime[EvaluationContext],
    run_id: str,
    benchmark: Benchmark,
    configuration: Configuration,
    queries: dict[str, str],
    query_ids: list[str],
) -> Iterator[tuple[int, Run]]:
    """``(queries done, the next batch's rankings)`` of the user's own retriever."""
    context = job.context(runtime)
    by_id = benchmark.queries_by_id
    calls = {
        query_id: OutsideCall(queries[query_id], history_records(by_id[query_id], configuration.history))
        for query_id in query_ids
    }
    yield from outside_run_batches(
        resolve_retriever(str(configuration.retriever.model), context.timeout_s),
        calls,
        query_ids,
        context.depth,
        CorpusIds(corpus_documents(benchmark), document_text),
        outside_log(runtime, run_id, configuration),
        batch_size=context.batch_size,
        concurrency=context.concurrency,
        max_attempts=context.max_attempts,
        rate_limit=context.rate_limit,
    )


def unmapped_warnings(runtime: Runtime[EvaluationContext], run_id: str, configurations: list[Any]) -> list[str]:
    """What the outside retrievers returned that the corpus lacks, one warning per configuration."""
    found = (
        unmapped_warning(c.name, outside_log(runtime, run_id, c))
        for c in configurations
        if isinstance(c, Configuration) and c.retriever.kind == "outside"
    )
    return [warning for warning in found if warning is not None]
