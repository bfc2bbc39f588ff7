"""``benchsmith.build_hardneg``: multi-condition queries with hard-negative documents from any
corpus (MultiConIR, Lu et al., 2025); ``benchsmith.score_hardneg``: how retrievers and rerankers
hold up on them (win rate per number of conditions, monotonicity, flip rate); and
``benchsmith.rescore_tables``: the same measures from existing score tables in the reference
layout."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.agents.condition_extractor import DOMAINS, ConditionExtractor
from benchsmith.agents.condition_judge import ConditionCountJudge
from benchsmith.agents.condition_queries import ConditionQueryWriter
from benchsmith.agents.defaults import BASELINE, StructuredOutput
from benchsmith.agents.negative_rewriter import NEGATIVE_KINDS, NegativeRewriter
from benchsmith.agents.seam.backends import estimate_tokens
from benchsmith.evals.defaults import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES
from benchsmith.graphs.contexts.hardneg import DEFAULT_CONDITIONS, DEFAULT_MAX_CHARS, HardnegContext
from benchsmith.graphs.contexts.hardneg_score import HardnegScoreContext
from benchsmith.graphs.hardneg.build import builder as hardneg_builder
from benchsmith.graphs.hardneg.build import read_source_documents
from benchsmith.graphs.hardneg.outside import OUTSIDE_DEPTH
from benchsmith.graphs.hardneg.score import builder as score_builder
from benchsmith.graphs.hardneg.scoring import (
    load_dataset,
    output_directory,
    reference_measures_of_tables,
    scorer_spec,
)
from benchsmith.graphs.runtime.ray_items import prepare as prepare_ray
from benchsmith.graphs.runtime.ray_items import where_items_run
from benchsmith.graphs.runtime.resources import check_reranker
from benchsmith.graphs.runtime.settings import accepts_old_setting_names, check_bounds, settings_given
from benchsmith.jobs.common import (
    CostEstimate,
    EventHandler,
    JobRun,
    check_collection_name,
    check_embedders,
    check_models,
    checked_run_id,
    estimate_of,
    job_result,
    priced,
    run_settled,
    stop_if_dry_run,
)
from benchsmith.jobs.defaults import HARDNEG_SCORERS
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import read_json_object
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.benchmark.condition_documents import leading_part
from benchsmith.tools.defaults import DEFAULT_EMBEDDER
from benchsmith.tools.retrieval.multicondition_scoring import ladder_groups, parse_scorers, task1_groups
from benchsmith.tools.retrieval.outside_retrievers import resolve_retriever

# Assumed output lengths (tokens) for the dry-run estimate.
OUTPUT_TOKENS = {"extractor": 40, "writer": 30, "rewriter": 60, "judge": 80}  # extractor and writer: per condition
SENTENCE_CHARS = 150


@dataclass(frozen=True)
class HardnegBuildResult(JobRun):
    documents: int = 0  # source documents (after sampling)
    rows: int = 0  # kept rows
    task_rows: dict[str, int] = field(default_factory=dict)  # rows complete for task1, task2, task3
    dropped: dict[str, int] = field(default_factory=dict)  # source documents dropped, by reason
    verification: dict[str, int] = field(default_factory=dict)  # hard negatives checked, rebuilt, dropped
    files: dict[str, Path] = field(default_factory=dict)  # dataset, task1, task2_3, beir_task1..3, rows, stats

    def statistics(self) -> dict[str, Any]:
        """Everything ``stats.json`` holds."""
        return read_json_object(self.files["stats"])


@accepts_old_setting_names
def build_hardneg(
    sources: Sequence[str | Path] = (),
    *,
    collection: str | None = None,
    run_id: str | None = None,
    on_event: EventHandler | None = None,
    resume: str | None = None,
    seed: int = 0,
    domain: str = "custom",
    features: str | None = None,
    conditions: int = DEFAULT_CONDITIONS,
    negatives: str = "subtle",
    llm: str = BASELINE,
    judge: str | None = None,
    sample: int | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    concurrency: int = 4,
    rate_limit: float | None = None,
    timeout_s: float = 60.0,
    max_attempts: int = 6,
    structured_output: StructuredOutput = "auto",
    workspace: str | None = None,
    chroma_host: str | None = None,
    database: str | None = None,
    ray: str | None = None,
) -> HardnegBuildResult:
    """Build a multi-condition hard-negative dataset from ``sources`` (directories, files, a BEIR
    corpus.jsonl or 'stdlib') or an ingested ``collection``; every setting of
    :class:`HardnegContext` is a keyword argument too. The same call with the same ``run_id``
    resumes an interrupted build. With ``database`` (a postgresql:// URL) its checkpoints, run
    record and model cache are kept in PostgreSQL."""
    settings = settings_given(HardnegContext, locals())

    check_bounds(settings)
    inputs = _checked_inputs(sources, collection, settings)
    resolved = Workspace.resolve(settings.workspace)
    stop_if_dry_run(lambda: _estimate(resolved, inputs, settings))
    run_id = checked_run_id(run_id, "hardneg")
    files = inputs.get("sources")
    if (
        files
        and "stdlib" not in files
        and not RunDirectory(resolved, run_id).exists()
        and not read_source_documents(resolved, None, files, None)
    ):  # checked before the run exists
        raise InputError(f"{', '.join(files)}: no readable documents with text to build from")
    prepare_ray(settings.ray)  # a cluster that cannot be joined stops here, before the run exists
    outcome = run_settled(
        hardneg_builder, "hardneg", resolved, inputs, settings, run_id=run_id, on_event=on_event, resume=resume
    )
    return job_result(
        HardnegBuildResult,
        outcome,
        files={kind: Path(path) for kind, path in outcome.values.get("files", {}).items()},
    )


def _checked_inputs(sources: Sequence[str | Path], collection: str | None, settings: HardnegContext) -> dict[str, Any]:
    """The build's inputs (the graph's: sources or a collection), checked with the settings they go with."""
    if bool(sources) == bool(collection):
        raise InputError("give either source files or directories (or 'stdlib'), or --collection NAME")
    if collection:
        check_collection_name(collection)
    for source in sources:
        if str(source) != "stdlib" and not Path(source).exists():
            raise InputError(f"{source}: no such file or directory")
    if settings.domain not in DOMAINS:
        raise InputError(f"--domain must be one of {', '.join(DOMAINS)}, got {settings.domain!r}")
    if settings.features and settings.domain != "custom":
        raise InputError("--features describes a custom domain: use it with --domain custom")
    if settings.negatives not in NEGATIVE_KINDS:
        raise InputError(f"--negatives must be one of {', '.join(NEGATIVE_KINDS)}, got {settings.negatives!r}")
    check_models(settings.llm, *([settings.judge] if settings.judge else []))
    if collection:
        return {"collection": collection}
    return {"sources": [str(Path(source).resolve()) if str(source) != "stdlib" else "stdlib" for source in sources]}


estimate_hardneg = estimate_of(
    "estimate_hardneg",
    build_hardneg,
    CostEstimate,
    """Model calls, tokens and cost of a build (:func:`build_hardneg`'s arguments), before spending: the
    real prompts filled with the source documents' mean length (after cutting), before rebuilds (at
    most one per document).""",
)


def _estimate(workspace: Workspace, inputs: dict[str, Any], settings: HardnegContext) -> CostEstimate:
    """:func:`estimate_hardneg` once the call is checked."""
    domain, features, conditions, negatives = (
        settings.domain,
        settings.features,
        settings.conditions,
        settings.negatives,
    )
    llm, judge, sample, max_chars = settings.llm, settings.judge, settings.sample, settings.max_chars
    documents = read_source_documents(
        workspace, settings.chroma_host, inputs.get("sources", []), inputs.get("collection")
    )
    if not documents:
        raise InputError("no source documents")
    count = min(len(documents), sample) if sample is not None else len(documents)
    length = sum(len(leading_part(document["text"], max_chars)) for document in documents) // len(documents)
    document, sentence = "x" * length, "s" * SENTENCE_CHARS
    sentences = [sentence] * conditions

    def tokens(messages: list[dict[str, str]]) -> int:
        return estimate_tokens("".join(message["content"] for message in messages))

    generator_calls = 2 + conditions
    generator_input = (
        tokens(ConditionExtractor().messages(document=document, count=conditions, domain=domain, features=features))
        + tokens(ConditionQueryWriter(conditions).messages(sentences=sentences, domain=domain, features=features))
        + conditions
        * tokens(NegativeRewriter().messages(sentence=sentence, condition=sentence, kind=negatives, domain=domain))
    )
    generator_output = (
        conditions * (OUTPUT_TOKENS["extractor"] + 2 * OUTPUT_TOKENS["writer"]) + conditions * OUTPUT_TOKENS["rewriter"]
    )
    judge_calls = 2 * conditions + 1
    judge_input = sum(
        tokens(ConditionCountJudge(k).messages(conditions=sentences[:k], document=document))
        for k in [conditions] * (conditions + 1) + list(range(1, conditions + 1))
    )
    judge_spec = judge or llm
    per_model = [
        (llm, count * generator_calls, count * generator_input, count * generator_output),
        (judge_spec, count * judge_calls, count * judge_input, count * judge_calls * OUTPUT_TOKENS["judge"]),
    ]
    notes = [
        f"per document: 1 extraction, 1 query-writing, {conditions} rewrite and {judge_calls} judge calls; "
        "a document whose negatives fail verification costs up to that many again (one rebuild)",
        f"mean document length after cutting to {max_chars:,} characters: {length:,} characters",
        where_items_run(settings.ray, "documents"),
    ]
    return priced(f"{count:,} source documents × {conditions} conditions", per_model, notes)


# ---------------------------------------------------------------------------------------
# Scoring.


@dataclass(frozen=True)
class HardnegScoreResult(JobRun):
    dataset: Path = Path()  # the dataset's absolute path
    output_dir: Path = Path()
    scorers: list[str] = field(default_factory=list)
    reference: dict[str, dict[str, Any]] = field(default_factory=dict)  # {scorer: the reference's measures}
    tables: dict[str, dict[str, Path]] = field(default_factory=dict)  # {scorer: {task1, task2, task3: *_results.csv}}
    report: dict[str, Path] = field(default_factory=dict)  # markdown, html, results

    def results(self) -> dict[str, Any]:
        """Everything the results JSON holds: measures with bootstrap intervals, worst rows, notes."""
        return read_json_object(self.report["results"])


@accepts_old_setting_names
def score_hardneg(
    dataset: str | Path,
    *,
    retrievers: Sequence[str] = HARDNEG_SCORERS,
    rerankers: Sequence[str] = (),
    output_dir: str | Path | None = None,
    run_id: str | None = None,
    on_event: EventHandler | None = None,
    resume: str | None = None,
    embedder: str = DEFAULT_EMBEDDER,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    concurrency: int = 4,
    rate_limit: float | None = None,
    timeout_s: float = 60.0,
    max_attempts: int = 6,
    workspace: str | None = None,
    chroma_host: str | None = None,
    database: str | None = None,
) -> HardnegScoreResult:
    """Score every (query, candidate) pair of ``dataset`` (a hardneg build run directory or run id,
    or a hardneg.csv) with each retriever and reranker; write the score tables in the reference
    layout, the measures and the report. Every setting of :class:`HardnegScoreContext` is a
    keyword argument too. One run (job ``hardneg-score``) with one step per scorer: the same call
    with the same ``run_id`` resumes an interrupted run, scoring only the scorers that had not
    finished, and reports a finished one without scoring. ``database`` keeps its checkpoints and
    record in PostgreSQL."""
    settings = settings_given(HardnegScoreContext, locals())

    resolved = Workspace.resolve(settings.workspace)
    check_bounds(settings)
    inputs, rows, queries = _checked_score_inputs(resolved, dataset, retrievers, rerankers, output_dir, settings)
    stop_if_dry_run(lambda: _scoring_estimate(inputs, rows, queries))
    outcome = run_settled(
        score_builder,
        "hardneg-score",
        resolved,
        inputs,
        settings,
        run_id=run_id,
        on_event=on_event,
        resume=resume,
        max_concurrency=1,
    )
    values = outcome.values
    return job_result(
        HardnegScoreResult,
        outcome,
        dataset=Path(values["dataset"]),
        output_dir=Path(values["output_dir"]),
        tables={label: {task: Path(path) for task, path in paths.items()} for label, paths in values["tables"].items()},
    )


def _checked_score_inputs(
    workspace: Workspace,
    dataset: str | Path,
    retrievers: Sequence[str],
    rerankers: Sequence[str],
    output_dir: str | Path | None,
    settings: HardnegScoreContext,
) -> tuple[dict[str, Any], int, int]:
    """The scoring run's inputs, every one checked (the dataset read) before the run exists, the
    dataset's row count and its distinct queries (what an outside retriever is asked)."""

    specs = parse_scorers(list(retrievers), list(rerankers))
    for spec in specs:
        if spec.kind == "rerank":
            check_reranker(spec.model or "")
        if spec.kind == "outside":
            resolve_retriever(str(spec.model), settings.timeout_s)  # one that does not resolve stops here
    check_embedders(*(spec.model or settings.embedder for spec in specs if spec.kind == "dense"))
    path, rows, _ = load_dataset(dataset, workspace)
    # Absolute, so that the same command resumes the run from any working directory.
    output = output_directory(path, output_dir).resolve()
    ladder_rows = [row for row in rows if row.has_ladder]
    groups = task1_groups([row for row in rows if row.has_task1])
    groups += ladder_groups(ladder_rows, False) + ladder_groups(ladder_rows, True)
    queries = len({query for query, _ in groups})
    inputs = {"dataset": str(path), "scorers": [spec.label for spec in specs], "output_dir": str(output)}
    return inputs, len(rows), queries


estimate_scoring = estimate_of(
    "estimate_scoring",
    score_hardneg,
    CostEstimate,
    """What a scoring run (:func:`score_hardneg`'s arguments) would score and where it would write, its
    inputs checked; scorers run locally, so no model is called.""",
)


def _scoring_estimate(inputs: dict[str, Any], rows: int, queries: int) -> CostEstimate:
    """:func:`estimate_scoring` once the call is checked."""
    outside = [spec for spec in map(scorer_spec, inputs["scorers"]) if spec.kind == "outside"]
    calls = [
        f"your retriever {spec.label} ({resolve_retriever(str(spec.model)).kind}): {queries:,} requests, one per "
        f"distinct query (k {OUTSIDE_DEPTH}, no history), each logged in the run so a resumed run asks it once"
        for spec in outside
    ]
    return priced(
        f"{rows:,} rows of {inputs['dataset']} × {len(inputs['scorers'])} scorer(s) ({', '.join(inputs['scorers'])})",
        [],
        [
            f"score tables and report into {inputs['output_dir']}",
            "built-in retrievers and rerankers score locally: no model calls, no cost",
            *calls,
        ],
    )


def rescore_tables(
    task1: str | Path | None = None, task2: str | Path | None = None, task3: str | Path | None = None
) -> dict[str, Any]:
    """The MultiConIR measures of existing score tables in the reference layout, with exactly the
    reference's keys: ``task1.win_rate``, ``task1.avg_diff``, ``task2.pairs``, ``task3.change_rate``.
    ``task2`` holds instruction-style scores, ``task3`` descriptive-style ones of the same rows."""

    if task1 is None and task2 is None and task3 is None:
        raise InputError("give at least one of --task1, --task2, --task3")
    if task3 is not None and task2 is None:
        raise InputError(
            "--task3 (descriptive-style scores) is compared with --task2 (instruction-style scores "
            "of the same rows): give both"
        )
    return reference_measures_of_tables(*(Path(path) if path is not None else None for path in (task1, task2, task3)))
