"""The ``measure`` node: every run file scored (ir_measures, the nugget measures), broken down by turn and switch type, the differences tested, and the report written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.evals.measures.evaluation_results import recall_cutoffs, summarize_scores, unjudged_summary
from benchsmith.evals.measures.nugget_measures import evaluate_batches_with_nuggets
from benchsmith.evals.measures.standard import parse_measures
from benchsmith.evals.reports.evaluation_report import evaluation_notes, evaluation_report_files
from benchsmith.graphs.contexts.evaluate import DEFAULT_DEPTH, EvaluationContext  # noqa: F401 (re-exported)
from benchsmith.graphs.evaluate.inputs import _all_configurations, _benchmark, _run_file, job, judgments, measure_names
from benchsmith.graphs.evaluate.outside import unmapped_warnings
from benchsmith.graphs.evaluate.state import TIMINGS_FILE, AnyConfiguration, EvaluationOutput, EvaluationState
from benchsmith.graphs.runtime.corpus_indexes import (
    corpus_documents,
)
from benchsmith.graphs.runtime.progress import progress_reporter, report_warning
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.nugget_qrels import read_nugget_qrels
from benchsmith.stores.formats.trec import (
    iter_run_batches,
)
from benchsmith.stores.formats.turn_labels import standalone_group
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.tools.retrieval.embedded_text import EMBEDDED_TEXT_NOTE
from benchsmith.tools.retrieval.retriever_specs import (
    RunFileConfiguration,
)


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
    nugget_qrels = {}
    if nugget:
        if context.nugget_qrels is None:
            raise InputError(f"the nugget measures ({', '.join(sorted(nugget))}) need nugget qrels (--nugget-qrels)")
        nugget_qrels = read_nugget_qrels(context.nugget_qrels)
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
    labels_of: dict[str, dict[str, str]] = {
        "by_answerability": {q.id: label for q in benchmark.queries if (label := q.answerability)},
        "by_question_type": {q.id: label for q in benchmark.queries if (label := q.question_type)},
        "by_standalone": {q.id: label for q in benchmark.queries if (label := standalone_group(q.standalone))},
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
        for warning in unmapped_warnings(runtime, state["run_id"], list(configurations.values()))
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
    return {
        "report": run_dir.write_report(evaluation_report_files(results)),
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
