"""Retriever evaluation (the MTR-Bench protocol) on any benchmark.

    plan ─→ dispatch ─→ Send × configurations of the next stage ─→ retrieve ─→ gather ─┐
              ↑ └────────────────────── (nothing left) ──→ measure ─→ END             │
              └──────────────────────────────────────────────────────────────────────┘

A configuration is a retriever (bm25, dense[:MODEL], hybrid fusion) × a history mode (full,
last:K, current, rewrite, oracle), optionally reranked. Stages run in order: first-stage
retrievers, then fusions of their runs, then reranking. Each configuration writes one TREC
run file into the run directory; a run file that exists is reused, never recomputed, so a
killed evaluation resumes where it stopped. ``measure`` scores every run with ir_measures,
breaks the scores down by turn and switch type, tests the differences, and writes
``report.md``, ``report.html`` and ``results.json``.

State holds configuration names only; queries, corpus and runs live in files.
"""

from __future__ import annotations

import operator
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from benchsmith.agents.models import ModelSeam
from benchsmith.agents.rewriter import Rewriter
from benchsmith.evals.evaluation_report import evaluation_report_files
from benchsmith.evals.evaluation_results import recall_cutoffs, summarize_scores
from benchsmith.evals.measures import DEFAULT_MEASURES, evaluate_run, parse_measures
from benchsmith.evals.significance import DEFAULT_RESAMPLES
from benchsmith.graphs.corpus_indexes import (bm25_index, cached_benchmark, corpus_documents, dense_index,
                                              document_text)
from benchsmith.graphs.progress import progress_reporter, report_reused
from benchsmith.graphs.resources import (ModelOptions, StoreOptions, embedder_for, run_seam, scorer_for,
                                         workspace_of)
from benchsmith.stores.beir import Benchmark, BenchmarkQuery, merge_qrels, read_beir_qrels
from benchsmith.stores.errors import InputError
from benchsmith.stores.files import write_files_atomic
from benchsmith.stores.jsonl import append_jsonl, load_jsonl, write_jsonl_atomic
from benchsmith.stores.runs import RunDirectory
from benchsmith.stores.trec import Run, read_trec_run, write_trec_run
from benchsmith.stores.workspace import Workspace
from benchsmith.tools.dense_retrieval import DenseIndex
from benchsmith.tools.embedding import DEFAULT_EMBEDDER, Embedder
from benchsmith.tools.fusion import fuse_runs
from benchsmith.tools.query_building import HistoryMode, build_query, parse_history_mode
from benchsmith.tools.rerank import DEFAULT_RERANK_DEPTH, rerank_run
from benchsmith.tools.retriever_specs import Configuration, expand_configurations, parse_retriever

RUN_FILES_DIR, QUERIES_DIR, TIMINGS_FILE = "run-files", "queries", "timings.jsonl"
DEFAULT_DEPTH = 1000


@dataclass(kw_only=True)
class EvaluationContext(StoreOptions, ModelOptions):
    """Settings of one evaluation (not checkpointed: the CLI passes them again on resume)."""

    split: str = field(default="test", metadata={"description": "BEIR qrels split (qrels/<split>.tsv)."})
    extra_qrels: str | None = field(default=None, metadata={
        "description": "More judgments (query-id, corpus-id, score TSV) merged in, e.g. an audit's extra_qrels.tsv."})
    depth: int = field(default=DEFAULT_DEPTH, metadata={"description": "Documents retrieved per query."})
    measures: tuple[str, ...] = field(default=DEFAULT_MEASURES, metadata={
        "description": "ir_measures measures (nDCG@10, R@100, RR@10, AP, Judged@10, ...)."})
    embedder: str = field(default=DEFAULT_EMBEDDER, metadata={
        "description": "Embedder of the 'dense' retriever (dense:MODEL names its own): a sentence-transformers "
                       "name or path, or a registered name."})
    rerank_model: str | None = field(default=None, metadata={
        "description": "Also rerank each configuration's top rerank_depth with this CrossEncoder (name, path or "
                       "registered name); empty: no reranking."})
    rerank_depth: int = field(default=DEFAULT_RERANK_DEPTH, metadata={
        "description": "Documents per query the reranker re-scores."})
    llm: str = field(default="baseline", metadata={
        "description": "The rewriter's model for the 'rewrite' history: 'baseline', openai:<model> or a registered name."})
    concurrency: int = field(default=4, metadata={"description": "Rewriter calls in flight."})
    significance_test: Literal["randomization", "t-test"] = field(default="randomization", metadata={
        "description": "Paired test between configurations (Holm-corrected over all pairs)."})
    resamples: int = field(default=DEFAULT_RESAMPLES, metadata={
        "description": "Resamples of the randomization test."})


class EvaluationInput(TypedDict):
    run_id: str
    benchmark: str  # a BEIR directory, a synthesis run directory or a run id
    retrievers: list[str]
    histories: list[str]


class EvaluationOutput(TypedDict, total=False):
    run_id: str
    report: dict[str, str]  # {"markdown", "html", "results"}: paths
    primary_measure: str
    aggregate: dict[str, dict[str, float]]  # {configuration: {measure: mean}}


class EvaluationState(EvaluationInput, EvaluationOutput, total=False):
    configurations: list[str]  # names, stage order
    finished: Annotated[list[str], operator.add]


class RetrievalTask(TypedDict):
    run_id: str
    benchmark: str
    configuration: str
    retrievers: list[str]
    histories: list[str]


# ---------------------------------------------------------------------------------------
# Inputs, opened once per process.

def _context(runtime: Runtime[EvaluationContext]) -> EvaluationContext:
    return runtime.context or EvaluationContext()


def _workspace(runtime: Runtime[EvaluationContext]) -> Workspace:
    return workspace_of(_context(runtime))


def _benchmark(runtime: Runtime[EvaluationContext], spec: str) -> Benchmark:
    return cached_benchmark(spec, _workspace(runtime), _context(runtime).split)


def _embedder(runtime: Runtime[EvaluationContext], run_id: str, model: str | None) -> Embedder:
    return embedder_for(model or _context(runtime).embedder, _workspace(runtime), run_id, _context(runtime))


def _dense_index(runtime: Runtime[EvaluationContext], benchmark: Benchmark, embedder: Embedder) -> DenseIndex:
    return dense_index(_workspace(runtime), _context(runtime).chroma_host, benchmark, embedder)


# ---------------------------------------------------------------------------------------
# Queries per history mode, written once per run.

def _seam(runtime: Runtime[EvaluationContext], run_id: str) -> ModelSeam:
    context = _context(runtime)
    return run_seam(_workspace(runtime), run_id, context.llm, context)


_query_lock = threading.Lock()


def _query_texts(runtime: Runtime[EvaluationContext], run_id: str, benchmark: Benchmark,
                 history: HistoryMode) -> dict[str, str]:
    """``{query id: text}`` for a history mode, from ``queries/<mode>.jsonl`` when written."""
    path = RunDirectory(_workspace(runtime), run_id).file(QUERIES_DIR) / f"{history.label.replace(':', '-')}.jsonl"
    with _query_lock:
        if path.exists():
            return {record["_id"]: record["text"] for record in load_jsonl(path)}
        rewrite = None
        if history.kind == "rewrite":
            seam, rewriter = _seam(runtime, run_id), Rewriter()

            def rewrite(turns: list[tuple[str, str]], question: str) -> str:
                return seam.run(rewriter, history=turns, question=question).query

        texts = _build_all(benchmark.queries, history, rewrite, _context(runtime).concurrency,
                           progress_reporter(f"queries {history.label}"))
        write_jsonl_atomic(path, ({"_id": query_id, "text": text} for query_id, text in texts.items()))
        return texts


def _build_all(queries: list[BenchmarkQuery], history: HistoryMode, rewrite: Any, concurrency: int,
               report: Any) -> dict[str, str]:
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
    return _context(runtime).rerank_model is not None


def _all_configurations(runtime: Runtime[EvaluationContext], retrievers: list[str],
                        histories: list[str]) -> dict[str, Configuration]:
    """Every configuration the settings ask for (and the ones fusions need), by name, in stage order."""
    configurations = expand_configurations([parse_retriever(spec) for spec in retrievers],
                                           [parse_history_mode(mode) for mode in histories], _reranking(runtime))
    return {configuration.name: configuration for configuration in configurations}


def _run_file(runtime: Runtime[EvaluationContext], run_id: str, configuration: Configuration) -> Path:
    return RunDirectory(_workspace(runtime), run_id).file(RUN_FILES_DIR) / f"{configuration.file_stem}.trec"


def plan(state: EvaluationState, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
    """Check the benchmark and the settings before any work, and list the configurations."""
    benchmark = _benchmark(runtime, state["benchmark"])
    parse_measures(_context(runtime).measures)
    if _context(runtime).extra_qrels:
        read_beir_qrels(Path(_context(runtime).extra_qrels))  # a bad file stops here, before any retrieval
    configurations = _all_configurations(runtime, state["retrievers"], state["histories"])
    if any(c.history.kind == "oracle" for c in configurations.values()):
        if missing := next((query.id for query in benchmark.queries if not query.rewrite), None):
            raise InputError(f"--history oracle needs each query's metadata.rewrite; query {missing!r} of "
                             f"{benchmark.directory / 'queries.jsonl'} has none")
    return {"configurations": list(configurations)}


def dispatch(state: EvaluationState, runtime: Runtime[EvaluationContext]) -> list[Send] | Literal["measure"]:
    """The configurations of the earliest stage that still lack run files; measure when none do."""
    configurations = _all_configurations(runtime, state["retrievers"], state["histories"])
    pending = [c for c in configurations.values() if not _run_file(runtime, state["run_id"], c).exists()]
    if not pending:
        return "measure"
    stage = min(configuration.stage for configuration in pending)
    return [Send("retrieve", {"run_id": state["run_id"], "benchmark": state["benchmark"], "configuration": c.name,
                              "retrievers": state["retrievers"], "histories": state["histories"]})
            for c in pending if c.stage == stage]


def retrieve(task: RetrievalTask, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
    """One configuration's run (retrieved, fused or reranked), written as a TREC run file."""
    configuration = _all_configurations(runtime, task["retrievers"], task["histories"])[task["configuration"]]
    path = _run_file(runtime, task["run_id"], configuration)
    if path.exists():  # finished before a crash: reused, never recomputed
        report_reused(configuration.name)
        return {"finished": [configuration.name]}
    started = time.perf_counter()
    run = _compute_run(runtime, task["run_id"], _benchmark(runtime, task["benchmark"]), configuration)
    write_trec_run(path, run, tag=configuration.name)
    append_jsonl(RunDirectory(_workspace(runtime), task["run_id"]).file(TIMINGS_FILE),
                 {"configuration": configuration.name, "seconds": round(time.perf_counter() - started, 3)})
    return {"finished": [configuration.name]}


def gather(state: EvaluationState) -> dict[str, Any]:
    """Joins a stage's parallel retrievals before the next stage is dispatched."""
    return {}


def _compute_run(runtime: Runtime[EvaluationContext], run_id: str, benchmark: Benchmark,
                 configuration: Configuration) -> Run:
    context = _context(runtime)
    label = configuration.name
    if configuration.rerank:
        (first_stage,) = configuration.inputs
        run = read_trec_run(_run_file(runtime, run_id, first_stage))
        queries = _query_texts(runtime, run_id, benchmark, configuration.history)
        documents = {doc_id: document_text(title, text) for doc_id, (title, text) in corpus_documents(benchmark).items()}
        scorer = scorer_for(context.rerank_model)
        return rerank_run(run, queries, documents, scorer, context.rerank_depth, progress_reporter(label))
    if configuration.retriever.kind == "hybrid":
        runs = [read_trec_run(_run_file(runtime, run_id, component)) for component in configuration.inputs]
        fused = fuse_runs(runs, configuration.retriever.method, configuration.retriever.weights, depth=context.depth)
        progress_reporter(label)(len(fused), len(fused))
        return fused
    queries = _query_texts(runtime, run_id, benchmark, configuration.history)
    if configuration.retriever.kind == "bm25":
        index = bm25_index(benchmark)
        return index.search(queries, context.depth, progress_reporter(label))
    embedder = _embedder(runtime, run_id, configuration.retriever.model)
    index = _dense_index(runtime, benchmark, embedder)
    query_ids = list(queries)
    vectors = embedder.encode([queries[query_id] for query_id in query_ids])
    return index.search(query_ids, vectors, context.depth, progress_reporter(label))


def measure(state: EvaluationState, runtime: Runtime[EvaluationContext]) -> EvaluationOutput:
    """Score every run file, break down by turn and switch type, test the differences, report."""
    context = _context(runtime)
    benchmark = _benchmark(runtime, state["benchmark"])
    run_dir = RunDirectory(_workspace(runtime), state["run_id"])
    names = [str(m) for m in parse_measures(context.measures)]
    recall_names = recall_cutoffs(context.depth)
    measures = parse_measures([*names, *recall_names])  # one ir_measures pass for the table and the curve
    configurations = _all_configurations(runtime, state["retrievers"], state["histories"])
    qrels = merge_qrels(benchmark.qrels, read_beir_qrels(Path(context.extra_qrels))) if context.extra_qrels \
        else benchmark.qrels
    report = progress_reporter("measure")
    per_query: dict[str, dict[str, dict[str, float]]] = {}
    aggregate: dict[str, dict[str, float]] = {}
    recall_curve: dict[str, dict[str, float]] = {}
    for done, (name, configuration) in enumerate(configurations.items(), start=1):
        scores = evaluate_run(measures, qrels, read_trec_run(_run_file(runtime, state["run_id"], configuration)))
        per_query[name] = {query_id: {m: values[m] for m in names} for query_id, values in scores.per_query.items()}
        aggregate[name] = {m: scores.aggregate[m] for m in names}
        recall_curve[name] = {m.removeprefix("R@"): scores.aggregate[m] for m in recall_names}
        report(done, len(configurations))
    summary = summarize_scores(per_query, aggregate, names, recall_curve,
                               {q.id: q.turn for q in benchmark.queries if q.turn is not None},
                               {q.id: q.switch for q in benchmark.queries if q.switch is not None},
                               context.significance_test, context.resamples, context.seed)
    timings = {row["configuration"]: row["seconds"] for row in load_jsonl(run_dir.file(TIMINGS_FILE))} \
        if run_dir.file(TIMINGS_FILE).exists() else {}
    results = {
        "benchmark": {"name": benchmark.name, "path": str(benchmark.directory), "queries": len(benchmark.queries),
                      "judged_queries": len(qrels), "documents": len(corpus_documents(benchmark)),
                      "conversational": benchmark.conversational},
        "settings": {"retrievers": state["retrievers"], "histories": state["histories"], "depth": context.depth,
                     "rerank": context.rerank_model, "rerank_depth": context.rerank_depth, "measures": names,
                     "split": context.split, "extra_qrels": context.extra_qrels,
                     "rewriter": context.llm if "rewrite" in state["histories"] else None},
        "configurations": [{"name": name, "retriever": c.retriever.label, "history": c.history.label,
                            "rerank": c.rerank,
                            "run_file": str(_run_file(runtime, state["run_id"], c).relative_to(run_dir.path)),
                            "seconds": timings.get(name)} for name, c in configurations.items()],
        **summary,
        "notes": _notes(context, benchmark),
    }
    paths = write_files_atomic(run_dir.path, evaluation_report_files(results))
    return {"report": {kind: str(path) for kind, path in paths.items()}, "primary_measure": summary["primary_measure"],
            "aggregate": aggregate}


def _notes(context: EvaluationContext, benchmark: Benchmark) -> list[str]:
    notes = [
        f"Each configuration retrieves the top {context.depth} documents per query; a judged query with no "
        "retrieved document counts as 0 on every measure.",
        "History modes: full = every earlier turn as User:/Agent: lines, then the question; last:K = the last K "
        "turns only; current = the question alone; rewrite = a model's self-contained rewrite (CQR); oracle = the "
        "benchmark's own self-contained rewrite.",
        "BM25: bm25s, Lucene scoring, k1 = 1.5, b = 0.75, lower-cased words, English stopwords removed, Snowball "
        "stemming. Dense: exact inner product of L2-normalized embeddings.",
        "Fusion with ranx after sorting each run by score: RRF with k = 60; combsum and wsum over min-max "
        "normalized scores.",
    ]
    if context.rerank_model:
        notes.append(f"+rerank: the top {context.rerank_depth} of the configuration re-scored by the cross-encoder "
                     f"{context.rerank_model}.")
    if context.extra_qrels:
        notes.append(f"Relevance judgments include the extra ones in {context.extra_qrels}.")
    if not benchmark.conversational:
        notes.append("The benchmark is single-turn: history modes other than oracle send the query text as is.")
    return notes


builder = StateGraph(EvaluationState, context_schema=EvaluationContext, input_schema=EvaluationInput,
                     output_schema=EvaluationOutput)
builder.add_node("plan", plan)
builder.add_node("retrieve", retrieve)
builder.add_node("gather", gather)
builder.add_node("measure", measure)
builder.add_edge(START, "plan")
builder.add_conditional_edges("plan", dispatch, ["retrieve", "measure"])
builder.add_edge("retrieve", "gather")
builder.add_conditional_edges("gather", dispatch, ["retrieve", "measure"])
builder.add_edge("measure", END)

# The Studio copy: compiled without a checkpointer (the server brings its own).
graph = builder.compile()
graph.name = "evaluate"
