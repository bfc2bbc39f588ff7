"""The evaluation graph's nodes before measuring: plan, dispatch and retrieve (a configuration's run file, a batch of queries at a time)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Send

from benchsmith.graphs.contexts.evaluate import DEFAULT_DEPTH, EvaluationContext  # noqa: F401 (re-exported)
from benchsmith.graphs.evaluate.inputs import (
    _all_configurations,
    _benchmark,
    _dense_index,
    _embedder,
    _query_texts,
    _run_file,
    input_problems,
    job,
    measure_names,
)
from benchsmith.graphs.evaluate.outside import outside_batches
from benchsmith.graphs.evaluate.state import DENSE_QUERY_BLOCK, TIMINGS_FILE, EvaluationState, RetrievalTask
from benchsmith.graphs.runtime.corpus_indexes import (
    DocumentTexts,
    bm25_index,
    cached_benchmark,
    corpus_documents,
    dense_index,
)
from benchsmith.graphs.runtime.progress import progress_reporter, report_reused, report_warning
from benchsmith.graphs.runtime.ray_items import run_items
from benchsmith.graphs.runtime.resources import embedder_for, scorer_for
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import Benchmark
from benchsmith.stores.formats.integrity import raise_if_strict
from benchsmith.stores.formats.trec import (
    Run,
    iter_aligned_batches,
    iter_run_batches,
    trec_run_writer,
    write_sorted_copy,
)
from benchsmith.stores.persistence.jsonl import append_jsonl
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.fusion import fuse_runs
from benchsmith.tools.retrieval.query_building import require_oracle_rewrites
from benchsmith.tools.retrieval.rerank import rerank_run
from benchsmith.tools.retrieval.retriever_specs import (
    Configuration,
    RunFileConfiguration,
)


def plan(state: EvaluationState, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
    """Check the benchmark, the settings and the ids of the inputs before any work, and list
    the configurations."""
    context = job.context(runtime)
    benchmark = _benchmark(runtime, state["benchmark"])
    _, nugget = measure_names(context.measures)
    if nugget and not context.nugget_qrels:
        raise InputError(
            f"{', '.join(nugget)} need nugget qrels (the nugget_qrels setting: qid nugget_id doc_id label)"
        )
    configurations = _all_configurations(runtime, state)
    require_oracle_rewrites(benchmark, [c.history for c in configurations.values() if isinstance(c, Configuration)])
    problems = input_problems(
        benchmark, context.qrels, context.extra_qrels, state.get("runs") or [], context.nugget_qrels
    )
    raise_if_strict(problems, context.strict)
    for problem in problems:
        report_warning(problem.message())
    return {"configurations": list(configurations), "warnings": [problem.message() for problem in problems]}


def dispatch(state: EvaluationState, runtime: Runtime[EvaluationContext]) -> list[Send] | Literal["measure"]:
    """The configurations of the earliest stage that still lack run files; measure when none do."""
    configurations = _all_configurations(runtime, state)
    pending = [c for c in configurations.values() if not _run_file(runtime, state["run_id"], c).exists()]
    if not pending:
        return "measure"
    stage = min(configuration.stage for configuration in pending)
    return [
        Send(
            "retrieve",
            {
                "run_id": state["run_id"],
                "benchmark": state["benchmark"],
                "configuration": c.name,
                "retrievers": state["retrievers"],
                "histories": state["histories"],
                "runs": state.get("runs") or [],
            },
        )
        for c in pending
        if c.stage == stage
    ]


def retrieve(task: RetrievalTask, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
    """One configuration's run (retrieved, fused, reranked, or a run file copied in), written
    as a TREC run file a batch of queries at a time; the file appears when it is complete."""
    configuration = _all_configurations(runtime, task)[task["configuration"]]
    path = _run_file(runtime, task["run_id"], configuration)
    if path.exists():  # finished before a crash: reused, never recomputed
        report_reused(configuration.name)
        return {"finished": [configuration.name]}
    started = time.perf_counter()
    if isinstance(configuration, RunFileConfiguration):
        summary = write_sorted_copy(configuration.path, path, tag=configuration.name)
        progress_reporter(configuration.name)(len(summary.queries), len(summary.queries))
    else:
        benchmark = _benchmark(runtime, task["benchmark"])
        report = progress_reporter(configuration.name)
        with trec_run_writer(path, tag=configuration.name) as write:
            for done, batch in _run_batches(runtime, task["run_id"], task["benchmark"], benchmark, configuration):
                write(batch)
                report(done, len(benchmark.queries))
    append_jsonl(
        job.run_dir(runtime, task["run_id"]).file(TIMINGS_FILE),
        {"configuration": configuration.name, "seconds": round(time.perf_counter() - started, 3)},
    )
    return {"finished": [configuration.name]}


def _run_batches(
    runtime: Runtime[EvaluationContext], run_id: str, spec: str, benchmark: Benchmark, configuration: Configuration
) -> Iterator[tuple[int, Run]]:
    """``(queries done, the next batch's rankings)``, batches in query id order; a retriever's blocks
    of queries run here or as Ray tasks (``spec``: the benchmark as the task gave it, for a node)."""
    context = job.context(runtime)
    size = context.batch_size
    if configuration.rerank:
        (first_stage,) = configuration.inputs
        queries = _query_texts(runtime, run_id, benchmark, configuration.history)
        documents = DocumentTexts(corpus_documents(benchmark))
        assert context.rerank is not None  # a configuration reranks only with a reranker set
        scorer = scorer_for(context.rerank)
        done = 0
        for batch in iter_run_batches(_run_file(runtime, run_id, first_stage), size):
            done += len(batch)
            yield done, rerank_run(batch, queries, documents, scorer, context.rerank_depth)
        return
    if configuration.retriever.kind == "hybrid":
        paths = [_run_file(runtime, run_id, component) for component in configuration.inputs]
        done = 0
        for runs in iter_aligned_batches(paths, size):
            retriever = configuration.retriever
            fused = fuse_runs(
                runs, retriever.method or "rrf", retriever.weights, depth=context.depth
            )  # as select reads it
            done += len(fused)
            yield done, fused
        return
    queries = _query_texts(runtime, run_id, benchmark, configuration.history)
    query_ids = sorted(queries)
    if configuration.retriever.kind == "outside":
        yield from outside_batches(runtime, run_id, benchmark, configuration, queries, query_ids)
        return
    kind, model = configuration.retriever.kind, configuration.retriever.model
    if kind == "bm25":
        bm25_index(benchmark, job.workspace(runtime))  # built once, kept in the workspace where the blocks find it
        blocks = [query_ids[start : start + size] for start in range(0, len(query_ids), size)]
    else:
        _dense_index(runtime, benchmark, _embedder(runtime, run_id, model))  # the corpus embedded once, here
        # Fixed blocks, whatever the batch size: float32 matrix products (the embedder's and the
        # search's) round differently with the shape of the block, and results must not depend on it.
        blocks = [query_ids[start : start + DENSE_QUERY_BLOCK] for start in range(0, len(query_ids), DENSE_QUERY_BLOCK)]
    payloads = [
        {"run_id": run_id, "benchmark": spec, "kind": kind, "model": model, "queries": {q: queries[q] for q in block}}
        for block in blocks
    ]
    # here, one block at a time, or as Ray tasks, --concurrency blocks at once (graphs/runtime/ray_items.py)
    ranked = run_items(
        ranked_block, payloads, context, workspace=job.workspace(runtime), run_id=run_id, in_flight=context.concurrency
    )
    done = 0
    for block, run in zip(blocks, ranked):
        done += len(block)
        yield done, run


def ranked_block(task: dict[str, Any], context: EvaluationContext) -> Run:
    """One retriever's rankings of a block of queries (BM25 or dense), here or on a Ray node: the
    task carries the query texts; the index is the corpus's in the workspace (or the Chroma server)."""
    workspace = Workspace.resolve(context.workspace)
    benchmark = cached_benchmark(task["benchmark"], workspace, context.split)
    queries: dict[str, str] = task["queries"]
    if task["kind"] == "bm25":
        return bm25_index(benchmark, workspace).search(queries, context.depth)
    embedder = embedder_for(task["model"] or context.embedder, workspace, task["run_id"], context)
    dense = dense_index(workspace, context.chroma_host, benchmark, embedder)
    return dense.search(list(queries), embedder.encode(list(queries.values())), context.depth)
