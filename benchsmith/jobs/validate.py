"""``benchsmith.validate``: does a benchmark rank retriever configurations as the user's own
labelled questions do (Kendall's τ-b with a bootstrap interval), and how far do LLM judges
agree with the human labels (Cohen's κ, Krippendorff's α)?"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchsmith.agents.defaults import BASELINE, StructuredOutput
from benchsmith.agents.seam.backends import estimate_tokens
from benchsmith.evals.defaults import DEFAULT_BOOTSTRAP
from benchsmith.evals.measures.separability import Separation
from benchsmith.evals.measures.validity import Verdict
from benchsmith.graphs.contexts.evaluate import DEFAULT_DEPTH
from benchsmith.graphs.contexts.validate import DEFAULT_JUDGE_DEPTH, DEFAULT_MEASURE, ValidationContext
from benchsmith.graphs.runtime.corpus_indexes import cached_benchmark, corpus_documents, document_text
from benchsmith.graphs.runtime.settings import accepts_old_setting_names, check_bounds, settings_given
from benchsmith.graphs.validate.graph import builder
from benchsmith.graphs.validate.human import HumanLabels, check_same_corpus, default_histories
from benchsmith.graphs.validate.state import JUDGE_BATCH
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
    retriever_embedders,
    run_settled,
    stop_if_dry_run,
)
from benchsmith.jobs.defaults import VALIDATE_RETRIEVERS
from benchsmith.jobs.evaluate import checked_measures
from benchsmith.jobs.select import checked_judges
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import read_json_object
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.held_out import HeldOutLabels
from benchsmith.tools.defaults import DEFAULT_EMBEDDER
from benchsmith.tools.retrieval.outside_retrievers import spec_for
from benchsmith.tools.retrieval.query_building import parse_history_mode, require_oracle_rewrites
from benchsmith.tools.retrieval.rerank import DEFAULT_RERANK_DEPTH
from benchsmith.tools.retrieval.retriever_specs import (
    check_outside_retrievers,
    expand_configurations,
    parse_retriever,
    run_file_configurations,
)

MIN_CONFIGURATIONS = 3  # τ over fewer says next to nothing
JUDGE_OUTPUT_TOKENS = 60  # per passage


@dataclass(frozen=True)
class ValidationResult(JobRun):
    measure: str = ""
    configurations: list[dict[str, Any]] = field(default_factory=list)  # [{name, human, synthetic, ranks...}]
    kendall_tau_b: float | None = None
    interval: dict[str, Any] = field(default_factory=dict)  # {low, high, confidence, defined_resamples}
    p_value: float | None = None
    top1_agrees: bool = False
    verdict: Verdict = Verdict("", "")  # its label and, in words, why (validity.json: {label, text})
    judge_agreement: dict[str, dict[str, Any]] = field(default_factory=dict)  # {judge: {cohen_kappa, ...}}
    # Each adjacent pair of the human ranking and the synthetic top two: do your questions separate them?
    separations: tuple[Separation, ...] = ()
    # The label rows naming chunks the benchmark holds out (dropped), their chunks, the questions left out.
    held_out: HeldOutLabels = HeldOutLabels()
    report: dict[str, Path] = field(default_factory=dict)  # markdown, html, results (validity.json)

    def results(self) -> dict[str, Any]:
        return read_json_object(self.report["results"])


@accepts_old_setting_names
def validate(
    synthetic: str | Path,
    *,
    human: str | Path,
    retrievers: Sequence[str | Any] | None = None,
    histories: Sequence[str] | None = None,
    runs: Sequence[str | Path] = (),
    judges: Sequence[str] = (),
    run_id: str | None = None,
    on_event: EventHandler | None = None,
    resume: str | None = None,
    seed: int = 0,
    measure: str = DEFAULT_MEASURE,
    split: str = "test",
    bootstrap: int = DEFAULT_BOOTSTRAP,
    judge_depth: int = DEFAULT_JUDGE_DEPTH,
    concurrency: int = 4,
    depth: int = DEFAULT_DEPTH,
    embedder: str = DEFAULT_EMBEDDER,
    llm: str = BASELINE,
    rerank: str | None = None,
    rerank_depth: int = DEFAULT_RERANK_DEPTH,
    rate_limit: float | None = None,
    timeout_s: float = 60.0,
    max_attempts: int = 6,
    structured_output: StructuredOutput = "auto",
    workspace: str | None = None,
    chroma_host: str | None = None,
    database: str | None = None,
) -> ValidationResult:
    """Rank every configuration (``retrievers`` × ``histories``, ``rerank``, TREC ``runs``
    that rank the queries of both sets) on ``synthetic`` (anything `evaluate` accepts) and on
    ``human`` (a BEIR directory over the same corpus, or a labelled JSONL whose gold chunk ids are
    ids of the synthetic corpus; labels over the collection it was synthesized from lose the
    chunks it holds out, which ``held_out`` names) by ``measure``, and compare the two rankings:
    Kendall's τ-b, a seeded bootstrap interval over the queries of both sets, scipy's p-value,
    whether the same configuration comes first, and which pairs the human questions cannot
    separate (``separations``); every setting of :class:`ValidationContext` is a keyword argument
    too. ``judges`` (``baseline``, ``openai:<model>``, a registered name or
    ``qrels:FILE``) each label the human set's gold pairs and as many sampled non-gold ones; their
    agreement with the human labels is in ``judge_agreement``. Different corpora stop with an
    InputError before any run exists. The same call with the same ``run_id`` resumes."""
    settings = settings_given(ValidationContext, locals())

    resolved = Workspace.resolve(settings.workspace)
    inputs, context, labels = _checked_inputs(resolved, synthetic, human, retrievers, histories, runs, judges, settings)
    stop_if_dry_run(lambda: _estimate(resolved, inputs, context, labels))
    check_embedders(context.embedder, *retriever_embedders(inputs["retrievers"]))
    outcome = run_settled(
        builder,
        "validate",
        resolved,
        inputs,
        context,
        run_id=run_id,
        on_event=on_event,
        resume=resume,
        max_concurrency=1,
    )
    values = outcome.values
    return job_result(
        ValidationResult,
        outcome,
        verdict=Verdict(**values["verdict"]),
        separations=tuple(Separation.from_json(pair) for pair in (values.get("separability") or {}).get("pairs", [])),
        held_out=HeldOutLabels.from_json(values.get("held_out") or {}),
    )


def _checked_inputs(
    workspace: Workspace,
    synthetic: str | Path,
    human: str | Path,
    retrievers: Sequence[str | Any] | None,
    histories: Sequence[str] | None,
    runs: Sequence[str | Path],
    judges: Sequence[str],
    settings: ValidationContext,
) -> tuple[dict[str, Any], ValidationContext, HumanLabels]:
    """The run's inputs, its settings with the measure checked, and the human set's judgments over
    the synthetic corpus: every one checked, both sets loaded and their corpora compared, before
    any work starts."""

    check_bounds(settings)
    given = retrievers if retrievers is not None else () if runs else VALIDATE_RETRIEVERS
    retrievers = list(dict.fromkeys(spec_for(retriever) for retriever in given))  # your own objects: by name
    run_files = [str(Path(path).resolve()) for path in runs]
    for path in run_files:
        if not Path(path).is_file():
            raise InputError(f"--run {path}: file not found")
    specs = [parse_retriever(spec) for spec in retrievers]
    check_outside_retrievers(specs)
    names = checked_measures([settings.measure])
    if len(names) != 1:
        raise InputError(f"--measure {settings.measure!r}: give one measure to rank the configurations by")
    check_models(settings.llm)
    judge_specs = checked_judges(judges) if judges else []
    loaded = cached_benchmark(resolved_path(str(synthetic)), workspace, settings.split)
    modes = list(dict.fromkeys(histories or default_histories(loaded)))
    history_modes = [parse_history_mode(mode) for mode in modes]
    if specs:
        require_oracle_rewrites(loaded, history_modes)
    reranked = settings.rerank is not None
    configurations = expand_configurations(specs, history_modes, reranked) if specs else []
    run_file_configurations(run_files, taken={configuration.name for configuration in configurations})
    if len(configurations) + len(run_files) < MIN_CONFIGURATIONS:
        raise InputError(
            f"rank at least {MIN_CONFIGURATIONS} configurations (--retriever, --history, --run); "
            f"{len(configurations) + len(run_files)} given"
        )
    human_path = Path(human).resolve()
    labels = check_same_corpus(loaded, str(human_path), workspace, settings.split)
    inputs = {
        "synthetic": resolved_path(str(synthetic)),
        "human": str(human_path),
        "retrievers": retrievers,
        "histories": modes,
        "runs": run_files,
        "judges": judge_specs,
    }
    return inputs, replace(settings, measure=names[0]), labels


estimate_validation = estimate_of(
    "estimate_validation",
    validate,
    CostEstimate,
    """The configurations a validation (:func:`validate`'s arguments) would rank on both sets, and the
    judges' cost: each judge reads every gold pair of the human set and as many non-gold ones (at
    most), in batches.""",
)


def _estimate(
    resolved: Workspace, inputs: dict[str, Any], context: ValidationContext, labels: HumanLabels
) -> CostEstimate:
    """:func:`estimate_validation` once the call is checked."""
    loaded = cached_benchmark(inputs["synthetic"], resolved, context.split)
    documents = corpus_documents(loaded)
    gold = {query_id: [doc for doc, rel in judged.items() if rel > 0] for query_id, judged in labels.qrels.items()}
    pairs = {query_id: 2 * len([doc for doc in ids if doc in documents]) for query_id, ids in gold.items()}
    calls = sum(-(-count // JUDGE_BATCH) for count in pairs.values())
    mean_passage = (sum(len(document_text(*text)) for text in documents.values()) / len(documents)) if documents else 0
    input_tokens = estimate_tokens("x" * int(sum(pairs.values()) * mean_passage + calls * 1200))
    configurations = (
        expand_configurations(
            [parse_retriever(spec) for spec in inputs["retrievers"]],
            [parse_history_mode(mode) for mode in inputs["histories"]],
            context.rerank is not None,
        )
        if inputs["retrievers"]
        else []
    )
    names = [*(Path(path).name for path in inputs["runs"]), *(c.name for c in configurations)]
    notes = [
        f"configurations: {', '.join(names)}, ranked by {context.measure} on both sets",
        f"{len(loaded.queries):,} synthetic queries; {len(gold):,} labelled questions with "
        f"{sum(pairs.values()) // 2:,} gold pairs",
        "retrieval itself calls no model (except a 'rewrite' history)",
    ]
    return priced(
        f"{len(names)} configurations × 2 sets"
        + (f", {len(inputs['judges'])} judge(s) on at most {sum(pairs.values()):,} pairs" if inputs["judges"] else ""),
        [
            (spec, calls, input_tokens, JUDGE_OUTPUT_TOKENS * sum(pairs.values()))
            for spec in inputs["judges"]
            if not spec.startswith("qrels:")
        ],
        notes,
    )
