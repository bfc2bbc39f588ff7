"""What the evaluation nodes read: the benchmark, its judgments and the problems found in them, the embedder and indexes, the query texts of each history mode, the configurations and their run files."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.agents.rewriter import Rewriter
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.evals.measures.nugget_measures import split_measures
from benchsmith.evals.measures.standard import parse_measures
from benchsmith.graphs.contexts.evaluate import DEFAULT_DEPTH, EvaluationContext  # noqa: F401 (re-exported)
from benchsmith.graphs.evaluate.state import (
    QUERIES_DIR,
    RUN_FILES_DIR,
    AnyConfiguration,
    EvaluationState,
    RetrievalTask,
)
from benchsmith.graphs.runtime.corpus_indexes import (
    cached_benchmark,
    corpus_documents,
    corpus_duplicates,
    dense_index,
)
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.progress import progress_reporter
from benchsmith.graphs.runtime.resources import embedder_for, run_seam
from benchsmith.stores.formats.beir import Benchmark, BenchmarkQuery, merge_qrels, read_qrels
from benchsmith.stores.formats.integrity import IdProblem, unknown_ids, unknown_qrels_ids
from benchsmith.stores.formats.nugget_qrels import read_nugget_qrels
from benchsmith.stores.formats.trec import (
    Qrels,
    run_file_query_ids,
)
from benchsmith.stores.persistence.jsonl import load_jsonl, write_jsonl_atomic
from benchsmith.tools.retrieval.dense_retrieval import DenseIndex
from benchsmith.tools.retrieval.embedding import Embedder
from benchsmith.tools.retrieval.query_building import HistoryMode, build_query, parse_history_mode
from benchsmith.tools.retrieval.retriever_specs import (
    expand_configurations,
    parse_retriever,
    run_file_configurations,
)

job = JobRuntime(EvaluationContext)  # the runtime's settings, workspace and run directories


def _benchmark(runtime: Runtime[EvaluationContext], spec: str) -> Benchmark:
    return cached_benchmark(spec, job.workspace(runtime), job.context(runtime).split)


def _embedder(runtime: Runtime[EvaluationContext], run_id: str, model: str | None) -> Embedder:
    return embedder_for(model or job.context(runtime).embedder, job.workspace(runtime), run_id, job.context(runtime))


def _dense_index(runtime: Runtime[EvaluationContext], benchmark: Benchmark, embedder: Embedder) -> DenseIndex:
    return dense_index(job.workspace(runtime), job.context(runtime).chroma_host, benchmark, embedder)


def judgments(benchmark: Benchmark, qrels: str | None, extra_qrels: str | None) -> Qrels:
    """The judgments measured against: the benchmark's (or the ``qrels`` file's), with
    ``extra_qrels`` merged in."""
    judged = read_qrels(qrels) if qrels else benchmark.qrels
    return merge_qrels(judged, read_qrels(extra_qrels, allow_empty=True)) if extra_qrels else judged


def input_problems(
    benchmark: Benchmark,
    qrels: str | None = None,
    extra_qrels: str | None = None,
    run_files: Sequence[str] = (),
    nugget_qrels: str | None = None,
) -> list[IdProblem]:
    """What is wrong with the ids of the inputs: documents the corpus repeats, judged queries
    and documents the benchmark lacks, run-file queries the benchmark lacks, nugget-judged
    queries the judgments lack (they are not measured) and nugget-judged documents the corpus
    lacks."""
    documents = corpus_documents(benchmark)
    problems = [problem for problem in [corpus_duplicates(benchmark)] if problem is not None]
    judged_files = [
        (qrels, read_qrels(qrels)) if qrels else (benchmark.qrels_file or benchmark.directory, benchmark.qrels)
    ]
    if extra_qrels:
        judged_files.append((extra_qrels, read_qrels(extra_qrels, allow_empty=True)))
    for path, judged in judged_files:
        problems += unknown_qrels_ids(path, judged, benchmark.queries_by_id, documents)
    if nugget_qrels:
        nuggets = read_nugget_qrels(nugget_qrels)
        judged_queries = set().union(*(judged for _, judged in judged_files))
        problems += [
            problem
            for problem in (
                unknown_ids(
                    nugget_qrels,
                    nuggets,
                    judged_queries,
                    "nugget-judged query ids without judgments to measure against",
                    "they are not measured",
                ),
                unknown_ids(
                    nugget_qrels,
                    (doc_id for by_nugget in nuggets.values() for labels in by_nugget.values() for doc_id in labels),
                    documents,
                    "nugget-judged document ids not in the corpus (or without text)",
                    "no retriever can find them; coverage cannot reach 1 where they support a nugget",
                ),
            )
            if problem is not None
        ]
    for path in run_files:
        problem = unknown_ids(
            path,
            run_file_query_ids(path),
            benchmark.queries_by_id,
            "query ids not among the benchmark's queries",
            "they are not measured",
        )
        if problem is not None:
            problems.append(problem)
    return problems


def _seam(runtime: Runtime[EvaluationContext], run_id: str) -> ModelSeam:
    context = job.context(runtime)
    return run_seam(job.workspace(runtime), run_id, context.llm, context)


_query_lock = threading.Lock()


def _query_texts(
    runtime: Runtime[EvaluationContext], run_id: str, benchmark: Benchmark, history: HistoryMode
) -> dict[str, str]:
    """``{query id: text}`` for a history mode, from ``queries/<mode>.jsonl`` when written."""
    path = job.run_dir(runtime, run_id).file(QUERIES_DIR) / f"{history.label.replace(':', '-')}.jsonl"
    with _query_lock:
        if path.exists():
            return {record["_id"]: record["text"] for record in load_jsonl(path)}
        rewrite = None
        if history.kind == "rewrite":
            seam, rewriter = _seam(runtime, run_id), Rewriter()

            def rewrite(turns: list[tuple[str, str]], question: str) -> str:
                return seam.run(rewriter, history=turns, question=question).query

        texts = _build_all(
            benchmark.queries,
            history,
            rewrite,
            job.context(runtime).concurrency,
            progress_reporter(f"queries {history.label}"),
        )
        write_jsonl_atomic(path, ({"_id": query_id, "text": text} for query_id, text in texts.items()))
        return texts


def _build_all(
    queries: list[BenchmarkQuery], history: HistoryMode, rewrite: Any, concurrency: int, report: Any
) -> dict[str, str]:
    if history.kind != "rewrite":
        return {query.id: build_query(query, history) for query in queries}
    # Rewriting calls a model per turn: in parallel, each reply cached by the seam.
    texts: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        futures = {query.id: pool.submit(build_query, query, history, rewrite) for query in queries}
        for done, (query_id, future) in enumerate(futures.items(), start=1):
            texts[query_id] = future.result()
            report(done, len(futures))
    return texts


def _reranking(runtime: Runtime[EvaluationContext]) -> bool:
    return job.context(runtime).rerank is not None


def _all_configurations(
    runtime: Runtime[EvaluationContext], state: EvaluationState | RetrievalTask
) -> dict[str, AnyConfiguration]:
    """Every configuration the settings ask for (and the ones fusions need), by name, in stage
    order; the user's run files first."""
    configurations = expand_configurations(
        [parse_retriever(spec) for spec in state["retrievers"]],
        [parse_history_mode(mode) for mode in state["histories"]],
        _reranking(runtime),
    )
    by_name: dict[str, AnyConfiguration] = {configuration.name: configuration for configuration in configurations}
    run_files = run_file_configurations(state.get("runs") or [], taken=by_name)
    return {**{configuration.name: configuration for configuration in run_files}, **by_name}


def _run_file(runtime: Runtime[EvaluationContext], run_id: str, configuration: AnyConfiguration) -> Path:
    return job.run_dir(runtime, run_id).file(RUN_FILES_DIR) / f"{configuration.file_stem}.trec"


def measure_names(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """Every measure as the results name it, in the given order (ir_measures' spelling; the
    nugget measures Coverage@k and alpha_nDCG@k as given), and the nugget measures among them."""
    standard, nugget = split_measures(names)
    spelled = {name: str(parse_measures([name])[0]) for name in standard}
    return list(dict.fromkeys(spelled.get(name, name) for name in names)), list(dict.fromkeys(nugget))
