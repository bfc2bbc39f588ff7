"""``benchsmith.evaluate``: score retrievers on a benchmark with standard IR measures, per turn
and per switch type (the MTR-Bench protocol); and ``measure_runs``, the measures of existing
TREC run files."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.agents.models import BASELINE, estimate_tokens
from benchsmith.agents.rewriter import Rewriter
from benchsmith.evals.measures import DEFAULT_MEASURES, MeasureResults, UnknownMeasure, evaluate_run, parse_measures
from benchsmith.graphs.jobs.common import (CostEstimate, EventHandler, JobRun, check_at_least, check_embedders,
                                           check_models, checked_run_id, job_run, priced, resolved_path,
                                           retriever_embedders, workspace_for)
from benchsmith.stores.beir import Benchmark
from benchsmith.stores.errors import InputError
from benchsmith.stores.workspace import Workspace
from benchsmith.tools.embedding import DEFAULT_EMBEDDER
from benchsmith.tools.query_building import parse_history_mode
from benchsmith.tools.rerank import DEFAULT_RERANK_DEPTH
from benchsmith.tools.retriever_specs import expand_configurations, parse_retriever

DEFAULT_RETRIEVERS = ("dense", "bm25", "hybrid:rrf(dense,bm25)")
DEFAULT_HISTORIES = ("full",)
DEFAULT_DEPTH = 1000
SIGNIFICANCE_TESTS = ("randomization", "t-test")
REWRITE_OUTPUT_TOKENS = 40


@dataclass(frozen=True)
class EvaluationResult(JobRun):
    measures: list[str] = field(default_factory=list)
    primary_measure: str = ""
    aggregate: dict[str, dict[str, float]] = field(default_factory=dict)  # {configuration: {measure: mean}}
    report: dict[str, Path] = field(default_factory=dict)  # markdown, html, results

    def results(self) -> dict[str, Any]:
        """Everything ``results.json`` holds: per-query values, per-turn and per-switch means,
        the recall curve and the significance tests."""
        return json.loads(self.report["results"].read_text(encoding="utf-8"))


def checked_measures(names: Sequence[str] | None) -> list[str]:
    try:
        return [str(measure) for measure in parse_measures(list(names or DEFAULT_MEASURES))]
    except UnknownMeasure as error:
        raise InputError(str(error)) from None


def evaluate(benchmark: str | Path, *, retrievers: Sequence[str] = DEFAULT_RETRIEVERS,
             histories: Sequence[str] = DEFAULT_HISTORIES, rerank: str | None = None,
             rerank_depth: int = DEFAULT_RERANK_DEPTH, depth: int = DEFAULT_DEPTH,
             measures: Sequence[str] | None = None, split: str = "test", extra_qrels: str | Path | None = None,
             llm: str = BASELINE, test: str = "randomization", embedder: str = DEFAULT_EMBEDDER,
             concurrency: int = 4, requests_per_second: float | None = None, timeout_s: float = 60.0,
             max_attempts: int = 6, structured_output: str = "auto", workspace: str | Path | None = None,
          chroma_host: str | None = None,
             run_id: str | None = None, on_event: EventHandler | None = None,
             resume: str | None = None) -> EvaluationResult:
    """Evaluate every retriever × history configuration on ``benchmark`` (a BEIR directory, a
    synthesis run directory or run id). The same call with the same ``run_id`` resumes."""
    from benchsmith.graphs.evaluate import EvaluationContext, builder
    from benchsmith.graphs.runner import run_job

    resolved = workspace_for(workspace)
    settings = _checked_settings(resolved, benchmark, retrievers, histories, rerank, rerank_depth, depth, measures,
                                 split, extra_qrels, llm, test)
    check_at_least(1, concurrency=concurrency)
    check_embedders(embedder, *retriever_embedders(retrievers))
    run_id = checked_run_id(run_id, "evaluate")
    context = EvaluationContext(
        workspace=str(resolved.root), chroma_host=chroma_host, split=split, depth=depth,
        measures=tuple(settings["measures"]), rerank_model=rerank, rerank_depth=rerank_depth, llm=llm,
        embedder=embedder, requests_per_second=requests_per_second, timeout_s=timeout_s, max_attempts=max_attempts,
        structured_output=structured_output,
        concurrency=concurrency, significance_test=test, extra_qrels=settings["extra_qrels"])
    context.model_settings()  # an impossible model setting stops here, before the run exists
    outcome = run_job(builder, job="evaluate", workspace=resolved, run_id=run_id,
                      inputs={"run_id": run_id, "benchmark": settings["benchmark"],
                              "retrievers": settings["retrievers"], "histories": settings["histories"]},
                      context=context, settings=settings, on_event=on_event, max_concurrency=1, resume=resume)
    values = outcome.values
    return EvaluationResult(**job_run(outcome), measures=settings["measures"],
                            primary_measure=values["primary_measure"], aggregate=values["aggregate"],
                            report={kind: Path(path) for kind, path in values["report"].items()})


def _checked_settings(workspace: Workspace, benchmark: str | Path, retrievers: Sequence[str], histories: Sequence[str],
                      rerank: str | None, rerank_depth: int, depth: int, measures: Sequence[str] | None, split: str,
                      extra_qrels: str | Path | None, llm: str, test: str) -> dict[str, Any]:
    """The run's settings, every one checked (the benchmark loaded) before any work starts."""
    from benchsmith.graphs.corpus_indexes import cached_benchmark
    from benchsmith.stores.beir import read_beir_qrels

    if not retrievers or not histories:
        raise InputError("give at least one --retriever and one --history")
    for spec in retrievers:
        parse_retriever(spec)
    history_modes = [parse_history_mode(mode) for mode in histories]
    if test not in SIGNIFICANCE_TESTS:
        raise InputError(f"--test must be one of {', '.join(SIGNIFICANCE_TESTS)}, got {test!r}")
    check_models(llm)
    check_at_least(1, depth=depth, rerank_depth=rerank_depth)
    names = checked_measures(measures)
    loaded = cached_benchmark(resolved_path(str(benchmark)), workspace, split)
    if any(mode.kind == "oracle" for mode in history_modes):
        if missing := next((query.id for query in loaded.queries if not query.rewrite), None):
            raise InputError(f"--history oracle needs each query's metadata.rewrite; query {missing!r} of "
                             f"{loaded.directory / 'queries.jsonl'} has none")
    if extra_qrels is not None:
        read_beir_qrels(Path(extra_qrels))
    return {"benchmark": resolved_path(str(benchmark)), "retrievers": list(retrievers), "histories": list(histories),
            "rerank": rerank, "rerank_depth": rerank_depth, "depth": depth, "measures": names, "split": split,
            "llm": llm, "test": test, "extra_qrels": str(Path(extra_qrels).resolve()) if extra_qrels else None}


def estimate_evaluation(benchmark: str | Path, *, retrievers: Sequence[str] = DEFAULT_RETRIEVERS,
                        histories: Sequence[str] = DEFAULT_HISTORIES, rerank: str | None = None,
                        split: str = "test", llm: str = BASELINE, workspace: str | Path | None = None) -> CostEstimate:
    """The configurations an evaluation would run, and the model cost of the rewrite history."""
    from benchsmith.graphs.corpus_indexes import cached_benchmark

    loaded: Benchmark = cached_benchmark(resolved_path(str(benchmark)), workspace_for(workspace), split)
    modes = [parse_history_mode(mode) for mode in histories]
    configurations = expand_configurations([parse_retriever(spec) for spec in retrievers], modes, rerank is not None)
    check_models(llm)
    rewrites = len(loaded.queries) if any(mode.kind == "rewrite" for mode in modes) else 0
    rewriter = Rewriter()
    input_tokens = sum(estimate_tokens("".join(m["content"] for m in rewriter.messages(
        history=query.history, question=query.question))) for query in loaded.queries) if rewrites else 0
    notes = [f"configurations: {', '.join(configuration.name for configuration in configurations)}",
             f"{len(loaded.queries):,} queries ({len(loaded.qrels):,} judged)"]
    return priced(f"{len(configurations)} configurations on {loaded.name}",
                  [(llm, rewrites, input_tokens, REWRITE_OUTPUT_TOKENS * rewrites)], notes)


def measure_runs(run_files: Sequence[str | Path], qrels: str | Path,
                 measures: Sequence[str] | None = None) -> dict[str, MeasureResults]:
    """The measures of existing TREC run files against TREC qrels, by file path."""
    from benchsmith.stores.trec import read_trec_qrels, read_trec_run

    measure_objects = parse_measures(checked_measures(measures))
    judged = read_trec_qrels(qrels)
    return {str(path): evaluate_run(measure_objects, judged, read_trec_run(path)) for path in run_files}
