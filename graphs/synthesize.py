"""Conversational benchmark synthesis (MTR-Pipeline).

    plan ─→ dispatch ─┬→ Send × batch ─→ converse (one conversation per cluster) ─→ gather ─→ dispatch
                      ├→ wait ─→ dispatch     (other workers hold the last conversations)
                      └→ export ─→ END        (all recorded)

    conversation_graph (one conversation; also usable on its own):
    begin ─→ walker → turn_type ─┬→ answerable ──────┐
        └→ END                   ├→ unanswerable ────┤
                                 ├→ partial ─────────┤
                                 ├→ underspecified ──┼→ questioner → responder → label_judge ─┬→ polisher → router ─┬→ walker
                                 ├→ multi_passage ───┤                                        └→ turn_type          └→ END
                                 └→ clarification ───┘

The walker picks each turn's gold chunk along the cluster's semantic path (soft switch),
stays on it (follow-up) or jumps to a distant cluster (hard switch); labels follow the
similarity rule both ways (tools/dialogue_walk.py: soft at or above the soft-switch threshold,
hard below it and on another document; a drawn switch that finds no such chunk is re-drawn or
relabelled), and every turn records its similarity to the previous gold. Each turn then draws its type (tools/dialogue_walk.py, rates
``--unanswerable-rate``, ``--partial-rate``, ``--underspecified-rate``, ``--multi-gold-rate``; all 0
by default): an answerable turn (below), an unanswerable one about a chunk held out of the
corpus (one chunk per cluster is reserved for that and is never gold), a partial one, an
underspecified one (then the next turn is its clarification) or a multi-passage one; its
question type is drawn from ``--question-types``. Those turns' questions and reference replies
come from agents/turn_types.py, and ``label_judge`` checks the label (no chunk of BM25's pool
over the remaining corpus answers an unanswerable question; each gold of a multi-passage turn
contributes) or re-plans, then drops, the turn. The questioner, a
simulated user, asks what the gold chunk answers; a question whose lexical overlap with the
gold (evals/lexical_overlap.py) is above ``max_overlap`` is asked again with the overlap fed
back as one corrective turn, then the turn is re-planned on another gold chunk, and a question
still above the limit is kept flagged (``overlap_rejected``); an ill-formed question (the
audit's rule, evals/question_form.py) is re-planned the same way (``form_replans``). The responder, a
simulated deployed assistant, answers from the gold chunk only; the polisher makes the
question sound mid-conversation, and rewrites that change the meaning are rejected; the
router draws the next turn's switch. The conversation graph returns its turns (and streams
them one update per turn); the run's ``converse`` node records each finished conversation
once, as a work item (graphs/runtime/resources.run_items: ``dialogues.jsonl`` for one process; with a
database, the queue that workers on many machines claim conversations from), and ``export``
writes BEIR and TREC files and the statistics.

State holds ids, counters and the one dialogue in flight; chunk texts stay in Chroma, the
plan in ``plan.jsonl``, the collection's word and similarity statistics (computed once per
collection; the baseline agents rank sentences by them) in ``corpus_stats/``. The
conversation graph is not checkpointed inside a run: a conversation cut off mid-way is
replayed from the response cache at no model cost.
"""

from __future__ import annotations

import functools
import operator
import random
import threading
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command, Send
from typing_extensions import Required, TypedDict

from benchsmith.agents.models import ModelSeam
from benchsmith.agents.offline.namesakes import documented_entries, shared_name, shared_subject, subjects
from benchsmith.agents.polisher import Polisher
from benchsmith.agents.pool_judge import PoolJudge
from benchsmith.agents.question_types import question_type_of
from benchsmith.agents.questioner import Questioner
from benchsmith.agents.responder import Responder
from benchsmith.agents.turn_types import ContributionJudge, ReferenceResponder, TypedQuestioner
from benchsmith.evals.benchmark_stats import benchmark_statistics
from benchsmith.evals.gate_counts import gate_counts
from benchsmith.evals.lexical_overlap import lexical_overlap
from benchsmith.evals.quality_gate import QUESTION_CLASSES, TurnEvidence, judge_question, judge_turn
from benchsmith.evals.question_form import question_form
from benchsmith.evals.turn_labels import label_counts
from benchsmith.graphs.contexts.synthesize import SynthesisContext, with_preset_rates
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.fanout import claimed_work, dispatch_items, wait_for_workers
from benchsmith.graphs.runtime.inline import InlineGraph, once_per_run
from benchsmith.graphs.runtime.progress import report_advance
from benchsmith.graphs.runtime.resources import (chroma_client, concurrency_slot, run_items, run_seam)
from benchsmith.stores.benchmark_files import (BEIR_SUBDIRECTORY, DIALOGUES_FILE, HELD_OUT_FILE, benchmark_records,
                                              canonicalize, held_out_ids, write_beir, write_held_out)
from benchsmith.stores.bounded_cache import BoundedCache
from benchsmith.stores.clusters import StoredClustering, clustering_paths, clustering_serves, read_clustering
from benchsmith.stores.corpus_stats import CorpusStatistics, corpus_stats_path, load_corpus_stats
from benchsmith.stores.errors import InputError
from benchsmith.stores.files import write_json_atomic
from benchsmith.stores.jsonl import load_jsonl, write_jsonl_atomic
from benchsmith.stores.trec import write_trec_qrels
from benchsmith.stores.turn_labels import TURN_LABELS_FILE, write_turn_labels
from benchsmith.stores.vectors import VectorStore
from benchsmith.stores.work_items import WorkItems
from benchsmith.stores.workspace import Workspace
from benchsmith.tools.corpus_clusters import cluster_collection, clustering_kinds
from benchsmith.tools.corpus_statistics import corpus_statistics
from benchsmith.history import exchanges
from benchsmith.tools.bm25 import BM25Index, top_scored
from benchsmith.tools.dialogue_walk import (MULTI_GOLD_SIZES, Position, SwitchPolicy, TurnKindPolicy, choose_switch,
                                            companion_chunks, draw_question_type, draw_switch, draw_turn_kind,
                                            parse_question_types, reserved_chunks, soft_switch_candidates, turn_kind_position,
                                            turn_rng)
from benchsmith.tools.embedding import ChromaEmbeddingFunction
from benchsmith.tools.dedup import DuplicateMatch
from benchsmith.tools.held_out import without_held_out
from benchsmith.tools.polish import review_polish

PLAN_FILE = "plan.jsonl"
BEIR_DIR, TREC_QRELS_FILE, STATS_FILE = BEIR_SUBDIRECTORY, "qrels.trec", "stats.json"
DEFAULT_CONVERSATIONS, DEFAULT_TURNS = 20, 6
STANDALONE_RUN_ID = "conversations"  # where a conversation run on its own books its model calls


class SynthesisInput(TypedDict):
    run_id: str
    collection: str
    conversations: int
    turns: int


class SynthesisOutput(TypedDict, total=False):
    run_id: str
    collection: str
    conversations_written: int
    turns_written: int
    stats: dict[str, Any]


class SynthesisState(SynthesisInput, SynthesisOutput, total=False):
    planned: int
    finished: Annotated[int, operator.add]


class ConversationInput(TypedDict, total=False):
    """One conversation: over a cluster of the collection's clustering, or over given chunks."""

    collection: Required[str]
    conversation_id: Required[str]
    cluster_id: int  # a cluster of the collection's clustering (SynthesisContext.cluster_size)...
    chunk_ids: list[str]  # ...or these chunks, walked in this order
    turns_wanted: int  # default 6
    run_id: str  # the run whose model cache and usage ledger the calls go to; default "conversations"


class ConversationOutput(TypedDict, total=False):
    conversation_id: str
    cluster_id: int | None
    turns: list[dict[str, Any]]  # stores.benchmark_files.Turn, one per turn
    dropped_turns: list[dict[str, Any]]  # {"position", "kind", "question", "class", "reason"} per turn the gate dropped


class ConversationState(ConversationInput, ConversationOutput, total=False):
    source: dict[str, Any]  # the input the turns were made from: a changed input is refused
    position: dict[str, int]  # {"cluster", "offset"} of the last finished turn's gold chunk
    switch: str  # how the turn being built relates to the previous one
    switch_drawn: str  # what the router drew for it (the walker labels the chunk it finds by the rule)
    gold: dict[str, int]  # position of the gold chunk of the turn being built
    gold_id: str
    similarity: float | None  # of the turn's gold to the previous turn's gold (None on the first turn)
    draft: dict[str, str | None]  # the questioner's question, rewrite and (baseline) subject for the turn in flight
    overlap: dict[str, Any]  # the kept question's lexical overlap, and the corrective turns and re-plans it took
    previous_subject: str | None  # what the previous question was about (the baseline polisher refers back to it)
    response: str
    kind: str  # the turn type being built: answerable, unanswerable, partial, underspecified, multi-passage, clarification
    kind_drawn: str  # what the turn-type draw gave (a kind no chunk or judge allows becomes answerable)
    question_type: str | None  # the question type drawn from --question-types (None: none asked for)
    turn_plan: dict[str, Any]  # the turn's gold, held-out, candidate and asked chunk ids
    label_attempt: dict[str, Any]  # {"turn", "attempt", "dropped", "refused", "gate"}: rejections of the turn in flight
    turns: Annotated[list[dict[str, Any]], operator.add]
    dropped_turns: Annotated[list[dict[str, Any]], operator.add]  # turns the quality gate dropped, with why


# ---------------------------------------------------------------------------------------
# Shared resources, opened once per process; a conversation run in line looks each up once
# (graphs/runtime/inline.once_per_run), not at every node.

job = JobRuntime(SynthesisContext)  # the runtime's settings, workspace and run directories


@functools.lru_cache(maxsize=8)
def _store(workspace_root: str, collection: str, chroma_host: str | None) -> VectorStore:
    client = chroma_client(Workspace.resolve(workspace_root), chroma_host)
    return VectorStore.open_existing(client, collection, lambda spec: ChromaEmbeddingFunction(spec=spec))


def _vector_store(runtime: Runtime[SynthesisContext], collection: str) -> VectorStore:
    return once_per_run(("vector store", collection),
                        lambda: _store(str(job.workspace(runtime).root), collection, job.context(runtime).chroma_host))


def _seam(runtime: Runtime[SynthesisContext], run_id: str | None) -> ModelSeam:
    context, run_id = job.context(runtime), run_id or STANDALONE_RUN_ID
    return once_per_run(("seam", run_id), lambda: run_seam(job.workspace(runtime), run_id, context.llm, context))


@functools.lru_cache(maxsize=8)
def _load_clustering(path: str, modified: float) -> StoredClustering | None:
    """Parsed once per file version (``modified``), not at every turn."""
    return read_clustering(Path(path))


def _clustering(runtime: Runtime[SynthesisContext], collection: str) -> StoredClustering:
    return once_per_run(("clustering", collection), lambda: _current_clustering(runtime, collection))


def _current_clustering(runtime: Runtime[SynthesisContext], collection: str) -> StoredClustering:
    context = job.context(runtime)
    workspace = job.workspace(runtime)
    kinds = clustering_kinds(context.page_kinds)  # a clustering of the chunks of these page kinds (stores/clusters.py)
    clustering = None
    for path in clustering_paths(workspace, collection, context.cluster_size, context.neighbours, context.seed, kinds):
        found = _load_clustering(str(path), path.stat().st_mtime) if path.exists() else None
        if found is not None and clustering_serves(found, kinds):
            clustering = found
            break
    if clustering is None:
        raise InputError(f"no clustering of {collection!r} with size {context.cluster_size}: "
                         f"run `benchsmith cluster --collection {collection}` first")
    return clustering


def _walk(runtime: Runtime[SynthesisContext], state: ConversationState) -> list[list[str]]:
    """The clusters a conversation walks: the collection's clustering, or the given chunks as one."""
    if state.get("chunk_ids"):
        return [list(state["chunk_ids"])]
    return _clustering(runtime, state["collection"]).clusters


# Keyed by (workspace, collection, chunk id): an id names a span of a file (tools/documents.py), and the same
# path and span in another corpus is another text. Within a collection an id's text and vector stay as ingested
# (re-ingesting changed files is a new collection's job: see `benchsmith ingest`). Bounded, the least recently
# used dropped, so a long-lived process (Studio, a worker) does not keep every chunk it ever read: a turn reads
# about 30 chunks (its cluster and the next one's, and distant candidates), so 4096 holds the working set of 64
# conversations in flight at once (64 × ~30 ≈ 2000; the default runs 4), for ~8 MB of 1 KB passages and ~6 MB
# of 384-d vectors. A chunk's record and vector are read together: a read of the store costs about a
# millisecond of CPU whatever it returns (Chroma's query and its worker threads), and what reads one soon
# reads the other.
PASSAGE_CACHE_SIZE = 4096
Chunk = tuple[dict[str, Any], np.ndarray]  # the record ({"text", **metadata}) and the vector
_chunk_cache: BoundedCache[tuple[str, str, str], Chunk] = BoundedCache(PASSAGE_CACHE_SIZE)
_statistics_lock = threading.Lock()


def _passage_records(runtime: Runtime[SynthesisContext], collection: str, ids: list[str]) -> dict[str, dict[str, Any]]:
    chunks = _chunks(runtime, collection, ids)
    if missing := [chunk_id for chunk_id in ids if chunk_id not in chunks]:
        raise InputError(f"chunk ids missing from collection {collection!r}: {missing[:3]} (re-cluster after re-ingesting)")
    return {chunk_id: chunk[0] for chunk_id, chunk in chunks.items()}


def _passages(runtime: Runtime[SynthesisContext], collection: str, ids: list[str]) -> list[dict[str, Any]]:
    records = _passage_records(runtime, collection, ids)
    return [{"id": chunk_id, "title": records[chunk_id].get("title", ""), "text": records[chunk_id]["text"]}
            for chunk_id in ids]


def _embeddings(runtime: Runtime[SynthesisContext], collection: str, ids: list[str]) -> dict[str, np.ndarray]:
    chunks = _chunks(runtime, collection, ids)
    return {chunk_id: chunks[chunk_id][1] for chunk_id in ids}


def _chunks(runtime: Runtime[SynthesisContext], collection: str, ids: list[str]) -> dict[str, Chunk]:
    """``{chunk id: (record, vector)}`` from the cache, the ids it lacks read from the collection's store at once;
    an id the store lacks is absent."""
    scope = (str(job.workspace(runtime).root), collection)

    def fetch_missing(keys: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], Chunk]:
        fetched = _vector_store(runtime, collection).chunks([key[2] for key in keys])
        return {(*scope, chunk_id): chunk for chunk_id, chunk in fetched.items()}

    found = _chunk_cache.get_or_fetch([(*scope, chunk_id) for chunk_id in ids], fetch_missing)
    return {key[2]: chunk for key, chunk in found.items()}


@functools.lru_cache(maxsize=4)
def _load_corpus_stats(workspace_root: str, collection: str, modified: float) -> CorpusStatistics | None:
    """Read once per file version (``modified``), not at every turn."""
    return load_corpus_stats(Workspace.resolve(workspace_root), collection)


def _corpus_stats(runtime: Runtime[SynthesisContext], collection: str) -> CorpusStatistics:
    """The collection's word and similarity statistics; computed here when no run planned them
    (a conversation run on its own)."""
    return once_per_run(("corpus statistics", collection), lambda: _current_corpus_stats(runtime, collection))


def _current_corpus_stats(runtime: Runtime[SynthesisContext], collection: str) -> CorpusStatistics:
    workspace = job.workspace(runtime)
    path = corpus_stats_path(workspace, collection)
    with _statistics_lock:
        if not path.exists():
            corpus_statistics(workspace, _vector_store(runtime, collection))
    statistics = _load_corpus_stats(str(workspace.root), collection, path.stat().st_mtime)
    if statistics is None:
        raise InputError(f"{path}: unreadable corpus statistics (delete the file to recompute them)")
    return statistics


def _cosine(first: np.ndarray, second: np.ndarray) -> float:
    norms = float(np.linalg.norm(first) * np.linalg.norm(second))
    return float(np.dot(first, second) / norms) if norms else 0.0


# ---------------------------------------------------------------------------------------
# The conversation graph.

def begin(state: ConversationState, runtime: Runtime[SynthesisContext]) -> Command[Literal["walker", "__end__"]]:
    """Check the input; refuse a changed one under an id that already has turns; end at once
    when the conversation is already finished."""
    has_cluster, has_chunks = state.get("cluster_id") is not None, bool(state.get("chunk_ids"))
    if has_cluster == has_chunks:
        raise InputError(f"conversation {state['conversation_id']!r}: give either cluster_id or chunk_ids")
    wanted = state.get("turns_wanted", DEFAULT_TURNS)
    if wanted < 1:
        raise InputError(f"conversation {state['conversation_id']!r}: turns_wanted must be at least 1")
    source = {"collection": state["collection"], "cluster_id": state.get("cluster_id"),
              "chunk_ids": list(state.get("chunk_ids") or []), "turns_wanted": wanted}
    check_turn_types(job.context(runtime))  # impossible rates or an unknown question type stop here
    if state.get("source") not in (None, source):
        raise InputError(f"conversation {state['conversation_id']!r} was made from {state['source']}, not {source}: "
                         "a changed input under an existing id is refused; use a new conversation id (thread)")
    if has_cluster and not 0 <= state["cluster_id"] < len(_walk(runtime, state)):
        raise InputError(f"conversation {state['conversation_id']!r}: no cluster {state['cluster_id']} in the "
                         f"clustering of {state['collection']!r}")
    done = len(state.get("turns", [])) >= wanted
    return Command(goto=END if done else "walker", update={"source": source, "turns_wanted": wanted})


def _document(runtime: Runtime[SynthesisContext], collection: str, chunk_id: str) -> str:
    """The document (page) a chunk comes from; a chunk without one is its own."""
    record = _passage_records(runtime, collection, [chunk_id])[chunk_id]
    return str(record.get("doc_id") or record.get("source") or chunk_id)


def _plan_turn(runtime: Runtime[SynthesisContext], state: ConversationState, drawn: str,
               excluded: frozenset[str] = frozenset(), replan: int = 0) -> dict[str, Any] | None:
    """The gold chunk of the turn being built and its label (tools/dialogue_walk.choose_switch),
    avoiding the ``excluded`` chunks; None when no chunk is left. A function of the finished
    turns, the draw and the exclusions: re-running it after a crash picks the same chunk."""
    clusters = _walk(runtime, state)
    turns = state.get("turns", [])
    collection = state["collection"]
    excluded = excluded | frozenset(_reserved(runtime, state).values())  # never gold: turns may hold them out
    if not turns:
        # the conversation's cluster first; when none of its chunks is left (each refused: a format
        # specification's tables have nothing a user asks), the clusters after it in the walk
        first = state.get("cluster_id") or 0
        found = next(((cluster, offset) for step in range(len(clusters))
                      for cluster in [(first + step) % len(clusters)]
                      for offset, chunk_id in enumerate(clusters[cluster]) if chunk_id not in excluded), None)
        if found is None:
            return None
        cluster, offset = found
        # One read of the store for what the next nodes read first: this cluster's passages (the
        # questioner) and the next cluster's vectors (the second turn's soft candidates).
        candidates = soft_switch_candidates(clusters, Position(cluster, offset), set())
        _chunks(runtime, collection, [clusters[cluster][offset], *(clusters[c.cluster][c.offset] for c in candidates)])
        return {"gold": {"cluster": cluster, "offset": offset}, "switch": "start", "switch_drawn": "start",
                "gold_id": clusters[cluster][offset], "similarity": None}
    here = Position(**state["position"])
    previous_id = clusters[here.cluster][here.offset]
    used = {gold for turn in turns for gold in turn["gold_ids"]}
    neighbourhood = [clusters[c.cluster][c.offset] for c in soft_switch_candidates(clusters, here, used)]
    _embeddings(runtime, collection, [previous_id, *neighbourhood])  # one fetch for the soft candidates
    previous_document = _document(runtime, collection, previous_id)

    def similarity(position: Position) -> float:
        chunk_id = clusters[position.cluster][position.offset]
        vectors = _embeddings(runtime, collection, [previous_id, chunk_id])
        return round(_cosine(vectors[previous_id], vectors[chunk_id]), 4)  # the figure the turn records decides

    def same_document(position: Position) -> bool:
        return _document(runtime, collection, clusters[position.cluster][position.offset]) == previous_document

    context = job.context(runtime)
    purpose = f"walker:replan{replan}" if replan else "walker"  # a re-plan draws other distant chunks
    threshold = _corpus_stats(runtime, collection).similarity_threshold(context.soft_switch_margin)
    rng = turn_rng(context.seed, state["conversation_id"], len(turns), purpose)
    chosen = choose_switch(clusters, here, drawn, similarity=similarity, same_document=same_document,
                           threshold=threshold, rng=rng, used=used, excluded=set(excluded))
    if chosen is None:
        return None
    position, switch = chosen
    return {"gold": {"cluster": position.cluster, "offset": position.offset}, "switch": switch, "switch_drawn": drawn,
            "gold_id": clusters[position.cluster][position.offset], "similarity": similarity(position)}


def walker(state: ConversationState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Pick the gold chunk of the next turn from the last finished turn and the drawn switch,
    labelled by the similarity rule (a function of them: re-running it after a crash picks the
    same chunk)."""
    plan = _plan_turn(runtime, state, state["switch"] if state.get("turns") else "start")
    assert plan is not None  # nothing is excluded: the previous gold (or the cluster's first chunk) remains
    return plan


# ---------------------------------------------------------------------------------------
# Turn types (issue 22): drawn per turn like switches, each built by its own node.

TurnRoute = Literal["answerable", "unanswerable", "partial", "underspecified", "multi_passage", "clarification"]
NODE_OF_KIND = {"multi-passage": "multi_passage"}
ANSWERABILITY_OF_KIND = {"unanswerable": "unanswerable", "partial": "partial", "underspecified": "underspecified"}
UNANSWERABLE_POOL_DEPTH = 10  # BM25's top chunks of the remaining corpus the judge reads for an unanswerable turn
NAMESAKE_SEARCH_DEPTH = 20  # BM25's top chunks searched for another meaning of an underspecified turn's term
LABEL_ATTEMPTS = 4  # plans a turn type tries (held-out chunks of this cluster, then the next clusters'; other chunks)
# Other gold chunks a turn whose question is ill-formed moves to: real documentation holds many chunks
# with nothing a user asks (index pages, tables, release notes), more than the overlap re-plans allow.
FORM_REPLANS = 12
# Offline, a chunk with nothing to ask costs nothing to find out (a third of documentation chunks have
# something the offline questioner asks): try more of them before a turn is given up.
BASELINE_FORM_REPLANS = 40
PARTIAL_CLUSTERS = 4  # the clusters whose held-out chunk a partial turn may be planned on


def _kind_policy(context: SynthesisContext) -> TurnKindPolicy:
    context = with_preset_rates(context)  # a run started from Studio or a graph call names its preset only
    try:
        return TurnKindPolicy(context.unanswerable_rate, context.partial_rate, context.underspecified_rate,
                              context.multi_gold_rate)
    except ValueError as error:
        raise InputError(str(error)) from None


def _question_mix(context: SynthesisContext) -> dict[str, float]:
    try:
        return parse_question_types(with_preset_rates(context).question_types)
    except ValueError as error:
        raise InputError(f"--question-types: {error}") from None


def check_turn_types(context: SynthesisContext) -> None:
    """The turn-type rates add up to at most 1 and the question-type mix parses (InputError)."""
    _kind_policy(context), _question_mix(context)


def _reserved(runtime: Runtime[SynthesisContext], state: ConversationState) -> dict[int, str]:
    """{cluster: the chunk turns may hold out}; none unless a held-out turn type has a rate."""
    context = job.context(runtime)
    if not _kind_policy(context).holds_out:
        return {}
    return reserved_chunks(_walk(runtime, state), context.seed)


def _kind_plan(runtime: Runtime[SynthesisContext], state: ConversationState, kind: str,
               attempt: int = 0) -> dict[str, Any] | None:
    """The chunks of a turn of ``kind`` around the walker's gold: ``gold_ids`` (qrels),
    ``held_out_ids`` (removed from the corpus), ``candidate_ids`` (what an underspecified turn
    could mean), ``asked_ids`` (the passages the questioner reads, in order); None when the
    cluster has no such chunks. ``attempt``: an unanswerable turn the judge rejected asks about
    the next cluster's held-out chunk."""
    clusters = _walk(runtime, state)
    gold_id, cluster = state["gold_id"], state["gold"]["cluster"]
    reserved = _reserved(runtime, state)
    plan: dict[str, Any] = {"gold_ids": [gold_id], "held_out_ids": [], "candidate_ids": [], "asked_ids": [gold_id]}
    if kind == "answerable":
        return plan
    if kind == "clarification":
        # the chunk the user meant: the walker's gold of the underspecified turn (where the conversation stands)
        here = state["position"]
        meant = clusters[here["cluster"]][here["offset"]]
        candidates = list(state["turns"][-1].get("candidate_ids") or [])
        others = [chunk for chunk in candidates if chunk != meant]
        if meant not in candidates:
            return None
        return {**plan, "gold_ids": [meant], "candidate_ids": candidates, "asked_ids": [meant, *others[:1]]}
    turns = state.get("turns", [])
    sizes = {"unanswerable": 0, "partial": 1, "underspecified": 2}  # the chunks of the cluster the turn is about
    size = sizes[kind] if kind in sizes else turn_rng(job.context(runtime).seed, state["conversation_id"], len(turns),
                                                      "multi-gold").choice(MULTI_GOLD_SIZES)
    # Chunks the conversation has not asked about yet first: they still have questions left.
    used = {chunk for turn in turns for chunk in [*turn["gold_ids"], *(turn.get("candidate_ids") or [])]}
    others = sorted(companion_chunks(clusters[cluster], gold_id, len(clusters[cluster]), set(reserved.values())),
                    key=lambda chunk: chunk in used)
    # A re-planned turn (the judge rejected the last one) moves along the cluster: the walker's gold
    # first, then the other chunks in turn. An underspecified turn keeps the walker's gold among its
    # candidates: its clarification stays there (a follow-up), so that is the chunk the user meant.
    if kind == "underspecified":
        namesakes = _namesakes(runtime, state["collection"], gold_id,
                               leave_out={gold_id, *others, *reserved.values()})
        others = _ambiguous_partners(runtime, state["collection"], gold_id, [*others, *namesakes])
        chosen = [gold_id, *others[attempt:attempt + size - 1]]
    elif kind == "multi-passage":
        # its passages share a subject (agents/offline/namesakes.py), or it is no turn of this kind: the
        # cluster's chunks first, then those BM25 finds anywhere for what the gold is about
        searched = _same_subject(runtime, state["collection"], gold_id,
                                 leave_out={gold_id, *others, *reserved.values()})
        partners = _subject_partners(runtime, state["collection"], gold_id, [*others, *searched])
        chosen = [gold_id, *partners[attempt:attempt + size - 1]]
        if len(chosen) == size and _shared_subject(runtime, state["collection"], chosen) is None:
            return None
    else:
        chosen = [gold_id, *others[:size - 1]][:size] if not attempt else others[attempt - 1:attempt - 1 + size]
    if len(chosen) < size:
        return None
    if kind == "unanswerable":
        held = reserved.get((cluster + attempt) % len(clusters))
        return None if held is None else {**plan, "gold_ids": [], "held_out_ids": [held], "asked_ids": [held]}
    if kind == "partial":
        # the available part is about what the held-out part is about: the cluster's chunks first, then
        # those BM25 finds anywhere for it; a held-out chunk without such a partner gives way to the
        # next clusters' (few chunks share a subject with another: 15% of the standard library's)
        for step in range(attempt, attempt + PARTIAL_CLUSTERS):
            held = reserved.get((cluster + step) % len(clusters))
            if held is None:
                continue
            searched = _same_subject(runtime, state["collection"], held, leave_out={held, gold_id, *others,
                                                                                    *reserved.values()})
            chosen = _subject_partners(runtime, state["collection"], held, [gold_id, *others, *searched])[:1]
            if chosen:
                return {**plan, "gold_ids": chosen, "held_out_ids": [held], "asked_ids": [*chosen, held]}
        return None
    if kind == "underspecified":
        candidates = sorted(chosen)  # sorted: the order does not tell which one is meant
        return {**plan, "gold_ids": [], "candidate_ids": candidates, "asked_ids": candidates}
    return {**plan, "gold_ids": chosen, "asked_ids": chosen}


def _namesakes(runtime: Runtime[SynthesisContext], collection: str, gold_id: str, leave_out: set[str]) -> list[str]:
    """Chunks anywhere in the corpus that may document an entry of the gold's name: BM25's top
    chunks for the last names of the entries the gold documents. What a question leaves open is
    rarely within one cluster of the semantic path: lzma's and bz2's ``decompress`` lie apart."""
    (gold,) = _passages(runtime, collection, [gold_id])
    return _search(runtime, collection, sorted({part for entry in documented_entries(gold)
                                                for part in entry.split(".")[-2:]}), leave_out)


def _same_subject(runtime: Runtime[SynthesisContext], collection: str, chunk_id: str, leave_out: set[str]) -> list[str]:
    """Chunks anywhere in the corpus that may be about what ``chunk_id`` is about: BM25's top chunks
    for its subjects (agents/offline/namesakes.py ``subjects``)."""
    (passage,) = _passages(runtime, collection, [chunk_id])
    return _search(runtime, collection, sorted(subjects(passage)), leave_out)


def _search(runtime: Runtime[SynthesisContext], collection: str, terms: list[str], leave_out: set[str]) -> list[str]:
    if not terms:
        return []
    index = _bm25(str(job.workspace(runtime).root), collection, job.context(runtime).chroma_host)
    return top_scored(index.doc_ids, index.scores(" ".join(terms)), NAMESAKE_SEARCH_DEPTH, leave_out=leave_out)


def _ambiguous_partners(runtime: Runtime[SynthesisContext], collection: str, gold_id: str,
                        others: list[str]) -> list[str]:
    """The chunks of ``others`` (the gold's cluster, then its namesakes) that document another entry
    of a name the gold's entry has (agents/offline/namesakes.py ``shared_name``): two meanings that
    lead a user to call different things. None: the turn becomes an answerable one."""
    passages = {passage["id"]: passage for passage in _passages(runtime, collection, [gold_id, *others])}
    return [chunk for chunk in others if shared_name([passages[gold_id], passages[chunk]]) is not None]


def _subject_partners(runtime: Runtime[SynthesisContext], collection: str, chunk_id: str,
                      others: list[str]) -> list[str]:
    """The chunks of ``others`` that have a fact about a subject ``chunk_id`` has a fact about."""
    passages = {passage["id"]: passage for passage in _passages(runtime, collection, [chunk_id, *others])}
    return [other for other in others if other != chunk_id
            and shared_subject([passages[chunk_id], passages[other]]) is not None]


def _shared_subject(runtime: Runtime[SynthesisContext], collection: str, chunk_ids: list[str]) -> str | None:
    return shared_subject(_passages(runtime, collection, chunk_ids))


def turns_so_far(state: ConversationState) -> int:
    return len(state.get("turns", []))


def _position(state: ConversationState) -> int:
    """The place of the turn in flight: the turns kept and those the quality gate dropped before it."""
    return len(state.get("turns", [])) + len(state.get("dropped_turns", []))


def turn_type(state: ConversationState, runtime: Runtime[SynthesisContext]) -> Command[TurnRoute]:
    """Draw the turn's type (seeded per conversation and turn, as the switch is) and its question
    type; the turn after an underspecified one is its clarification. A type the cluster cannot
    give, or one the judge rejected, becomes an answerable turn (recorded as dropped)."""
    context = job.context(runtime)
    turns = state.get("turns", [])
    index = _position(state)
    attempt = state.get("label_attempt") or {}
    attempt = attempt if attempt.get("turn") == index else {}
    if turns and turns[-1].get("answerability") == "underspecified":
        drawn = "clarification"
    else:
        drawn = draw_turn_kind(_kind_policy(context), turn_kind_position(context.seed, state["conversation_id"], index))
    kind, dropped = drawn, attempt.get("dropped")
    if dropped or (drawn != "answerable" and _kind_plan(runtime, state, drawn, attempt.get("attempt", 0)) is None):
        kind, dropped = "answerable", dropped or drawn
    question_type = draw_question_type(_question_mix(context),
                                       turn_rng(context.seed, state["conversation_id"], index, "question-type"))
    return Command(goto=NODE_OF_KIND.get(kind, kind),  # type: ignore[arg-type]
                   update={"kind": kind, "kind_drawn": drawn, "question_type": question_type,
                           "label_attempt": {**attempt, "turn": index, "dropped": dropped}})


def _build_kind(kind: str):
    def build(state: ConversationState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
        attempt = (state.get("label_attempt") or {}).get("attempt", 0)
        plan = _kind_plan(runtime, state, kind, attempt)
        assert plan is not None  # turn_type routed here because the plan exists
        return {"turn_plan": plan}

    build.__name__ = NODE_OF_KIND.get(kind, kind)
    build.__doc__ = f"The chunks of a {kind} turn (_kind_plan)."
    return build


KIND_NODES = [_build_kind(kind) for kind in ("answerable", "unanswerable", "partial", "underspecified",
                                             "multi-passage", "clarification")]


def _ask(runtime: Runtime[SynthesisContext], state: ConversationState, plan: dict[str, Any],
         seam: ModelSeam) -> list[tuple[float, Any]]:
    """The questioner's drafts for one gold chunk with their overlaps: the first, then one per
    corrective turn while the last is above ``max_overlap`` (at most ``overlap_attempts``)."""
    context = job.context(runtime)
    cluster = _walk(runtime, state)[plan["gold"]["cluster"]]
    passages = _passages(runtime, state["collection"], cluster)
    gold = next(p for p in passages if p["id"] == plan["gold_id"])
    related = [p for p in passages if p["id"] != plan["gold_id"]]
    turns = state.get("turns", [])

    def measure_overlap(question: str) -> float:
        return round(lexical_overlap(question, [gold["text"]]), 4)

    refused = [question for question in (state.get("label_attempt") or {}).get("refused", [])]
    inputs = {"gold": gold, "related": related, "history": turns, "switch": plan["switch"],
              **({"question_type": state["question_type"]} if state.get("question_type") else {}),
              **({"refused": refused} if refused else {}),
              "corpus_stats": _corpus_stats(runtime, state["collection"]),
              "previous_subject": state.get("previous_subject") if turns else None,
              "max_overlap": context.max_overlap, "measure_overlap": measure_overlap}
    drafts: list[tuple[float, Any]] = []
    while True:
        rejected = [{"question": draft.question, "overlap": overlap} for overlap, draft in drafts]
        # The first call's inputs (and so its prompt and cache key) are those of a run without the limit.
        draft = seam.run(Questioner(), **inputs, **({"rejected": rejected} if rejected else {}))
        drafts.append((measure_overlap(draft.question), draft))
        if drafts[-1][0] <= context.max_overlap or len(rejected) >= context.overlap_attempts:
            return drafts


def questioner(state: ConversationState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Ask the turn's question; above ``max_overlap``, ask again with the overlap fed back (one
    corrective turn at a time), then re-plan the turn on another gold chunk as the walker would
    choose it; when all stay above the limit, keep the lowest-overlap question, flagged."""
    context = job.context(runtime)
    seam = _seam(runtime, state.get("run_id"))
    if state.get("kind", "answerable") != "answerable":
        return _ask_typed(runtime, state, seam)
    plan: dict[str, Any] | None = {key: state.get(key) for key in ("gold", "switch", "switch_drawn", "gold_id",
                                                                    "similarity")}
    follow_up = bool(state.get("turns"))
    refused_golds = frozenset((state.get("label_attempt") or {}).get("refused_golds", []))
    if plan["gold_id"] in refused_golds:  # the quality gate refused this gold's question: another gold
        plan = _plan_turn(runtime, state, plan.get("switch_drawn") or plan["switch"], refused_golds,
                          len(refused_golds)) or plan
    tried: list[str] = []
    # (ill-formed, overlap, order, draft, plan): a well-formed question first, then the lowest overlap
    drafts: list[tuple[bool, float, int, Any, dict[str, Any]]] = []
    corrections = form_replans = overlap_replans = 0
    while plan is not None:
        tried.append(plan["gold_id"])
        asked = _ask(runtime, state, plan, seam)
        corrections += len(asked) - 1
        # A follow-up whose chunk has nothing left to ask moves on too (labelled by the switch rule;
        # switch_drawn keeps the router's draw, so the configured rates stay checkable).
        gold = _passages(runtime, state["collection"], [plan["gold_id"]]) \
            if context.quality_gate == "replan" else None  # the gate's rules re-plan only in "replan"
        drafts += [(_ill_formed(draft.question, follow_up, gold), overlap, len(drafts) + order, draft, plan)
                   for order, (overlap, draft) in enumerate(asked)]
        ill_formed, overlap = drafts[-1][:2]
        if (overlap <= context.max_overlap and not ill_formed) or len(tried) > context.overlap_replans and (
                not ill_formed or form_replans >= (BASELINE_FORM_REPLANS if seam.is_baseline else FORM_REPLANS)):
            break
        for_form = ill_formed and overlap <= context.max_overlap
        drawn = plan.get("switch_drawn") or plan["switch"]
        # what the draw allows is used up (a follow-up's chunk, the soft neighbours): anywhere else, labelled
        # by the similarity rule
        plan = _plan_turn(runtime, state, drawn, frozenset(tried), len(tried)) or \
            (_plan_turn(runtime, state, "hard", frozenset(tried), len(tried)) if drawn != "hard" and turns_so_far(state)
             else None)
        if plan is not None:  # a re-plan made, counted by its reason
            form_replans += for_form
            overlap_replans += not for_form
    _, overlap, _, draft, kept = min(drafts, key=lambda item: item[:3])  # the earliest of the best
    return {**kept, "turn_plan": {**state["turn_plan"], "gold_ids": [kept["gold_id"]], "asked_ids": [kept["gold_id"]]},
            "draft": {"question": draft.question, "rewrite": draft.rewrite,
                      "subject": getattr(draft, "subject", None), "question_type": getattr(draft, "question_type", None)},
            "overlap": {"lexical_overlap": overlap, "overlap_rejected": overlap > context.max_overlap,
                        "overlap_corrections": corrections, "overlap_replans": overlap_replans,
                        "form_replans": form_replans}}


def _ask_typed(runtime: Runtime[SynthesisContext], state: ConversationState, seam: ModelSeam) -> dict[str, Any]:
    """The question of a turn that is not a plain answerable one (agents/turn_types.py), asked
    once: its overlap is recorded against the passages it is about, not corrected."""
    asked = _passages(runtime, state["collection"], state["turn_plan"]["asked_ids"])
    draft = seam.run(TypedQuestioner(), kind=state["kind"], passages=asked, history=state.get("turns", []),
                     question_type=state.get("question_type"), corpus_stats=_corpus_stats(runtime, state["collection"]))
    overlap = round(lexical_overlap(draft.question, [passage["text"] for passage in asked]), 4)
    return {"draft": {"question": draft.question, "rewrite": draft.rewrite, "subject": getattr(draft, "subject", None),
                      "question_type": getattr(draft, "question_type", None), "parts": getattr(draft, "parts", None)},
            "overlap": {"lexical_overlap": overlap, "overlap_rejected": False, "overlap_corrections": 0,
                        "overlap_replans": 0, "form_replans": 0}}


def _ill_formed(question: str, follow_up: bool, passages: list[dict[str, Any]] | None = None) -> bool:
    """Ill-formed by the audit's documented rule (evals/question_form.py: a template, a fragment, a
    leftover...) or, given the gold ``passages``, by the quality gate's rules that read a question
    alone (evals/quality_gate/: unaskable, a topic that is no noun phrase, a copy of its passage). A
    chunk that yields only such a question (a generated codec table has nothing to ask about) is
    re-planned, as one whose question copies it is."""
    if question_form(question, follow_up=follow_up).problems():
        return True
    if passages is None:
        return False
    evidence = TurnEvidence(question=question, reply="", previous=(("", ""),) if follow_up else (),
                            gold=tuple((passage["title"], passage["text"]) for passage in passages))
    return judge_question(evidence).broken


def responder(state: ConversationState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Answers from the gold chunk only: no other passage reaches its prompt. A turn of another
    type gets its reference reply from the passages it may use (agents/turn_types.py): none for
    an unanswerable one, the available one for a partial one, the candidates for an
    underspecified one, every gold for a multi-passage one."""
    kind = state.get("kind", "answerable")
    if kind not in ("answerable", "clarification"):
        plan = state["turn_plan"]
        usable = {"unanswerable": [], "partial": plan["gold_ids"], "underspecified": plan["candidate_ids"],
                  "multi-passage": plan["gold_ids"]}[kind]
        reply = _seam(runtime, state.get("run_id")).run(
            ReferenceResponder(), kind=kind, passages=_passages(runtime, state["collection"], usable),
            history=state.get("turns", []), question=state["draft"]["question"], parts=state["draft"].get("parts"),
            corpus_stats=_corpus_stats(runtime, state["collection"]))
        return {"response": reply.answer}
    (gold,) = _passages(runtime, state["collection"], [state["gold_id"]])
    answer = _seam(runtime, state.get("run_id")).run(
        Responder(), gold=gold, history=state.get("turns", []), question=state["draft"]["question"],
        corpus_stats=_corpus_stats(runtime, state["collection"]))
    return {"response": answer.answer}


@functools.lru_cache(maxsize=2)
def _bm25(workspace_root: str, collection: str, chroma_host: str | None) -> BM25Index:
    """BM25 over the whole collection, built once per process: the pool an unanswerable turn is checked on."""
    store = _store(workspace_root, collection, chroma_host)
    return BM25Index.from_stream((chunk_id, f"{(metadata or {}).get('title', '')} {text}")
                                 for page in store.iter_all()
                                 for chunk_id, text, metadata in zip(page["ids"], page["documents"], page["metadatas"]))


def _unanswerable_pool(runtime: Runtime[SynthesisContext], state: ConversationState) -> list[str]:
    """The retrievers' pool for the question: BM25's top chunks of the corpus that remains
    (the chunks the turn holds out left out)."""
    context = job.context(runtime)
    index = _bm25(str(job.workspace(runtime).root), state["collection"], context.chroma_host)
    held_out = set(state["turn_plan"]["held_out_ids"])
    query = " ".join([*(turn["question"] for turn in state.get("turns", [])[-1:]), state["draft"]["question"]])
    return top_scored(index.doc_ids, index.scores(query), UNANSWERABLE_POOL_DEPTH, leave_out=held_out)


def label_judge(state: ConversationState,
                runtime: Runtime[SynthesisContext]) -> Command[Literal["polisher", "turn_type", "router"]]:
    """Check the turn's label before it is kept: an unanswerable turn is kept when the judge finds
    no chunk of the retrievers' pool over the remaining corpus that answers it (the held-out
    chunk is judged with them, as what answering looks like); a multi-passage turn when every gold
    contributes to the reference answer; any of them when its question is well formed (a chunk with
    nothing left to ask gives a template). A rejected turn is re-planned (``LABEL_ATTEMPTS`` plans in
    all: an unanswerable or partial turn on the next cluster's held-out chunk, the others on the
    cluster's next chunks); then it is dropped to an answerable turn, and the turn records the drop
    (``label_dropped``) and the rejections (``label_rejections``)."""
    kind = state.get("kind", "answerable")
    seam = _seam(runtime, state.get("run_id"))
    plan, question = state["turn_plan"], state["draft"]["question"]
    follow_up = bool(state.get("turns"))
    parts = state["draft"].get("parts") or []
    asked_parts = parts if kind in ("partial", "multi-passage") else []  # an underspecified turn asks none of them
    if kind not in ("answerable", "clarification") and (
            _ill_formed(question, follow_up) or any(_ill_formed(part, True) for part in asked_parts)):
        accepted = False  # a template or a fragment (a chunk with nothing left to ask) is no such turn
    elif kind == "unanswerable":
        pool = _unanswerable_pool(runtime, state)
        passages = _passages(runtime, state["collection"], [*plan["held_out_ids"], *pool])
        verdict = seam.run(PoolJudge(len(passages)), history=exchanges(state.get("turns", [])), question=question,
                           passages=[p["text"] for p in passages], passage_titles=[p["title"] for p in passages],
                           statistics=_corpus_stats(runtime, state["collection"]))
        accepted = not any(judgment.relevant for judgment in verdict.judgments[len(plan["held_out_ids"]):])
    elif kind == "multi-passage":
        passages = _passages(runtime, state["collection"], plan["gold_ids"])
        verdict = seam.run(ContributionJudge(), question=question, answer=state["response"], passages=passages)
        accepted = len(verdict.contributes) == len(passages) and all(verdict.contributes)
    else:
        return _gated(runtime, state)
    if accepted:
        return _gated(runtime, state)
    attempt = (state.get("label_attempt") or {}).get("attempt", 0) + 1
    retry = attempt < LABEL_ATTEMPTS
    return Command(goto="turn_type", update={"label_attempt": {
        **(state.get("label_attempt") or {}), "turn": _position(state), "attempt": attempt, "rejections": attempt,
        "dropped": None if retry else kind}})


def _gated(runtime: Runtime[SynthesisContext], state: ConversationState) -> Command[Literal["polisher", "turn_type",
                                                                                           "router"]]:
    """The quality gate (evals/quality_gate.py) on the turn in flight: kept, re-asked (its question
    refused: an answerable turn's questioner asks another, a typed turn is re-planned, then dropped
    to an answerable one) or, after ``LABEL_ATTEMPTS``, dropped with its class recorded."""
    mode = job.context(runtime).quality_gate
    if mode == "off":
        return Command(goto="polisher")
    verdict = judge_turn(_evidence(runtime, state))
    attempt = dict(state.get("label_attempt") or {})
    if not verdict.broken or mode == "flag":
        return Command(goto="polisher", update={"label_attempt": {**attempt, "flags": verdict.flags}})
    kind = state.get("kind", "answerable")
    gate = dict(attempt.get("gate") or {})
    flagged = verdict.first_class or ""
    gate[flagged] = gate.get(flagged, 0) + 1
    refused = [*attempt.get("refused", []), state["draft"]["question"]]
    refused_golds = [*attempt.get("refused_golds", []), *state["turn_plan"].get("gold_ids", [])]
    tries = attempt.get("gate_attempt", 0) + 1
    update = {**attempt, "turn": _position(state), "gate": gate, "refused": refused, "gate_attempt": tries,
              **({"refused_golds": refused_golds} if verdict.flags.keys() & QUESTION_CLASSES else {})}
    if kind not in ("answerable", "clarification"):
        typed_attempt = attempt.get("attempt", 0) + 1
        return Command(goto="turn_type", update={"label_attempt": {
            **update, "attempt": typed_attempt, "rejections": typed_attempt,
            "dropped": None if typed_attempt < LABEL_ATTEMPTS else kind}})
    if tries < LABEL_ATTEMPTS:
        return Command(goto="turn_type", update={"label_attempt": update})
    dropped = {"position": _position(state), "kind": kind, "question": state["draft"]["question"],
               "class": flagged, "reason": verdict.flags[flagged], "gate": gate}
    return Command(goto="router", update={"dropped_turns": [dropped], "label_attempt": {}})


def _evidence(runtime: Runtime[SynthesisContext], state: ConversationState) -> TurnEvidence:
    """What the quality gate judges the turn in flight on."""
    collection, plan, kind = state["collection"], state["turn_plan"], state.get("kind", "answerable")

    def titled(ids: list[str]) -> tuple[tuple[str, str], ...]:
        return tuple((p["title"], p["text"]) for p in _passages(runtime, collection, ids)) if ids else ()

    question = state["draft"]["question"]
    pool = None
    if kind == "unanswerable":
        pooled = [*_unanswerable_pool(runtime, state), *_dense_pool(runtime, state, list(plan["held_out_ids"]))]
        pool = [p["text"] for p in _passages(runtime, collection, list(dict.fromkeys(pooled)))]
    return TurnEvidence(question=question, reply=state["response"], turn_type=kind,
                        previous=tuple((turn["question"], turn["response"]) for turn in state.get("turns", [])),
                        gold=titled(list(plan["gold_ids"])), held_out=titled(list(plan.get("held_out_ids") or [])),
                        candidates=titled(list(plan.get("candidate_ids") or [])), remaining_pool=pool)


def _dense_pool(runtime: Runtime[SynthesisContext], state: ConversationState, held_out: list[str]) -> list[str]:
    """The chunks nearest the held-out ones in the collection's own vectors, less the held-out
    ones: where a dense retriever finds the answer to a question asked from them. The stored
    vectors serve, so synthesis embeds nothing (its collection's embedder may be a server's)."""
    store = _vector_store(runtime, state["collection"])
    vectors = store.embeddings(held_out)
    found = store.collection.query(query_embeddings=[[float(v) for v in vectors[chunk_id]] for chunk_id in held_out],
                                   n_results=UNANSWERABLE_POOL_DEPTH + len(held_out))
    leave_out = set(held_out)
    ranked = [chunk_id for row in zip(*found["ids"]) for chunk_id in row if chunk_id not in leave_out]
    return list(dict.fromkeys(ranked))[:UNANSWERABLE_POOL_DEPTH]


def polisher(state: ConversationState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """From the second turn on, make the question conversational; keep the original when the
    rewrite fails review. Appends the finished turn (one streamed update per turn)."""
    turns = state.get("turns", [])
    original = state["draft"]["question"]
    asked, rejected = original, None
    kind = state.get("kind", "answerable")
    plan = state.get("turn_plan") or {"gold_ids": [state["gold_id"]], "asked_ids": [state["gold_id"]]}
    if turns and kind != "clarification":  # a clarification leans on the history already
        position = state["position"]
        previous_id = _walk(runtime, state)[position["cluster"]][position["offset"]]
        titles = _passages(runtime, state["collection"], [plan["asked_ids"][0], previous_id])
        polished = _seam(runtime, state.get("run_id")).run(
            Polisher(), history=turns, question=original, title=titles[0]["title"], previous_title=titles[1]["title"],
            subject=state["draft"].get("subject"), previous_subject=state.get("previous_subject"))
        history_text = [text for turn in turns for text in (turn["question"], turn["response"])]
        review = review_polish(original, polished.question, history_text)
        asked, rejected = (polished.question.strip(), None) if review.accepted else (original, review.reason)
    attempt = state.get("label_attempt") or {}
    turn = {"index": len(turns), "question": asked, "question_unpolished": original,
            "rewrite": state["draft"]["rewrite"], "response": state["response"], "gold_ids": list(plan["gold_ids"]),
            "switch": state["switch"], "switch_drawn": state.get("switch_drawn"),
            "similarity_to_previous": state.get("similarity"), "polish_rejected": rejected, **state["overlap"],
            "answerability": ANSWERABILITY_OF_KIND.get(kind, "answerable"),
            # what the offline questioner wrote, else the type a model was asked for, else the wording's
            "question_type": state["draft"].get("question_type") or state.get("question_type")
            or question_type_of(original),
            # the polisher's coreference and ellipsis lean on the history; the rewrite is the standalone form
            "standalone": kind != "clarification" and asked == original,
            "held_out_ids": list(plan.get("held_out_ids") or []), "candidate_ids": list(plan.get("candidate_ids") or []),
            "turn_type": kind, "turn_type_drawn": state.get("kind_drawn", kind),
            "label_dropped": attempt.get("dropped") if attempt.get("turn") == _position(state) else None,
            "label_rejections": attempt.get("rejections", 0) if attempt.get("turn") == _position(state) else 0,
            "gate_rejections": dict(attempt.get("gate") or {}) if attempt.get("turn") == _position(state) else {},
            "gate_flags": dict(attempt.get("flags") or {})}
    return {"turns": [turn], "position": state["gold"], "previous_subject": state["draft"].get("subject"),
            "label_attempt": {}}


def router(state: ConversationState, runtime: Runtime[SynthesisContext]) -> Command[Literal["walker", "__end__"]]:
    """Draw how the next turn relates to this one (follow-up, soft or hard switch), or end."""
    if _position(state) >= state["turns_wanted"]:
        return Command(goto=END)
    if not state.get("turns"):  # the gate dropped every turn so far: start again
        return Command(goto="walker", update={"switch": "start"})
    context = job.context(runtime)
    policy = SwitchPolicy(context.switch_rate, context.hard_switch_rate)
    rng = turn_rng(context.seed, state["conversation_id"], _position(state) - 1, "router")
    switch = draw_switch(policy, rng)
    dropped = state.get("dropped_turns", [])
    if dropped and dropped[-1]["position"] == _position(state) - 1 and switch == "follow-up":
        switch = "soft"  # the turn just dropped had nothing left to ask here: move on
    if state["turns"][-1].get("answerability") == "underspecified":
        switch = "follow-up"  # the clarification stays on the chunk the user meant (the walker's gold)
    return Command(goto="walker", update={"switch": switch})


conversation_builder = StateGraph(ConversationState, context_schema=SynthesisContext,
                                  input_schema=ConversationInput, output_schema=ConversationOutput)
for node in (begin, walker, turn_type, *KIND_NODES, questioner, responder, label_judge, polisher, router):
    conversation_builder.add_node(node.__name__, node)
conversation_builder.add_edge(START, "begin")
conversation_builder.add_edge("walker", "turn_type")
for kind_node in KIND_NODES:
    conversation_builder.add_edge(kind_node.__name__, "questioner")
conversation_builder.add_edge("questioner", "responder")
conversation_builder.add_edge("responder", "label_judge")
conversation_builder.add_edge("polisher", "router")
# Studio shows this graph on its own (langgraph.json: "conversation"), with its branches; an
# app compiles it with its own checkpointer: conversation_builder.compile(checkpointer=...).
conversation_graph = conversation_builder.compile(name="conversation")
# Inside a synthesis run: no checkpoints of its own (the run's suffice, and they stay small), and
# run in line, the same nodes in the same order without Pregel's scheduling (graphs/runtime/inline.py:
# it cost 1.1 ms of CPU per model call at 64 conversations in flight).
_conversation_in_run = InlineGraph(conversation_builder)


# ---------------------------------------------------------------------------------------
# The run: plan, fan out, export.

def _items(runtime: Runtime[SynthesisContext], run_id: str) -> WorkItems:
    """The run's conversations as work items: the dialogues log alone, or shared by workers."""
    return run_items(job.context(runtime), job.workspace(runtime), run_id, DIALOGUES_FILE, "conversation_id")


def plan(state: SynthesisState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Cluster the collection if needed and give each conversation its own cluster (plan.jsonl);
    a worker joining a shared run takes the plan its first worker registered."""
    context = job.context(runtime)
    items = _items(runtime, state["run_id"])
    plan_file = job.run_dir(runtime, state["run_id"]).file(PLAN_FILE)
    if plan_file.exists():  # a resumed run keeps its plan
        planned = load_jsonl(plan_file)
    elif shared := items.planned():
        planned = shared
        write_jsonl_atomic(plan_file, planned)
    else:
        store = _vector_store(runtime, state["collection"])
        clustering = cluster_collection(job.workspace(runtime), store, context.cluster_size, context.neighbours,
                                        context.seed, context.page_kinds)
        corpus_statistics(job.workspace(runtime), store)  # once per collection; the conversations read them
        available = len(clustering.clusters)
        if state["conversations"] > available:
            raise InputError(f"collection {state['collection']!r} has {available} clusters of {context.cluster_size} "
                             f"chunks: ask for at most {available} conversations, or use a smaller --cluster-size")
        chosen = random.Random(f"{context.seed}:plan").sample(range(available), state["conversations"])
        planned = [{"conversation_id": f"c{number:04d}", "cluster_id": cluster} for number, cluster in enumerate(chosen)]
        write_jsonl_atomic(plan_file, planned)
    items.add([(item["conversation_id"], item) for item in planned])
    return {"planned": len(planned)}


@functools.lru_cache(maxsize=4)
def _plan_in(path: Path, modified: float) -> dict[str, int]:
    return {item["conversation_id"]: item["cluster_id"] for item in load_jsonl(path)}


def dispatch(state: SynthesisState, runtime: Runtime[SynthesisContext]) -> list[Send] | Literal["wait", "export"]:
    """The next batch of planned conversations nobody finished or holds (graphs/runtime/fanout.py);
    export when all are finished, wait while other workers still hold some."""
    return dispatch_items(  # type: ignore[return-value]
        _items(runtime, state["run_id"]), "conversations", job.context(runtime).concurrency,
        lambda item_id: Send("converse", {"run_id": state["run_id"], "collection": state["collection"],
                                          "conversation_id": item_id, "turns_wanted": state["turns"]}), "export")


def gather(state: SynthesisState) -> dict[str, Any]:
    """Joins a batch of conversations before the next one is dispatched."""
    return {}


def converse(task: ConversationInput, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """One conversation, recorded once. A semaphore holds the number in flight to
    ``concurrency`` exactly (LangGraph's worker pool alone lets one more through); the item is
    claimed only when its slot is free, so no lease runs while it waits in line."""
    items = _items(runtime, task["run_id"])
    cluster_id = _planned_clusters(runtime, task["run_id"])[task["conversation_id"]]
    with concurrency_slot(task["run_id"], job.context(runtime).concurrency):
        result = claimed_work(items, task["conversation_id"], lambda: _conversation_in_run.invoke(
            {**task, "cluster_id": cluster_id}, context=job.context(runtime)))
    if result is None:
        return {"finished": 0}  # another worker has it, or finished it
    dialogue = {"conversation_id": task["conversation_id"], "cluster_id": cluster_id,
                "seed": job.context(runtime).seed, "turns": result["turns"],
                **({"dropped_turns": result["dropped_turns"]} if result.get("dropped_turns") else {})}
    job.run_dir(runtime, task["run_id"]).usage.sync()  # the calls it paid for are durable before the conversation
    items.complete(task["conversation_id"], dialogue)
    report_advance("conversations")
    return {"finished": 1}


def _planned_clusters(runtime: Runtime[SynthesisContext], run_id: str) -> dict[str, int]:
    plan_file = job.run_dir(runtime, run_id).file(PLAN_FILE)
    return _plan_in(plan_file, plan_file.stat().st_mtime)


def export(state: SynthesisState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Stable dialogues file, BEIR and TREC exports (the held-out chunks of unanswerable turns and
    their near-duplicates left out of the corpus, and listed in held_out.tsv; every turn's labels in
    turn_labels.tsv), statistics: the same bytes whichever workers made the conversations."""
    run_dir = job.run_dir(runtime, state["run_id"])
    if job.context(runtime).database_url():  # the other workers' conversations are in the database
        write_jsonl_atomic(run_dir.file(DIALOGUES_FILE), _items(runtime, state["run_id"]).results())
    dialogues = canonicalize(run_dir.file(DIALOGUES_FILE))
    queries, qrels, labels = benchmark_records(dialogues, job.context(runtime).history_window)
    store = _vector_store(runtime, state["collection"])
    held_out = {chunk_id: record["text"] for chunk_id, record in
                _passage_records(runtime, state["collection"], sorted(held_out_ids(dialogues))).items()}
    removed: list[DuplicateMatch] = []
    corpus = without_held_out(({"_id": chunk_id, "title": (metadata or {}).get("title", ""), "text": text}
                               for page in store.iter_all() for chunk_id, text, metadata in
                               zip(page["ids"], page["documents"], page["metadatas"])), held_out, removed)
    write_beir(run_dir.file(BEIR_DIR), corpus, queries, qrels)
    write_held_out(run_dir.file(BEIR_DIR) / HELD_OUT_FILE, ((m.removed_id, m.kept_id, m.jaccard) for m in removed))
    write_turn_labels(run_dir.file(BEIR_DIR) / TURN_LABELS_FILE, labels)
    write_trec_qrels(run_dir.file(TREC_QRELS_FILE), qrels)
    statistics = _corpus_stats(runtime, state["collection"])
    stats = benchmark_statistics(dialogues, random_pairs=statistics.similarity,
                                 soft_switch_threshold=statistics.similarity_threshold(job.context(runtime).soft_switch_margin),
                                 max_overlap=job.context(runtime).max_overlap)
    stats["labels"] = label_counts(dialogues)  # answerability, question type, standalone (issue 22)
    stats["quality_gate"] = gate_counts(dialogues, job.context(runtime).quality_gate)  # per rubric class (issue 30)
    write_json_atomic(run_dir.file(STATS_FILE), stats)
    return {"conversations_written": len(dialogues), "turns_written": len(queries), "stats": stats}


builder = StateGraph(SynthesisState, context_schema=SynthesisContext, input_schema=SynthesisInput,
                     output_schema=SynthesisOutput)
builder.add_node("plan", plan)
builder.add_node("converse", converse)
builder.add_node("gather", gather)
builder.add_node("wait", wait_for_workers)
builder.add_node("export", export)
builder.add_edge(START, "plan")
builder.add_conditional_edges("plan", dispatch, ["converse", "wait", "export"])
builder.add_edge("converse", "gather")
builder.add_conditional_edges("gather", dispatch, ["converse", "wait", "export"])
builder.add_conditional_edges("wait", dispatch, ["converse", "wait", "export"])
builder.add_edge("export", END)

graph = builder.compile(name="synthesize")  # the Studio copy: no checkpointer (the server brings its own)
