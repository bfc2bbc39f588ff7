"""``benchsmith.evaluate``: score retrievers, and the user's own TREC run files, on a benchmark
with standard IR measures, per turn and per switch type (the MTR-Bench protocol), and with the
nugget measures Coverage@k and alpha_nDCG@k given nugget qrels; and ``measure_runs``, the
measures of existing TREC run files against qrels or nugget qrels alone."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from benchsmith.agents.defaults import BASELINE, StructuredOutput
from benchsmith.agents.rewriter import Rewriter
from benchsmith.agents.seam.backends import estimate_tokens
from benchsmith.evals.defaults import DEFAULT_MEASURES, DEFAULT_QUERIES_PER_BATCH, DEFAULT_SIGNIFICANCE_RESAMPLES
from benchsmith.evals.measures.nugget_measures import (
    DEFAULT_NUGGET_MEASURES,
    UnknownNuggetMeasure,
    check_nugget_measures,
    evaluate_batches_with_nuggets,
    is_nugget_measure,
    query_qrels,
    split_measures,
)
from benchsmith.evals.measures.standard import MeasureResults, UnknownMeasure, parse_measures
from benchsmith.graphs.contexts.evaluate import DEFAULT_DEPTH, EvaluationContext
from benchsmith.graphs.evaluate.graph import builder
from benchsmith.graphs.evaluate.inputs import input_problems, judgments
from benchsmith.graphs.runtime.bounds import MAX_ITEMS
from benchsmith.graphs.runtime.corpus_indexes import cached_benchmark, corpus_documents
from benchsmith.graphs.runtime.ray_items import prepare as prepare_ray
from benchsmith.graphs.runtime.ray_items import where_items_run
from benchsmith.graphs.runtime.resources import check_reranker
from benchsmith.graphs.runtime.settings import accepts_old_setting_names, check_bounds, settings_given
from benchsmith.jobs.common import (
    CostEstimate,
    EventHandler,
    JobRun,
    check_embedders,
    check_models,
    check_within,
    estimate_of,
    job_result,
    priced,
    resolved_path,
    retriever_embedders,
    run_settled,
    stop_if_dry_run,
)
from benchsmith.jobs.defaults import EVALUATE_BATCH_SIZE, EVALUATE_HISTORIES, EVALUATE_RETRIEVERS
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import read_qrels
from benchsmith.stores.formats.integrity import raise_if_strict
from benchsmith.stores.formats.nugget_qrels import read_nugget_qrels
from benchsmith.stores.formats.trec import iter_run_batches, run_file_query_ids, write_sorted_copy
from benchsmith.stores.persistence.jsonl import read_json_object
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.defaults import DEFAULT_EMBEDDER
from benchsmith.tools.retrieval.outside_retrievers import resolve_retriever, spec_for
from benchsmith.tools.retrieval.query_building import parse_history_mode, require_oracle_rewrites
from benchsmith.tools.retrieval.rerank import DEFAULT_RERANK_DEPTH
from benchsmith.tools.retrieval.retriever_specs import (
    RetrieverSpec,
    check_outside_retrievers,
    expand_configurations,
    parse_retriever,
    run_file_configurations,
)

SIGNIFICANCE_TESTS = ("randomization", "t-test")
REWRITE_OUTPUT_TOKENS = 40


@dataclass(frozen=True)
class EvaluationResult(JobRun):
    measures: list[str] = field(default_factory=list)
    primary_measure: str = ""
    aggregate: dict[str, dict[str, float]] = field(default_factory=dict)  # {configuration: {measure: mean}}
    report: dict[str, Path] = field(default_factory=dict)  # markdown, html, results
    warnings: list[str] = field(default_factory=list)  # unknown and duplicate ids found in the inputs

    def results(self) -> dict[str, Any]:
        """Everything ``results.json`` holds: per-query values, per-turn and per-switch means,
        the recall curve and the significance tests."""
        return read_json_object(self.report["results"])


def checked_measures(names: Sequence[str] | None, nugget_qrels: bool = False) -> list[str]:
    """The measures, each checked, in the given order, as ir_measures names them; Coverage@k and
    alpha_nDCG@k need nugget qrels (and are among the defaults when there are some)."""
    requested = list(names or (*DEFAULT_MEASURES, *(DEFAULT_NUGGET_MEASURES if nugget_qrels else ())))
    checked: list[str] = []
    try:
        for name in requested:
            if not is_nugget_measure(name):
                checked += [str(measure) for measure in parse_measures([name])]
            elif nugget_qrels:
                checked += check_nugget_measures([name])
            else:
                raise InputError(f"{name} needs nugget qrels: give --nugget-qrels FILE (qid nugget_id doc_id label)")
    except (UnknownMeasure, UnknownNuggetMeasure) as error:
        raise InputError(str(error)) from None
    return list(dict.fromkeys(checked))


@accepts_old_setting_names
def evaluate(
    benchmark: str | Path,
    *,
    retrievers: Sequence[str | Any] | None = None,
    histories: Sequence[str] = EVALUATE_HISTORIES,
    runs: Sequence[str | Path] = (),
    run_id: str | None = None,
    on_event: EventHandler | None = None,
    resume: str | None = None,
    split: str = "test",
    qrels: str | None = None,
    extra_qrels: str | None = None,
    nugget_qrels: str | None = None,
    measures: tuple[str, ...] = DEFAULT_MEASURES,
    concurrency: int = 4,
    significance_test: Literal["randomization", "t-test"] = "randomization",
    resamples: int = DEFAULT_SIGNIFICANCE_RESAMPLES,
    batch_size: int = DEFAULT_QUERIES_PER_BATCH,
    strict: bool = False,
    depth: int = DEFAULT_DEPTH,
    embedder: str = DEFAULT_EMBEDDER,
    llm: str = BASELINE,
    rerank: str | None = None,
    rerank_depth: int = DEFAULT_RERANK_DEPTH,
    seed: int = 0,
    rate_limit: float | None = None,
    timeout_s: float = 60.0,
    max_attempts: int = 6,
    structured_output: StructuredOutput = "auto",
    workspace: str | None = None,
    chroma_host: str | None = None,
    database: str | None = None,
    ray: str | None = None,
) -> EvaluationResult:
    """Evaluate every retriever × history configuration, and each TREC run file in ``runs``
    (a configuration named by its file name), on ``benchmark`` (a BEIR directory, a synthesis
    run directory or run id); every setting of :class:`EvaluationContext` is a keyword argument
    too. ``retrievers`` defaults to dense, BM25 and their RRF fusion, or to none when ``runs`` are
    given. ``nugget_qrels`` (``qid nugget_id doc_id label``, a nuggets run's
    ``nugget-qrels.trec``) scores the measures Coverage@k and alpha_nDCG@k beside the others.
    Unknown or duplicate ids in the inputs are warnings (``EvaluationResult.warnings``, events
    ``{"warning": ...}``), errors when ``strict``. The same call with the same ``run_id``
    resumes; ``database`` keeps the run's checkpoints, model cache, usage and record in
    PostgreSQL."""
    settings = settings_given(EvaluationContext, locals())

    resolved = Workspace.resolve(settings.workspace)
    if retrievers is None:
        retrievers = () if runs else EVALUATE_RETRIEVERS
    retrievers = [spec_for(retriever) for retriever in retrievers]  # your own objects: registered by name
    check_bounds(settings)
    inputs, context = _checked_settings(resolved, benchmark, retrievers, histories, runs, settings)
    stop_if_dry_run(lambda: _estimate(resolved, inputs, context))
    check_embedders(context.embedder, *retriever_embedders(retrievers))
    prepare_ray(context.ray)  # a cluster that cannot be joined stops here, before the run exists
    outcome = run_settled(
        builder,
        "evaluate",
        resolved,
        inputs,
        context,
        run_id=run_id,
        on_event=on_event,
        resume=resume,
        max_concurrency=1,
    )
    return job_result(EvaluationResult, outcome, measures=list(context.measures))


def _checked_settings(
    workspace: Workspace,
    benchmark: str | Path,
    retrievers: Sequence[str],
    histories: Sequence[str],
    runs: Sequence[str | Path],
    settings: EvaluationContext,
) -> tuple[dict[str, Any], EvaluationContext]:
    """The run's inputs, and its settings with paths made absolute and measures checked, every one
    checked (the benchmark loaded) before any work starts."""

    if not retrievers and not runs:
        raise InputError("give at least one --retriever or --run")
    if retrievers and not histories:
        raise InputError("give at least one --history")
    specs = [parse_retriever(spec) for spec in retrievers]
    check_outside_retrievers(specs)
    history_modes = [parse_history_mode(mode) for mode in histories]
    run_files = [str(Path(path).resolve()) for path in runs]
    for path in run_files:
        run_file_query_ids(path)  # a missing, empty or malformed run file stops here, before the run exists
    rerank = settings.rerank
    configurations = expand_configurations(specs, history_modes, rerank is not None) if specs else []
    run_file_configurations(run_files, taken={configuration.name for configuration in configurations})
    if settings.significance_test not in SIGNIFICANCE_TESTS:
        raise InputError(
            f"--significance-test must be one of {', '.join(SIGNIFICANCE_TESTS)}, got {settings.significance_test!r}"
        )
    check_models(settings.llm)
    if rerank is not None:
        check_reranker(rerank)
    # The default measures, unless told otherwise, gain the nugget measures when there are nugget qrels.
    asked = None if tuple(settings.measures) == DEFAULT_MEASURES else settings.measures
    names = checked_measures(asked, settings.nugget_qrels is not None)
    loaded = cached_benchmark(resolved_path(str(benchmark)), workspace, settings.split)
    corpus_documents(loaded)  # a malformed corpus stops here (read once: the run reuses it)
    if specs:
        require_oracle_rewrites(loaded, history_modes)
    qrels_file, extra_file, nugget_file = (
        str(Path(path).resolve()) if path else None
        for path in (settings.qrels, settings.extra_qrels, settings.nugget_qrels)
    )
    judgments(loaded, qrels_file, extra_file)  # unreadable judgments stop here
    if nugget_file:
        read_nugget_qrels(nugget_file)
    if settings.strict:
        raise_if_strict(input_problems(loaded, qrels_file, extra_file, run_files, nugget_file), strict=True)
    inputs = {
        "benchmark": resolved_path(str(benchmark)),
        "retrievers": list(retrievers),
        "histories": list(histories) if retrievers else [],
        "runs": run_files,
    }
    return inputs, replace(
        settings, measures=tuple(names), qrels=qrels_file, extra_qrels=extra_file, nugget_qrels=nugget_file
    )


def outside_notes(specs: Sequence[RetrieverSpec], histories: Sequence[str], queries: int) -> list[str]:
    """The dry run's lines on the user's own retrievers: what each is, how its query is built, and
    the calls it costs (each finished query is logged and never asked again on resume)."""
    notes = []
    for spec in specs:
        for part in (spec, *spec.components):
            if part.kind == "outside":
                kind = resolve_retriever(str(part.model)).kind
                for history in histories:
                    how = (
                        "the current question and the earlier turns as they are (builds its own query)"
                        if history == "raw"
                        else f"our {history} query, no history"
                    )
                    notes.append(f"{part.label} ({kind}) @{history}: {queries:,} calls, each given {how}")
    return list(dict.fromkeys(notes))


estimate_evaluation = estimate_of(
    "estimate_evaluation",
    evaluate,
    CostEstimate,
    "The configurations an evaluation (:func:`evaluate`'s arguments) would run, and the model cost of the rewrite history.",
)


def _estimate(workspace: Workspace, inputs: dict[str, Any], settings: EvaluationContext) -> CostEstimate:
    """:func:`estimate_evaluation` once the call is checked."""
    loaded = cached_benchmark(inputs["benchmark"], workspace, settings.split)
    modes = [parse_history_mode(mode) for mode in inputs["histories"]]
    specs = [parse_retriever(spec) for spec in inputs["retrievers"]]
    configurations = expand_configurations(specs, modes, settings.rerank is not None)
    names = [*(Path(path).name for path in inputs["runs"]), *(configuration.name for configuration in configurations)]
    rewrites = len(loaded.queries) if any(mode.kind == "rewrite" for mode in modes) else 0
    rewriter = Rewriter()
    input_tokens = (
        sum(
            estimate_tokens(
                "".join(m["content"] for m in rewriter.messages(history=query.history, question=query.question))
            )
            for query in loaded.queries
        )
        if rewrites
        else 0
    )
    notes = [
        f"configurations: {', '.join(names)}",
        f"{len(loaded.queries):,} queries ({len(loaded.qrels):,} judged)",
        *outside_notes(specs, [mode.label for mode in modes], len(loaded.queries)),
        where_items_run(settings.ray, "BM25 and dense retrievers' blocks of queries"),
    ]
    return priced(
        f"{len(names)} configurations on {loaded.name}",
        [(settings.llm, rewrites, input_tokens, REWRITE_OUTPUT_TOKENS * rewrites)],
        notes,
    )


def measure_runs(
    run_files: Sequence[str | Path],
    qrels: str | Path | None = None,
    measures: Sequence[str] | None = None,
    batch_size: int = EVALUATE_BATCH_SIZE,
    nugget_qrels: str | Path | None = None,
) -> dict[str, MeasureResults]:
    """The measures of existing TREC run files against qrels (TREC qrels or a BEIR TSV, told
    apart by their first line), by file path. With ``nugget_qrels`` (``qid nugget_id doc_id
    label``), Coverage@k and alpha_nDCG@k too; without ``qrels``, the other measures use the
    query-level qrels derived from the nugget qrels (a document's label is the sum of its
    nugget labels). Each run is copied sorted by query id into a temporary folder and measured
    a batch of queries at a time; the results' measures are in the order asked for."""

    if qrels is None and nugget_qrels is None:
        raise InputError("give --qrels FILE or --nugget-qrels FILE to measure run files against")
    names = checked_measures(measures, nugget_qrels is not None)
    standard, nugget = split_measures(names)
    measure_objects = parse_measures(standard)
    check_within(1, MAX_ITEMS, batch_size=batch_size)
    nuggets = read_nugget_qrels(nugget_qrels) if nugget_qrels is not None else {}
    judged = read_qrels(qrels) if qrels is not None else query_qrels(nuggets)
    results: dict[str, MeasureResults] = {}
    with tempfile.TemporaryDirectory(prefix="benchsmith-runs-") as directory:
        for index, path in enumerate(run_files):
            sorted_copy = Path(directory) / f"{index}.trec"
            write_sorted_copy(path, sorted_copy, tag=Path(path).name)
            scored = evaluate_batches_with_nuggets(
                measure_objects, nugget, judged, nuggets, iter_run_batches(sorted_copy, batch_size)
            )
            sorted_copy.unlink()
            columns = [scored.measures.index(name) for name in names]
            results[str(path)] = replace(scored, measures=names, values=scored.values[:, columns])
    return results
