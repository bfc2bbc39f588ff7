"""Retriever evaluation (the MTR-Bench protocol) on any benchmark.

    plan ─→ dispatch ─→ Send × configurations of the next stage ─→ retrieve ─→ gather ─┐
              ↑ └────────────────────── (nothing left) ──→ measure ─→ END             │
              └──────────────────────────────────────────────────────────────────────┘

A configuration is a retriever (bm25, dense[:MODEL], hybrid fusion) × a history mode (full,
last:K, current, rewrite, oracle), optionally reranked, or a TREC run file of the user's own
system (named by its file name). Stages run in order: first-stage retrievers and run files,
then fusions of their runs, then reranking. Each configuration writes one TREC run file into
the run directory, sorted by query id; a run file that exists is complete (written to a
temporary file and renamed) and is reused, never recomputed, so a killed evaluation resumes
where it stopped. ``measure`` scores every run with ir_measures (and, given nugget qrels,
with the nugget measures Coverage@k and alpha_nDCG@k), breaks the scores down by turn and
switch type, tests the differences, and writes ``report.md``, ``report.html`` and
``results.json``.

Everything streams a batch of queries at a time (``batch_size``): retrieval writes each
batch's rankings as it goes, fusion and reranking read their input run files side by side a
batch at a time, and measuring reads each run file a batch at a time (the nugget measures
scored on each batch as it passes) and keeps a row of floats per judged query. Memory holds
one batch of rankings, whatever the number of queries.

``plan`` checks the inputs first: judged query or document ids the benchmark lacks, a
document id the corpus repeats, run-file queries the benchmark lacks, and nugget-judged
query ids the judgments lack or document ids the corpus lacks are warnings
(streamed as ``{"warning": ...}`` events and recorded in results.json and the report), or
errors with ``strict``.

State holds configuration names and warnings only; queries, corpus and runs live in files.
"""

from __future__ import annotations

import operator
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired

from langgraph.config import get_stream_writer
from langgraph.graph import END, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from benchsmith.agents.rewriter import Rewriter
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.evals.measures.evaluation_results import recall_cutoffs, summarize_scores, unjudged_summary
from benchsmith.evals.measures.nugget_measures import evaluate_batches_with_nuggets, split_measures
from benchsmith.evals.measures.standard import DEFAULT_QUERIES_PER_BATCH, parse_measures
from benchsmith.evals.reports.evaluation_report import evaluation_notes, evaluation_report_files
from benchsmith.graphs.contexts.evaluate import DEFAULT_DEPTH, EvaluationContext  # noqa: F401 (re-exported)
from benchsmith.graphs.runtime.corpus_indexes import (
    DocumentTexts,
    bm25_index,
    cached_benchmark,
    corpus_documents,
    corpus_duplicates,
    dense_index,
    document_text,
)
from benchsmith.graphs.runtime.fanout import add_fan_out
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.progress import progress_reporter, report_reused, report_warning
from benchsmith.graphs.runtime.resources import embedder_for, run_seam, scorer_for
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import Benchmark, BenchmarkQuery, merge_qrels, read_qrels
from benchsmith.stores.formats.integrity import IdProblem, raise_if_strict, unknown_ids, unknown_qrels_ids
from benchsmith.stores.formats.nugget_qrels import read_nugget_qrels
from benchsmith.stores.formats.trec import (
    Qrels,
    Run,
    iter_aligned_batches,
    iter_run_batches,
    run_file_query_ids,
    trec_run_writer,
    write_sorted_copy,
)
from benchsmith.stores.formats.turn_labels import standalone_group
from benchsmith.stores.persistence.files import write_files_atomic
from benchsmith.stores.persistence.jsonl import append_jsonl, load_jsonl, write_jsonl_atomic
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.dense_retrieval import QUERY_BATCH, DenseIndex
from benchsmith.tools.retrieval.embedded_text import EMBEDDED_TEXT_NOTE
from benchsmith.tools.retrieval.embedding import Embedder
from benchsmith.tools.retrieval.fusion import fuse_runs
from benchsmith.tools.retrieval.outside_retrieval import OutsideCall, outside_run_batches, unmapped_warning
from benchsmith.tools.retrieval.outside_retrievers import CorpusIds, resolve_retriever
from benchsmith.tools.retrieval.query_building import (
    HistoryMode,
    build_query,
    history_records,
    parse_history_mode,
    require_oracle_rewrites,
)
from benchsmith.tools.retrieval.rerank import rerank_run
from benchsmith.tools.retrieval.retriever_specs import (
    Configuration,
    RunFileConfiguration,
    expand_configurations,
    parse_retriever,
    run_file_configurations,
)

RUN_FILES_DIR, QUERIES_DIR, TIMINGS_FILE = "run-files", "queries", "timings.jsonl"
OUTSIDE_DIR = "outside"  # each outside retriever's log of finished queries (tools/retrieval/outside_retrieval.py)
DEFAULT_BATCH_SIZE = DEFAULT_QUERIES_PER_BATCH
DENSE_QUERY_BLOCK = QUERY_BATCH  # queries embedded and searched together
AnyConfiguration = Configuration | RunFileConfiguration


class EvaluationInput(TypedDict):
    run_id: str
    benchmark: str  # a BEIR directory, a synthesis run directory or a run id
    retrievers: list[str]
    histories: list[str]
    runs: NotRequired[list[str]]  # TREC run files of the user's own systems, evaluated beside the retrievers


class EvaluationOutput(TypedDict, total=False):
    run_id: str
    report: dict[str, str]  # {"markdown", "html", "results"}: paths
    primary_measure: str
    aggregate: dict[str, dict[str, float]]  # {configuration: {measure: mean}}
    warnings: Annotated[list[str], operator.add]  # what the input checks found (see the module docstring)


class EvaluationState(EvaluationInput, EvaluationOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    configurations: list[str]  # names, stage order
    finished: Annotated[list[str], operator.add]


class RetrievalTask(TypedDict):
    run_id: str
    benchmark: str
    configuration: str
    retrievers: list[str]
    histories: list[str]
    runs: list[str]


# ---------------------------------------------------------------------------------------
# Inputs, opened once per process.

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


# ---------------------------------------------------------------------------------------
# Queries per history mode, written once per run.


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


# ---------------------------------------------------------------------------------------
# Nodes.


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
            for done, batch in _run_batches(runtime, task["run_id"], benchmark, configuration):
                write(batch)
                report(done, len(benchmark.queries))
    append_jsonl(
        job.run_dir(runtime, task["run_id"]).file(TIMINGS_FILE),
        {"configuration": configuration.name, "seconds": round(time.perf_counter() - started, 3)},
    )
    return {"finished": [configuration.name]}


def _run_batches(
    runtime: Runtime[EvaluationContext], run_id: str, benchmark: Benchmark, configuration: Configuration
) -> Iterator[tuple[int, Run]]:
    """``(queries done, the next batch's rankings)``, batches in query id order."""
    context = job.context(runtime)
    size = context.batch_size
    if configuration.rerank:
        (first_stage,) = configuration.inputs
        queries = _query_texts(runtime, run_id, benchmark, configuration.history)
        documents = DocumentTexts(corpus_documents(benchmark))
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
            fused = fuse_runs(runs, retriever.method, retriever.weights, depth=context.depth)
            done += len(fused)
            yield done, fused
        return
    queries = _query_texts(runtime, run_id, benchmark, configuration.history)
    query_ids = sorted(queries)
    if configuration.retriever.kind == "outside":
        yield from _outside_batches(runtime, run_id, benchmark, configuration, queries, query_ids)
        return
    if configuration.retriever.kind == "bm25":
        index = bm25_index(benchmark, job.workspace(runtime))
        for start in range(0, len(query_ids), size):
            batch = query_ids[start : start + size]
            yield start + len(batch), index.search({query_id: queries[query_id] for query_id in batch}, context.depth)
        return
    embedder = _embedder(runtime, run_id, configuration.retriever.model)
    dense = _dense_index(runtime, benchmark, embedder)
    # Fixed blocks, whatever the batch size: float32 matrix products (the embedder's and the
    # search's) round differently with the shape of the block, and results must not depend on it.
    for start in range(0, len(query_ids), DENSE_QUERY_BLOCK):
        batch = query_ids[start : start + DENSE_QUERY_BLOCK]
        vectors = embedder.encode([queries[query_id] for query_id in batch])
        yield start + len(batch), dense.search(batch, vectors, context.depth)


def _outside_log(runtime: Runtime[EvaluationContext], run_id: str, configuration: Configuration) -> Path:
    return job.run_dir(runtime, run_id).file(OUTSIDE_DIR) / f"{configuration.file_stem}.jsonl"


def _outside_batches(
    runtime: Runtime[EvaluationContext],
    run_id: str,
    benchmark: Benchmark,
    configuration: Configuration,
    queries: dict[str, str],
    query_ids: list[str],
) -> Iterator[tuple[int, Run]]:
    """The user's own retriever, asked per query (in parallel, rate-limited, retried, each
    finished query logged so a resumed run does not ask it again)."""
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
        _outside_log(runtime, run_id, configuration),
        batch_size=context.batch_size,
        concurrency=context.concurrency,
        max_attempts=context.max_attempts,
        rate_limit=context.rate_limit,
    )


def _unmapped_warnings(runtime: Runtime[EvaluationContext], run_id: str, configurations: list[Any]) -> list[str]:
    """What the outside retrievers returned that the corpus lacks, one warning per configuration."""
    found = (
        unmapped_warning(c.name, _outside_log(runtime, run_id, c))
        for c in configurations
        if isinstance(c, Configuration) and c.retriever.kind == "outside"
    )
    return [warning for warning in found if warning is not None]


def measure(state: EvaluationState, runtime: Runtime[EvaluationContext]) -> EvaluationOutput:
    """Score every run file a batch of queries at a time, break down by turn, switch type and
    turn label, test the differences, report. Turns without judgments (unanswerable,
    underspecified) are left out of the measures; their top retrieved scores are compared with
    the answerable turns'."""
    context = job.context(runtime)
    benchmark = _benchmark(runtime, state["benchmark"])
    run_dir = job.run_dir(runtime, state["run_id"])
    names, nugget = measure_names(context.measures)
    recall_names = recall_cutoffs(context.depth)
    # One ir_measures pass for the table and the curve; the nugget measures in the same pass over the batches.
    measures = parse_measures([*(name for name in names if name not in nugget), *recall_names])
    configurations = _all_configurations(runtime, state)
    qrels = judgments(benchmark, context.qrels, context.extra_qrels)
    nugget_qrels = read_nugget_qrels(context.nugget_qrels) if nugget else {}
    report = progress_reporter("measure")
    unjudged = {query.id for query in benchmark.queries if query.id not in qrels}
    answerable = {
        query.id for query in benchmark.queries if query.id in qrels and query.answerability in (None, "answerable")
    }
    top_scores: dict[str, dict[str, float]] = {}
    per_query: dict[str, dict[str, dict[str, float]]] = {}
    aggregate: dict[str, dict[str, float]] = {}
    recall_curve: dict[str, dict[str, float]] = {}
    for done, (name, configuration) in enumerate(configurations.items(), start=1):
        path = _run_file(runtime, state["run_id"], configuration)
        scores = evaluate_batches_with_nuggets(
            measures, nugget, qrels, nugget_qrels, iter_run_batches(path, context.batch_size)
        )
        means = scores.aggregate
        columns = [scores.measures.index(m) for m in names]
        per_query[name] = {
            query_id: dict(zip(names, row))
            for query_id, row in zip(scores.query_ids, scores.values[:, columns].tolist())
        }
        aggregate[name] = {m: means[m] for m in names}
        recall_curve[name] = {m.removeprefix("R@"): means[m] for m in recall_names}
        if unjudged:
            top_scores[name] = _top_scores(path, context.batch_size)
        report(done, len(configurations))
    labels_of = {
        "by_answerability": {q.id: q.answerability for q in benchmark.queries if q.answerability},
        "by_question_type": {q.id: q.question_type for q in benchmark.queries if q.question_type},
        "by_standalone": {q.id: standalone_group(q.standalone) for q in benchmark.queries if q.standalone is not None},
    }
    summary = summarize_scores(
        per_query,
        aggregate,
        names,
        recall_curve,
        {q.id: q.turn for q in benchmark.queries if q.turn is not None},
        {q.id: q.switch for q in benchmark.queries if q.switch is not None},
        context.significance_test,
        context.resamples,
        context.seed,
        labels_of,
    )
    timings = (
        {row["configuration"]: row["seconds"] for row in load_jsonl(run_dir.file(TIMINGS_FILE))}
        if run_dir.file(TIMINGS_FILE).exists()
        else {}
    )
    unmapped = [
        warning
        for warning in _unmapped_warnings(runtime, state["run_id"], list(configurations.values()))
        if warning not in (state.get("warnings") or [])
    ]
    for warning in unmapped:
        report_warning(warning)
    warnings = [*(state.get("warnings") or []), *unmapped]
    results = {
        "benchmark": {
            "name": benchmark.name,
            "path": str(benchmark.directory),
            "queries": len(benchmark.queries),
            "judged_queries": len(qrels),
            "unjudged_queries": len(unjudged),
            "documents": len(corpus_documents(benchmark)),
            "conversational": benchmark.conversational,
        },
        "settings": {
            "retrievers": state["retrievers"],
            "histories": state["histories"],
            "runs": list(state.get("runs") or []),
            "depth": context.depth,
            "rerank": context.rerank,
            "rerank_depth": context.rerank_depth,
            "measures": names,
            "split": context.split,
            "qrels": context.qrels,
            "extra_qrels": context.extra_qrels,
            "nugget_qrels": context.nugget_qrels,
            "strict": context.strict,
            "rewriter": context.llm if "rewrite" in state["histories"] else None,
        },
        "configurations": [
            _describe(name, c, _run_file(runtime, state["run_id"], c).relative_to(run_dir.path), timings.get(name))
            for name, c in configurations.items()
        ],
        **summary,
        "unjudged": unjudged_summary(
            top_scores, unjudged, answerable, {q.id: q.answerability for q in benchmark.queries if q.answerability}
        ),
        "warnings": warnings,
        "notes": evaluation_notes(
            warnings=warnings,
            depth=context.depth,
            embedded_text_note=EMBEDDED_TEXT_NOTE,
            run_files=any(isinstance(c, RunFileConfiguration) for c in configurations.values()),
            rerank=context.rerank,
            rerank_depth=context.rerank_depth,
            qrels=context.qrels,
            extra_qrels=context.extra_qrels,
            nugget_qrels=context.nugget_qrels if measure_names(context.measures)[1] else None,
            conversational=benchmark.conversational,
        ),
    }
    paths = write_files_atomic(run_dir.path, evaluation_report_files(results))
    return {
        "report": {kind: str(path) for kind, path in paths.items()},
        "primary_measure": summary["primary_measure"],
        "aggregate": aggregate,
        "warnings": unmapped,
    }


def _top_scores(path: Path, batch_size: int) -> dict[str, float]:
    """``{query: its top retrieved score}`` of a run file, a batch of queries at a time."""
    return {
        query_id: max(ranking.values())
        for batch in iter_run_batches(path, batch_size)
        for query_id, ranking in batch.items()
        if ranking
    }


def _describe(name: str, configuration: AnyConfiguration, run_file: Path, seconds: float | None) -> dict[str, Any]:
    if isinstance(configuration, RunFileConfiguration):
        return {
            "name": name,
            "retriever": f"run file {configuration.path}",
            "history": "as in the run file",
            "rerank": False,
            "run_file": str(run_file),
            "source": configuration.path,
            "seconds": seconds,
        }
    return {
        "name": name,
        "retriever": configuration.retriever.label,
        "history": configuration.history.label,
        "rerank": configuration.rerank,
        "run_file": str(run_file),
        "seconds": seconds,
    }


builder = StateGraph(
    EvaluationState, context_schema=EvaluationContext, input_schema=EvaluationInput, output_schema=EvaluationOutput
)
# One process retrieves every configuration: a stage's retrievals join at gather, no worker holds any.
add_fan_out(builder, plan=plan, dispatch=dispatch, work=retrieve, finish=measure, shared_by_workers=False)
builder.add_edge("measure", END)

graph = builder.compile(name="evaluate")  # the Studio copy: no checkpointer (the server brings its own)


def evaluate_as_child(
    workspace: Workspace,
    parent_run_id: str,
    label: str,
    inputs: EvaluationInput,
    context: EvaluationContext,
    settings: dict[str, Any],
) -> EvaluationOutput:
    """Run this graph as a subgraph of a node of a job that evaluates several sets (robustness,
    validate), for the set ``label``: a child run ``inputs["run_id"]`` in the parent's ``workspace``
    with a record of its own, listed under ``parent_run_id`` by `benchsmith runs`, its progress
    streamed as ``"<label> <stage>"`` through the parent's stream. Called from a node, it checkpoints
    in the parent's thread (LangGraph's subgraph namespace), so a killed parent resumes the
    evaluation where it stopped; a child that finished before is reused from its record."""
    context = replace(context, workspace=str(workspace.root))  # the parent's, resolved: the child's nodes reuse it
    run_dir = RunDirectory(workspace, inputs["run_id"])
    record = run_dir.load() if run_dir.exists() else None
    if record is not None and record.status == "finished":
        return record.summary  # type: ignore[return-value]
    run_dir.mark_child(parent_run_id)
    run_dir.start("evaluate", settings)
    writer = get_stream_writer()
    output: dict[str, Any] = {}
    try:
        for mode, payload in graph.stream(inputs, context=context, stream_mode=["custom", "values"]):
            if mode == "values":
                output = payload
            elif "stage" in payload:
                writer({**payload, "stage": f"{label} {payload['stage']}"})
            elif "warning" in payload:
                writer({"warning": f"{label} set: {payload['warning']}"})
            else:
                writer(payload)
    except BaseException as error:
        run_dir.crash(str(error) or type(error).__name__)
        raise
    summary = {key: output[key] for key in EvaluationOutput.__annotations__ if key in output}
    run_dir.finish(summary)
    return summary  # type: ignore[return-value]
