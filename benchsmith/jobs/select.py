"""``benchsmith.select``: pick the best retriever configuration for real user queries without
ground truth (SEARA); and ``estimate_selection``, what a search would cost before it runs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.agents.defaults import BASELINE, StructuredOutput
from benchsmith.agents.label_seam import LABELS_PREFIX
from benchsmith.agents.rewriter import Rewriter
from benchsmith.evals.defaults import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MIN_VOTES,
    DEFAULT_SELECTION_BETAS,
    DEFAULT_SELECTION_RESAMPLES,
)
from benchsmith.graphs.contexts.select import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_CURVES_SHOWN,
    DEFAULT_RERANK_DEPTH,
    SelectContext,
)
from benchsmith.graphs.runtime.ray_items import prepare as prepare_ray
from benchsmith.graphs.runtime.ray_items import where_items_run
from benchsmith.graphs.runtime.settings import accepts_old_setting_names, check_bounds, settings_given
from benchsmith.graphs.select.graph import builder
from benchsmith.graphs.select.inputs import label_judge, queries_of
from benchsmith.graphs.select.retrieval import chunk_index, corpus_of
from benchsmith.jobs.common import (
    CostEstimate,
    EventHandler,
    JobRun,
    check_models,
    estimate_of,
    job_result,
    priced,
    resolved_path,
    run_settled,
    stop_if_dry_run,
)
from benchsmith.jobs.defaults import SELECT_JUDGES
from benchsmith.jobs.evaluate import outside_notes
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.space_files import read_space_file
from benchsmith.stores.persistence.jsonl import read_json_object
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.defaults import DEFAULT_EMBEDDER
from benchsmith.tools.retrieval.outside_retrievers import spec_for
from benchsmith.tools.retrieval.query_building import HistoryMode, build_query
from benchsmith.tools.retrieval.retriever_specs import check_outside_retrievers, parse_retriever
from benchsmith.tools.retrieval.strategy_space import (
    DIMENSIONS,
    SelectConfiguration,
    build_space,
    outside_configurations,
    parse_rewrite,
    planned_settings,
    space_from_mapping,
    stage_count,
)

MAX_CONFIGURATIONS = 500
PROMPT_CHARS = 900  # a judge's instructions, tags and numbering
VERDICT_OUTPUT_TOKENS = 60  # per passage: rationale, verdict, a fact or two
REWRITE_OUTPUT_TOKENS = 40


@dataclass(frozen=True)
class SelectionResult(JobRun):
    ranking: list[str] = field(default_factory=list)  # configuration names, best (PR-AUC) first
    winner: str | None = None  # ranking[0] when its interval does not overlap the runner-up's; else None
    tied: list[str] = field(default_factory=list)  # without a winner: the configurations tied with the top one
    pr_auc: dict[str, float] = field(default_factory=dict)
    precision_first: dict[str, Any] = field(default_factory=dict)  # {configuration, beta, k, f_beta, settings}
    recall_first: dict[str, Any] = field(default_factory=dict)
    pool_pairs: int = 0  # (query, chunk) pairs judged
    model_verdicts: int = 0  # verdicts a model was asked for in this run
    verdicts: dict[str, int] = field(default_factory=dict)  # this run's verdicts: total, model, stored, offline
    whole_corpus_pairs: int = 0  # pairs judging every chunk for every query would take
    # markdown, html, results (selection.json), and best (best-configuration.yaml) when a configuration of the
    # space wins (not your own retriever)
    report: dict[str, Path] = field(default_factory=dict)

    @property
    def best(self) -> str | None:
        """The winner; None when the top configurations are tied (see ``tied``)."""
        return self.winner

    def results(self) -> dict[str, Any]:
        """Everything ``selection.json`` holds: every configuration's measures at each k, the
        intervals, the main effects, the stages and the judgment counts."""
        return read_json_object(self.report["results"])


def strategy_space(
    space: str | Path | Mapping[str, Any] | None = None,
    *,
    retrievers: Sequence[str] = (),
    chunkings: Sequence[str] = (),
    rewrites: Sequence[str] = (),
    reranks: Sequence[str] = (),
    filters: Sequence[str] = (),
    top_k: Sequence[int] = (),
    search: str | None = None,
    order: Sequence[str] = (),
) -> dict[str, Any]:
    """The checked strategy space: a YAML file (or mapping) with every dimension given by an
    argument replacing the file's. The user's own retrievers among the retriever levels (``--retriever
    http://HOST/PATH``, ``py:module:object``, a registered name, each alone, ``@raw`` to be given the
    conversation) are listed apart under ``outside``: fixed configurations, not levels."""
    levels: dict[str, Any] = {}
    file_search, file_order = "grid", []
    if space is not None:
        loaded = space_from_mapping(
            space if isinstance(space, Mapping) else read_space_file(space),
            "the strategy space" if isinstance(space, Mapping) else str(space),
        )
        levels = {dimension: loaded[dimension] for dimension in DIMENSIONS}
        levels["retriever"] = [*levels["retriever"], *loaded.get("outside", [])]  # replaced with them
        file_search, file_order = loaded["search"], loaded["order"]
    for dimension, given in (
        ("retriever", retrievers),
        ("chunking", chunkings),
        ("rewrite", rewrites),
        ("rerank", reranks),
        ("filter", filters),
        ("top_k", top_k),
    ):
        if given:
            levels[dimension] = list(given)
    return build_space(levels, search or file_search, list(order) or file_order)


@accepts_old_setting_names
def select(
    queries: str | Path,
    *,
    corpus: Sequence[str | Path],
    space: str | Path | Mapping[str, Any] | None = None,
    retrievers: Sequence[Any] = (),
    chunkings: Sequence[str] = (),
    rewrites: Sequence[str] = (),
    reranks: Sequence[str] = (),
    filters: Sequence[str] = (),
    top_k: Sequence[int] = (),
    search: str | None = None,
    order: Sequence[str] = (),
    judges: Sequence[str] = SELECT_JUDGES,
    run_id: str | None = None,
    on_event: EventHandler | None = None,
    resume: str | None = None,
    seed: int = 0,
    embedder: str = DEFAULT_EMBEDDER,
    llm: str = BASELINE,
    min_votes: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    rerank_depth: int = DEFAULT_RERANK_DEPTH,
    betas: tuple[float, ...] = DEFAULT_SELECTION_BETAS,
    resamples: int = DEFAULT_SELECTION_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    concurrency: int = 4,
    curves_shown: int = DEFAULT_CURVES_SHOWN,
    rate_limit: float | None = None,
    timeout_s: float = 60.0,
    max_attempts: int = 6,
    structured_output: StructuredOutput = "auto",
    workspace: str | None = None,
    chroma_host: str | None = None,
    database: str | None = None,
    ray: str | None = None,
) -> SelectionResult:
    """Search the strategy space for the configuration that serves ``queries`` (a text or JSONL
    file of real queries, no labels) best on ``corpus``, judged by ``judges`` (``baseline``,
    ``openai:<model>``, a registered name, or ``qrels:FILE`` to answer from known labels); every
    setting of :class:`SelectContext` is a keyword argument too. ``retrievers`` may hold your own
    (a LangChain retriever or a callable, registered under its name; a URL, ``py:module:object`` or
    registered name): each is one more configuration, fixed, judged beside the space's. The same call with the same
    ``run_id`` resumes. With ``database`` (a postgresql:// URL) its checkpoints, run record and
    model cache are kept in PostgreSQL."""
    settings = settings_given(SelectContext, locals())

    resolved = Workspace.resolve(settings.workspace)
    check_bounds(settings)
    inputs = checked_inputs(
        queries,
        corpus,
        strategy_space(
            space,
            retrievers=[spec_for(retriever) for retriever in retrievers],  # your own objects: registered by name
            chunkings=chunkings,
            rewrites=rewrites,
            reranks=reranks,
            filters=filters,
            top_k=top_k,
            search=search,
            order=order,
        ),
        judges,
        settings,
    )
    # A dry run prices the judges given, whatever the vote rule (a user may price one judge first).
    stop_if_dry_run(lambda: _estimate(inputs, settings))
    check_vote_rule(
        inputs["judges"], settings.min_votes
    )  # after the files: their errors name a line, this one a setting
    prepare_ray(settings.ray)  # a cluster that cannot be joined stops here, before the run exists
    outcome = run_settled(
        builder, "select", resolved, inputs, settings, run_id=run_id, on_event=on_event, resume=resume
    )
    return job_result(SelectionResult, outcome, winner=outcome.values.get("best"))


def checked_judges(judges: Sequence[str]) -> list[str]:
    """The judge specs with every ``qrels:FILE`` made absolute and registered; all checked."""

    if not judges:
        raise InputError("give at least one --judge")
    resolved = [
        f"{LABELS_PREFIX}{Path(spec.removeprefix(LABELS_PREFIX)).resolve()}" if spec.startswith(LABELS_PREFIX) else spec
        for spec in judges
    ]
    if len(set(resolved)) != len(resolved):
        raise InputError("each --judge may be given once")
    for spec in resolved:
        if spec.startswith(LABELS_PREFIX):
            label_judge(spec)
    check_models(*resolved)
    return resolved


def check_vote_rule(judges: Sequence[str], min_votes: int | None) -> None:
    """The audit's vote rule (``DEFAULT_MIN_VOTES`` judges and a majority) unless ``min_votes``
    says otherwise, never lowered behind the user's back: a rule the judges cannot meet is refused."""

    votes = DEFAULT_MIN_VOTES if min_votes is None else min_votes
    if votes <= len(judges):
        return
    rule = f"--min-votes {min_votes}" if min_votes is not None else f"the audit's vote rule ({votes} judges)"
    if len(judges) == 1:
        raise InputError(
            f"{rule} cannot be met by one judge ({judges[0]}): add another --judge, or pass "
            "--min-votes 1 to count a chunk relevant on that judge's word alone"
        )
    raise InputError(
        f"{rule} needs at least {votes} judges; {len(judges)} given ({', '.join(judges)}): add "
        f"--judge specs, or pass --min-votes {len(judges)} or less"
    )


def checked_inputs(
    queries: str | Path,
    corpus: Sequence[str | Path],
    space: dict[str, Any],
    judges: Sequence[str],
    settings: SelectContext,
) -> dict[str, Any]:
    """The run's inputs, every one checked (queries and corpus read) with the settings they depend
    on, before any work starts."""

    if not corpus:
        raise InputError("give the documents to search with --corpus (a folder, a file, a BEIR corpus.jsonl or stdlib)")
    configurations = planned_settings(space)
    outside = outside_configurations(space)
    if len(configurations) + len(outside) > MAX_CONFIGURATIONS:
        raise InputError(
            f"the grid has {len(configurations) + len(outside):,} configurations (at most {MAX_CONFIGURATIONS}): "
            "search it staged (--search staged) or give fewer levels"
        )
    check_outside_retrievers([parse_retriever(configuration.spec) for configuration in outside])
    judge_specs = checked_judges(judges)
    if any(level != "none" for level in space["rewrite"]):
        check_models(settings.llm)
    if not settings.betas or any(beta <= 0 for beta in settings.betas):
        raise InputError("--beta values must be positive")
    if not 0 < settings.confidence < 1:
        raise InputError(f"--confidence must lie strictly between 0 and 1, got {settings.confidence}")
    queries_path = str(Path(queries).resolve())
    queries_of(queries_path)
    sources = [resolved_path(str(source)) for source in corpus]
    corpus_of(sources)
    return {"queries": queries_path, "corpus": sources, "space": space, "judges": judge_specs}


estimate_selection = estimate_of(
    "estimate_selection",
    select,
    CostEstimate,
    """The configurations a search (:func:`select`'s arguments) would evaluate, the pool it expects, and
    the judges' and rewriters' calls, tokens and cost (nothing is embedded or called).""",
)


def _estimate(inputs: dict[str, Any], settings: SelectContext) -> CostEstimate:
    """:func:`estimate_selection` once the call is checked."""
    resolved_space, judge_specs = inputs["space"], inputs["judges"]
    llm, batch_size = settings.llm, settings.batch_size
    loaded = queries_of(inputs["queries"])
    documents = corpus_of(inputs["corpus"])
    configurations = [SelectConfiguration.from_settings(setting) for setting in planned_settings(resolved_space)]
    outside = outside_configurations(resolved_space)
    chunkings_used = {configuration.chunking for configuration in configurations}
    chunks = {spec: chunk_index(documents, spec).chunks for spec in chunkings_used}
    distinct = len({chunk.key for listed in chunks.values() for chunk in listed})
    mean_chars = sum(len(chunk.text) for listed in chunks.values() for chunk in listed) // max(
        1, sum(len(listed) for listed in chunks.values())
    )
    # Per query: at least the largest top K (all configurations agree), at most every top K (none do;
    # an outside configuration's passages may be texts select does not hold).
    most = min(distinct, sum(configuration.top_k for configuration in configurations)) + sum(
        configuration.top_k for configuration in outside
    )
    least = min(distinct, max(configuration.top_k for configuration in configurations))
    conversation = sum(len(build_query(query, HistoryMode("full"))) for query in loaded) // max(len(loaded), 1)
    calls = len(loaded) * math.ceil(most / batch_size)
    input_tokens = (
        calls * (PROMPT_CHARS + conversation) + len(loaded) * most * mean_chars
    ) // 4  # ~4 characters a token
    rows = [
        (judge, calls, input_tokens, len(loaded) * most * VERDICT_OUTPUT_TOKENS)
        for judge in judge_specs
        if not judge.startswith(LABELS_PREFIX)
    ]
    rewrite_calls = 0
    for level in resolved_space["rewrite"]:
        kind = parse_rewrite(level).kind
        rewrite_calls += (
            sum(1 for query in loaded if query.history) if kind == "rewrite" else len(loaded) if kind == "expand" else 0
        )
    if rewrite_calls:
        check_models(llm)
        prompt = sum(
            len("".join(m["content"] for m in Rewriter().messages(history=q.history, question=q.question)))
            for q in loaded
        ) // max(len(loaded), 1)
        rows.append((llm, rewrite_calls, rewrite_calls * prompt // 4, rewrite_calls * REWRITE_OUTPUT_TOKENS))
    staged = resolved_space["search"] == "staged"
    names = [configuration.name for configuration in configurations] + [configuration.name for configuration in outside]
    notes = [
        f"configurations ({'at most, over ' + str(stage_count(resolved_space)) + ' stages' if staged else 'grid'}): "
        + ", ".join(names[:12])
        + (f" … and {len(names) - 12} more" if len(names) > 12 else ""),
        f"expected pool: {least * len(loaded):,} to {most * len(loaded):,} (query, chunk) pairs "
        f"({least} to {most} per query: identical or disjoint top K); judge costs assume the most",
        f"judging the whole corpus instead: {len(loaded):,} queries × {distinct:,} distinct chunks = "
        f"{len(loaded) * distinct:,} pairs",
        f"chunkings: {', '.join(f'{spec.label} ({len(listed):,} chunks)' for spec, listed in chunks.items())}; "
        "near-match fact checks (a few per query) are not counted",
        *(
            f"outside configuration {note}, top {configuration.top_k}"
            for configuration in outside
            for note in outside_notes([parse_retriever(configuration.spec)], [configuration.history], len(loaded))
        ),
        where_items_run(settings.ray, "judging batches"),
    ]
    return priced(
        f"{len(configurations) + len(outside)} configuration(s) × {len(loaded):,} queries, judged by {', '.join(judge_specs)}",
        rows,
        notes,
    )
