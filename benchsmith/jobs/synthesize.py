"""``benchsmith.synthesize``: a multi-turn conversational retrieval benchmark from an ingested
collection (MTR-Pipeline), and ``benchsmith.cluster``, the semantic path it walks."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.agents.defaults import BASELINE, StructuredOutput
from benchsmith.agents.polisher import Polisher
from benchsmith.agents.pool_judge import PoolJudge
from benchsmith.agents.questioner import Questioner
from benchsmith.agents.responder import Responder
from benchsmith.agents.seam.backends import estimate_tokens
from benchsmith.agents.turn_types import ContributionJudge, ReferenceResponder, TypedQuestioner
from benchsmith.evals.defaults import MIN_RANKING_QUERIES
from benchsmith.graphs.contexts.synthesize import QualityGateMode, SynthesisContext, with_preset_rates
from benchsmith.graphs.runtime.bounds import MAX_CLUSTER_SIZE, MAX_CONVERSATIONS, MAX_NEIGHBOURS, MAX_TURNS
from benchsmith.graphs.runtime.ray_blocks import block_map, where_graph_builds
from benchsmith.graphs.runtime.ray_items import prepare as prepare_ray
from benchsmith.graphs.runtime.ray_items import where_items_run
from benchsmith.graphs.runtime.resources import chroma_client
from benchsmith.graphs.runtime.settings import (
    accepts_old_setting_names,
    check_bounds,
    settings_given,
)
from benchsmith.graphs.synthesis.run import builder
from benchsmith.graphs.synthesis.state import BEIR_DIR, STATS_FILE, TREC_QRELS_FILE
from benchsmith.graphs.synthesis.supply import QuestionSupply, question_supply
from benchsmith.graphs.synthesis.turn_checks import UNANSWERABLE_POOL_DEPTH
from benchsmith.graphs.synthesis.turn_plans import check_turn_types
from benchsmith.jobs.common import (
    CostEstimate,
    EventHandler,
    JobRun,
    check_collection_name,
    check_models,
    check_within,
    checked_run_id,
    estimate_of,
    job_result,
    priced,
    run_settled,
    stop_if_dry_run,
)
from benchsmith.jobs.defaults import SYNTHESIS_CONVERSATIONS, SYNTHESIS_TURNS
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.benchmark_files import DIALOGUES_FILE, Dialogue
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.vectors import VectorStore
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.benchmark.dialogue_walk import (
    DEFAULT_HARD_SWITCH_RATE,
    DEFAULT_SOFT_SWITCH_MARGIN,
    DEFAULT_SWITCH_PROBABILITY,
)
from benchsmith.tools.corpus.clustering import BlockMap
from benchsmith.tools.corpus.corpus_clusters import cluster_collection
from benchsmith.tools.corpus.corpus_statistics import corpus_statistics
from benchsmith.tools.defaults import (
    DEFAULT_CLUSTER_NEIGHBOURS,
    DEFAULT_CLUSTER_SIZE,
    DEFAULT_MAX_OVERLAP,
    DEFAULT_OVERLAP_ATTEMPTS,
    DEFAULT_OVERLAP_REPLANS,
    DEFAULT_SYNTHESIS_PAGE_KINDS,
)
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction
from benchsmith.tools.text.page_kinds import PAGE_KINDS, chunk_page_kind

# Assumed lengths for the dry-run estimate (characters): a question, an assistant answer.
ESTIMATE_QUESTION_CHARS, ESTIMATE_ANSWER_CHARS = 100, 1200
ESTIMATE_OUTPUT_TOKENS = {
    "questioner": 60,
    "responder": 300,
    "polisher": 30,
    "pool judge": 250,
    "contribution judge": 60,
}


def check_page_kinds(page_kinds: Sequence[str]) -> None:
    """Page kinds known, and at least one (``--page-kind``)."""
    if isinstance(page_kinds, str):
        raise InputError(f"page_kinds must be a list of page kinds, not the text {page_kinds!r}")
    if not page_kinds:
        raise InputError(f"--page-kind: give at least one of {', '.join(PAGE_KINDS)}")
    for kind in page_kinds:
        if kind not in PAGE_KINDS:
            raise InputError(f"--page-kind {kind!r} is not a page kind: {', '.join(PAGE_KINDS)}")


@dataclass(frozen=True)
class SynthesisResult(JobRun):
    collection: str = ""
    dialogues: list[Dialogue] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)  # the MTR-Bench-style statistics (stats.json)
    lexical_overlap: dict[str, Any] = field(default_factory=dict)  # n, mean, median, p90 of the questions' overlap
    overlap_rejections: dict[str, Any] = field(default_factory=dict)  # corrective turns, re-plans, kept above limit
    files: dict[str, Path] = field(default_factory=dict)  # dialogues, beir, qrels, stats


@dataclass(frozen=True)
class ClusterResult:
    collection: str
    clusters: list[list[str]]  # chunk ids along the semantic path, cut every `size` chunks
    stats: dict[str, Any]
    page_kinds: list[str] | None = None  # the page kinds of the chunks walked; None: all


def _store(workspace: Workspace, collection: str, chroma_host: str | None) -> VectorStore:
    check_collection_name(collection)
    return VectorStore.open_existing(
        chroma_client(workspace, chroma_host), collection, lambda spec: ChromaEmbeddingFunction(spec=spec)
    )


def cluster(
    collection: str,
    *,
    size: int = DEFAULT_CLUSTER_SIZE,
    neighbours: int = DEFAULT_CLUSTER_NEIGHBOURS,
    seed: int = 0,
    workspace: str | Path | None = None,
    chroma_host: str | None = None,
    page_kinds: Sequence[str] = DEFAULT_SYNTHESIS_PAGE_KINDS,
    ray: str | None = None,
) -> ClusterResult:
    """Walk the collection's embeddings (of the chunks of ``page_kinds``: by default those synthesis
    draws from) in one continuous semantic path and cut it into clusters (computed once per
    parameters and reused). With ``ray`` (an address, as ``--ray``) the nearest-neighbour graph is
    built in blocks on that Ray cluster; the walk stays here, one path."""

    check_within(1, MAX_CLUSTER_SIZE, size=size)
    check_within(1, MAX_NEIGHBOURS, neighbours=neighbours)
    check_page_kinds(page_kinds)
    return _clusters(
        Workspace.resolve(workspace), collection, size, neighbours, seed, chroma_host, page_kinds, block_map(ray)
    )


def _clusters(
    workspace: Workspace,
    collection: str,
    size: int,
    neighbours: int,
    seed: int,
    chroma_host: str | None,
    page_kinds: Sequence[str],
    map_blocks: BlockMap | None = None,
) -> ClusterResult:
    """:func:`cluster` in a resolved workspace, its settings checked."""
    clustering = cluster_collection(
        workspace, _store(workspace, collection, chroma_host), size, neighbours, seed, page_kinds, map_blocks
    )
    return ClusterResult(collection, clustering.clusters, clustering.stats, clustering.page_kinds)


@accepts_old_setting_names
def synthesize(
    collection: str,
    *,
    conversations: int | None = None,
    turns: int = SYNTHESIS_TURNS,
    run_id: str | None = None,
    on_event: EventHandler | None = None,
    resume: str | None = None,
    seed: int = 0,
    llm: str = BASELINE,
    switch_rate: float = DEFAULT_SWITCH_PROBABILITY,
    hard_switch_rate: float = DEFAULT_HARD_SWITCH_RATE,
    soft_switch_margin: float = DEFAULT_SOFT_SWITCH_MARGIN,
    max_overlap: float = DEFAULT_MAX_OVERLAP,
    overlap_attempts: int = DEFAULT_OVERLAP_ATTEMPTS,
    overlap_replans: int = DEFAULT_OVERLAP_REPLANS,
    cluster_size: int = DEFAULT_CLUSTER_SIZE,
    neighbours: int = DEFAULT_CLUSTER_NEIGHBOURS,
    page_kinds: tuple[str, ...] = DEFAULT_SYNTHESIS_PAGE_KINDS,
    history_window: int | None = None,
    concurrency: int = 4,
    unanswerable_rate: float = 0.0,
    partial_rate: float = 0.0,
    underspecified_rate: float = 0.0,
    multi_gold_rate: float = 0.0,
    rates: str | None = None,
    quality_gate: QualityGateMode = "replan",
    question_types: str = "",
    rate_limit: float | None = None,
    timeout_s: float = 60.0,
    max_attempts: int = 6,
    structured_output: StructuredOutput = "auto",
    workspace: str | None = None,
    chroma_host: str | None = None,
    database: str | None = None,
    ray: str | None = None,
) -> SynthesisResult:
    """Synthesize ``conversations`` conversations of ``turns`` turns over ``collection`` (by default
    ``SYNTHESIS_CONVERSATIONS``, or one per cluster where the collection has fewer clusters, said in a
    ``warning`` event); every setting of :class:`SynthesisContext` is a keyword argument too. The same call with the same
    ``run_id`` resumes an interrupted run. With ``database`` (a postgresql:// URL) its
    checkpoints, model cache, usage and record are in PostgreSQL. With ``ray`` (``local``, ``auto``
    or a cluster's address) each conversation runs as a Ray task and this process writes the
    files, the same bytes as without. A
    question whose lexical overlap with its gold passage is above ``max_overlap`` is asked again
    (``overlap_attempts`` corrective turns), then re-planned on another gold chunk
    (``overlap_replans`` times), then kept flagged ``overlap_rejected``."""
    settings = settings_given(SynthesisContext, locals())
    settings = with_preset_rates(settings)  # the rates a --rates preset names, recorded as the run's own
    check_collection_name(collection)
    check_models(settings.llm)
    if conversations is not None:
        check_within(1, MAX_CONVERSATIONS, conversations=conversations)
    check_within(1, MAX_TURNS, turns=turns)
    check_bounds(settings)
    check_turn_types(settings)
    check_page_kinds(settings.page_kinds)
    resolved = Workspace.resolve(settings.workspace)
    stop_if_dry_run(lambda: _estimate(resolved, collection, conversations, turns, settings))
    run_id = checked_run_id(run_id, "synthesize")
    available = len(
        _clusters(
            resolved,
            collection,
            settings.cluster_size,
            settings.neighbours,
            settings.seed,
            settings.chroma_host,
            settings.page_kinds,
            block_map(settings.ray),  # with --ray the graph's blocks run on the cluster; the walk here
        ).clusters
    )
    if conversations is None:
        # the default fits a small collection (a tree of a hundred chunks has a dozen clusters): a first run on
        # one's own docs should not stop on a number nobody chose; a number asked for is never cut
        conversations = _default_conversations(available)
        if conversations < SYNTHESIS_CONVERSATIONS and on_event is not None:
            on_event(
                {
                    "warning": f"collection {collection!r} has {available} clusters of {settings.cluster_size} "
                    f"chunks: synthesizing {available} conversations, not the default {SYNTHESIS_CONVERSATIONS} "
                    "(a smaller --cluster-size gives more, each over fewer chunks)"
                }
            )
    if conversations > available:
        raise InputError(
            f"collection {collection!r} has {available} clusters of {settings.cluster_size} chunks: ask "
            f"for at most {available} conversations, or use a smaller --cluster-size"
        )
    prepare_ray(settings.ray)  # a cluster that cannot be joined, or an object no node can take, stops here too
    outcome = run_settled(
        builder,
        "synthesize",
        resolved,
        {"collection": collection, "conversations": conversations, "turns": turns},
        settings,
        run_id=run_id,
        on_event=on_event,
        resume=resume,
    )
    files = {
        "dialogues": outcome.run_dir.file(DIALOGUES_FILE),
        "beir": outcome.run_dir.file(BEIR_DIR),
        "qrels": outcome.run_dir.file(TREC_QRELS_FILE),
        "stats": outcome.run_dir.file(STATS_FILE),
    }
    stats = dict(outcome.values.get("stats", {}))
    return job_result(
        SynthesisResult,
        outcome,
        collection=collection,
        dialogues=[Dialogue.model_validate(record) for record in load_jsonl(files["dialogues"])],
        stats=stats,
        lexical_overlap=dict(stats.get("lexical_overlap", {})),
        overlap_rejections=dict(stats.get("overlap_rejections", {})),
        files=files,
    )


estimate_synthesis = estimate_of(
    "estimate_synthesis",
    synthesize,
    CostEstimate,
    """Model calls, tokens and cost of a synthesis run (:func:`synthesize`'s arguments), from the real
    prompts filled with text of the expected lengths (chunks of the collection's mean length, answers
    of ~1,200 characters).""",
)


def _default_conversations(clusters: int) -> int:
    """The conversations a run makes when none are asked for: the default, or one per cluster where there are fewer."""
    return min(SYNTHESIS_CONVERSATIONS, clusters)


def _estimate(
    workspace: Workspace, collection: str, conversations: int | None, turns: int, settings: SynthesisContext
) -> CostEstimate:
    """:func:`estimate_synthesis` once the call is checked; without ``conversations``, the default as the run fits it
    (one per cluster of ``cluster_size`` chunks of the path, where there are fewer than the default)."""
    store = _store(workspace, collection, settings.chroma_host)
    lengths: list[int] = []
    drawn_from: list[str] = []  # the chunks of the page kinds asked for: the questioner's supply is of these
    for page in store.iter_all(include=("documents", "metadatas")):  # one pass over the collection
        lengths.extend(len(text) for text in page["documents"])
        drawn_from.extend(
            chunk_id
            for chunk_id, metadata in zip(page["ids"], page["metadatas"])
            if chunk_page_kind(metadata) in settings.page_kinds
        )
    if not lengths:
        raise InputError(f"collection {collection!r} is empty")
    if conversations is None:  # the path of the chunks drawn from is cut into clusters of cluster_size
        conversations = _default_conversations(max(1, math.ceil(len(drawn_from) / settings.cluster_size)))
    passage = {"id": "x", "title": "title", "text": "x" * (sum(lengths) // len(lengths))}
    related = [passage] * (settings.cluster_size - 1)
    question, answer = "q" * ESTIMATE_QUESTION_CHARS, "a" * ESTIMATE_ANSWER_CHARS
    # A turn's kind is drawn at the rates set (a clarification, after an underspecified turn, costs what an
    # answerable turn does); a typed turn asks its own questioner and responder, and unanswerable and
    # multi-passage turns one label judge more. Re-plans of rejected labels are not counted.
    kinds = {
        "unanswerable": settings.unanswerable_rate,
        "partial": settings.partial_rate,
        "underspecified": settings.underspecified_rate,
        "multi-passage": settings.multi_gold_rate,
    }
    shares = {"answerable": 1.0 - sum(kinds.values()), **{kind: rate for kind, rate in kinds.items() if rate > 0}}
    calls = input_tokens = output_tokens = 0.0
    for turn in range(turns):
        history = [{"question": question, "response": answer}] * turn
        for kind, share in shares.items():
            prompts = _turn_prompts(kind, passage, related, history, question, answer, bool(turn))
            for role, messages in prompts.items():
                calls += share
                input_tokens += share * estimate_tokens("".join(message["content"] for message in messages))
                output_tokens += share * ESTIMATE_OUTPUT_TOKENS[role]
    calls, input_tokens, output_tokens = (
        round(value * conversations) for value in (calls, input_tokens, output_tokens)
    )
    notes = [where_items_run(settings.ray, "conversations"), where_graph_builds(settings.ray)]
    if conversations * turns < MIN_RANKING_QUERIES:
        notes.append(
            f"{conversations * turns:,} turns asked, fewer than {MIN_RANKING_QUERIES}: too small a benchmark to rank "
            "retrievers (`benchsmith audit` calls it unreliable)"
        )
    if settings.llm == BASELINE:
        notes.append(_supply_note(workspace, store, sorted(drawn_from), settings.seed, conversations * turns))
    return priced(
        f"{conversations} conversations × {turns} turns",
        [(settings.llm, calls, input_tokens, output_tokens)],
        notes=notes,
    )


def _supply_note(workspace: Workspace, store: VectorStore, drawn_from: list[str], seed: int, turns_asked: int) -> str:
    """How many questions the offline questioner finds in the chunks synthesis draws from
    (graphs/synthesis/supply.py), beside the turns asked for: a tree it finds little in gives repeated and
    dropped turns, said before the run."""
    return supply_note(question_supply(store, corpus_statistics(workspace, store), drawn_from, seed=seed), turns_asked)


def supply_note(supply: QuestionSupply, turns_asked: int) -> str:
    """What ``supply`` means for ``turns_asked``: enough questions; fewer, so turns are cut and dropped; or so few
    that the benchmark cannot rank retrievers whatever is asked for."""
    found = (
        f"the offline questioner finds a question the checks pass in {supply.share:.0%} of the chunks "
        f"({supply.with_question} of {supply.asked} asked): about {supply.estimated_questions:,} distinct "
        f"questions for the {turns_asked:,} turns asked"
    )
    if supply.estimated_questions >= turns_asked:
        return found
    if supply.estimated_questions < MIN_RANKING_QUERIES <= turns_asked:
        return (
            f"{found}; the benchmark holds at most about as many turns, fewer than {MIN_RANKING_QUERIES}: too few to "
            "rank retrievers (`benchsmith audit` calls it unreliable); a model (--llm openai:<model>) asks of more "
            "passages"
        )
    return (
        f"{found}; turns that repeat another conversation's are cut and refused ones dropped: ask for fewer "
        "(--conversations, --turns), or a model (--llm openai:<model>) asks of more passages"
    )


def _turn_prompts(
    kind: str,
    passage: dict[str, Any],
    related: list[dict[str, Any]],
    history: list[dict[str, Any]],
    question: str,
    answer: str,
    follow_up: bool,
) -> dict[str, list[dict[str, str]]]:
    """The prompts one turn of ``kind`` sends, by role, filled with text of the expected lengths."""
    if kind == "answerable":
        prompts = {
            "questioner": Questioner().messages(gold=passage, related=related, history=history, switch="soft"),
            "responder": Responder().messages(gold=passage, history=history, question=question),
        }
    else:
        passages = [] if kind == "unanswerable" else [passage, passage]
        asked = [passage] if kind == "unanswerable" else passages
        prompts = {
            "questioner": TypedQuestioner().messages(kind=kind, passages=asked, history=history),
            "responder": ReferenceResponder().messages(
                kind=kind, passages=passages, history=history, question=question
            ),
        }
        if kind == "unanswerable":
            pooled = [passage["text"]] * (1 + UNANSWERABLE_POOL_DEPTH)
            prompts["pool judge"] = PoolJudge(len(pooled)).messages(
                history=[(question, answer)] * len(history), question=question, passages=pooled
            )
        elif kind == "multi-passage":
            prompts["contribution judge"] = ContributionJudge().messages(
                question=question, answer=answer, passages=passages
            )
    if follow_up:
        prompts["polisher"] = Polisher().messages(history=history, question=question)
    return prompts
