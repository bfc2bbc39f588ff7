"""The chunks each turn is planned on: the walker's gold along the cluster's semantic path, labelled
by the similarity rule (tools/benchmark/dialogue_walk.py), and the chunks of the other turn types
(unanswerable, partial, underspecified, multi-passage, clarification) around it."""

from __future__ import annotations

import hashlib
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.agents.offline.namesakes import documented_entries, shared_name, shared_subject, subjects
from benchsmith.graphs.contexts.synthesize import SynthesisContext, with_preset_rates
from benchsmith.graphs.synthesis.lookups import (
    bm25_index,
    chunks_of,
    corpus_stats,
    cosine,
    document_of,
    embeddings_of,
    passages_of,
    walked_clusters,
)
from benchsmith.graphs.synthesis.state import ConversationState, job
from benchsmith.stores.errors import InputError
from benchsmith.tools.benchmark.dialogue_walk import (
    MULTI_GOLD_SIZES,
    Position,
    Switch,
    TurnKindPolicy,
    choose_switch,
    companion_chunks,
    parse_question_types,
    reserved_chunks,
    soft_switch_candidates,
    switch_label,
    turn_rng,
)
from benchsmith.tools.retrieval.bm25 import top_scored

NAMESAKE_SEARCH_DEPTH = 20  # BM25's top chunks searched for another meaning of an underspecified turn's term
PARTIAL_CLUSTERS = 4  # the clusters whose held-out chunk a partial turn may be planned on


def plan_turn(
    runtime: Runtime[SynthesisContext],
    state: ConversationState,
    drawn: Switch,
    excluded: frozenset[str] = frozenset(),
    replan: int = 0,
) -> dict[str, Any] | None:
    """The gold chunk of the turn being built and its label (tools/benchmark/dialogue_walk.choose_switch),
    avoiding the ``excluded`` chunks; None when no chunk is left. A function of the finished
    turns, the draw and the exclusions: re-running it after a crash picks the same chunk."""
    clusters = walked_clusters(runtime, state)
    turns = state.get("turns", [])
    collection = state["collection"]
    excluded = excluded | frozenset(_reserved(runtime, state).values())  # never gold: turns may hold them out
    if not turns:
        # the conversation's cluster first; when none of its chunks is left (each refused: a format
        # specification's tables have nothing a user asks), the other clusters in an order of the
        # conversation's own: in the walk's order, conversations planned on neighbouring clusters that
        # hold nothing to ask all opened on the same chunk (4 of 20 on pytest, development round 13)
        first = state.get("cluster_id") or 0
        others = [cluster for cluster in range(len(clusters)) if cluster != first]
        turn_rng(job.context(runtime).seed, state["conversation_id"], 0, "start").shuffle(others)
        found = next(
            (
                (cluster, offset)
                for cluster in [first, *others]
                for offset, chunk_id in enumerate(clusters[cluster])
                if chunk_id not in excluded
            ),
            None,
        )
        if found is None:
            return None
        cluster, offset = found
        # One read of the store for what the next nodes read first: this cluster's passages (the
        # questioner) and the next cluster's vectors (the second turn's soft candidates).
        candidates = soft_switch_candidates(clusters, Position(cluster, offset), set())
        chunks_of(
            runtime, collection, [clusters[cluster][offset], *(clusters[c.cluster][c.offset] for c in candidates)]
        )
        return {
            "gold": {"cluster": cluster, "offset": offset},
            "switch": "start",
            "switch_drawn": "start",
            "gold_id": clusters[cluster][offset],
            "similarity": None,
        }
    here = Position(**state["position"])
    previous_id = clusters[here.cluster][here.offset]
    used = {gold for turn in turns for gold in turn["gold_ids"]}
    neighbourhood = [clusters[c.cluster][c.offset] for c in soft_switch_candidates(clusters, here, used)]
    embeddings_of(runtime, collection, [previous_id, *neighbourhood])  # one fetch for the soft candidates
    previous_document = document_of(runtime, collection, previous_id)

    def similarity(position: Position) -> float:
        chunk_id = clusters[position.cluster][position.offset]
        vectors = embeddings_of(runtime, collection, [previous_id, chunk_id])
        return round(cosine(vectors[previous_id], vectors[chunk_id]), 4)  # the figure the turn records decides

    def same_document(position: Position) -> bool:
        return document_of(runtime, collection, clusters[position.cluster][position.offset]) == previous_document

    context = job.context(runtime)
    purpose = f"walker:replan{replan}" if replan else "walker"  # a re-plan draws other distant chunks
    threshold = corpus_stats(runtime, collection).similarity_threshold(context.soft_switch_margin)
    rng = turn_rng(context.seed, state["conversation_id"], len(turns), purpose)
    chosen = choose_switch(
        clusters,
        here,
        drawn,
        similarity=similarity,
        same_document=same_document,
        threshold=threshold,
        rng=rng,
        used=used,
        excluded=set(excluded),
    )
    if chosen is None:
        return None
    position, switch = chosen
    return {
        "gold": {"cluster": position.cluster, "offset": position.offset},
        "switch": switch,
        "switch_drawn": drawn,
        "gold_id": clusters[position.cluster][position.offset],
        "similarity": similarity(position),
    }


def share_of(seed: int, chunk_id: str, conversations: int) -> int:
    """The share of a run's chunks (of ``conversations``) that holds the chunk: a function of the seed and the
    chunk alone, so every conversation of the run gives each chunk to the same one."""
    return int(hashlib.sha256(f"{seed}:share:{chunk_id}".encode()).hexdigest()[:8], 16) % conversations


def share_plan(
    runtime: Runtime[SynthesisContext], state: ConversationState, drawn: Switch, excluded: frozenset[str]
) -> dict[str, Any] | None:
    """A re-planned turn's gold, from the conversation's own share of the chunks (``state["share"]``: its number
    and the run's conversations) first, then the next conversation's share, and so on: within a share, the next
    chunk along the semantic path (the start: the conversation's own cluster, then the others in its own order)
    that is not ``excluded`` nor asked already, labelled by the similarity rule. None without a share.

    Conversations run apart and re-plan away from chunks with nothing to ask; along one path they all came to
    the few chunks a questioner can ask about, and asked them the same questions (mkdocs, development round 15:
    one chunk gold in 8 conversations after up to 13 re-plans, a third of 113 turns repeating another
    conversation's). A conversation ends before its first repeat (evals/measures/repeated_turns.py), and kept
    half its turns. In shares, two re-planned turns meet on one chunk only when one has used up its own share."""
    share = state.get("share")
    if not share or share[1] < 2:
        return None
    number, conversations = share
    context = job.context(runtime)
    clusters = walked_clusters(runtime, state)
    turns = state.get("turns", [])
    excluded = excluded | frozenset(_reserved(runtime, state).values())
    # the chunks of the turns asked, and of those the gate dropped: their share's next chunk, not the same again
    used = {gold for turn in [*turns, *state.get("dropped_turns", [])] for gold in turn.get("gold_ids", [])}

    def turn_of_share(position: Position) -> int:  # 0 for the conversation's own share, 1 for the next one...
        return (share_of(context.seed, clusters[position.cluster][position.offset], conversations) - number) % (
            conversations
        )

    if not turns:
        first = state.get("cluster_id") or 0
        others = [cluster for cluster in range(len(clusters)) if cluster != first]
        turn_rng(context.seed, state["conversation_id"], 0, "start").shuffle(others)
        order = [Position(cluster, offset) for cluster in [first, *others] for offset in range(len(clusters[cluster]))]
        open_ = [p for p in order if clusters[p.cluster][p.offset] not in excluded | used]
        if not open_:
            return None
        start = min(open_, key=turn_of_share)  # the earliest of the nearest share
        return {
            "gold": {"cluster": start.cluster, "offset": start.offset},
            "switch": "start",
            "switch_drawn": "start",
            "gold_id": clusters[start.cluster][start.offset],
            "similarity": None,
        }
    here = Position(**state["position"])
    collection = state["collection"]
    previous_id = clusters[here.cluster][here.offset]
    previous_document = document_of(runtime, collection, previous_id)
    threshold = corpus_stats(runtime, collection).similarity_threshold(context.soft_switch_margin)
    path = [
        Position(cluster, offset)
        for step in range(len(clusters))
        for cluster in [(here.cluster + step) % len(clusters)]
        for offset in range(here.offset + 1 if step == 0 else 0, len(clusters[cluster]))
        if clusters[cluster][offset] not in excluded and clusters[cluster][offset] not in used
    ]
    for position in sorted(path, key=turn_of_share):  # stable: path order within a share
        chunk_id = clusters[position.cluster][position.offset]
        vectors = embeddings_of(runtime, collection, [previous_id, chunk_id])
        similarity = round(cosine(vectors[previous_id], vectors[chunk_id]), 4)
        label = switch_label(similarity, threshold, document_of(runtime, collection, chunk_id) == previous_document)
        if label is None:
            continue  # a dissimilar chunk of the same page: neither switch (dialogue_walk's rule)
        return {
            "gold": {"cluster": position.cluster, "offset": position.offset},
            "switch": label,
            "switch_drawn": drawn,
            "gold_id": chunk_id,
            "similarity": similarity,
        }
    return None


def kind_policy(context: SynthesisContext) -> TurnKindPolicy:
    context = with_preset_rates(context)  # a run started from Studio or a graph call names its preset only
    try:
        return TurnKindPolicy(
            context.unanswerable_rate, context.partial_rate, context.underspecified_rate, context.multi_gold_rate
        )
    except ValueError as error:
        raise InputError(str(error)) from None


def question_mix(context: SynthesisContext) -> dict[str, float]:
    try:
        return parse_question_types(with_preset_rates(context).question_types)
    except ValueError as error:
        raise InputError(f"--question-types: {error}") from None


def check_turn_types(context: SynthesisContext) -> None:
    """The turn-type rates add up to at most 1 and the question-type mix parses (InputError)."""
    kind_policy(context), question_mix(context)


def _reserved(runtime: Runtime[SynthesisContext], state: ConversationState) -> dict[int, str]:
    """{cluster: the chunk turns may hold out}; none unless a held-out turn type has a rate."""
    context = job.context(runtime)
    if not kind_policy(context).holds_out:
        return {}
    return reserved_chunks(walked_clusters(runtime, state), context.seed)


def kind_plan(
    runtime: Runtime[SynthesisContext], state: ConversationState, kind: str, attempt: int = 0
) -> dict[str, Any] | None:
    """The chunks of a turn of ``kind`` around the walker's gold: ``gold_ids`` (qrels),
    ``held_out_ids`` (removed from the corpus), ``candidate_ids`` (what an underspecified turn
    could mean), ``asked_ids`` (the passages the questioner reads, in order); None when the
    cluster has no such chunks. ``attempt``: an unanswerable turn the judge rejected asks about
    the next cluster's held-out chunk."""
    clusters = walked_clusters(runtime, state)
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
    size = (
        sizes[kind]
        if kind in sizes
        else turn_rng(job.context(runtime).seed, state["conversation_id"], len(turns), "multi-gold").choice(
            MULTI_GOLD_SIZES
        )
    )
    # Chunks the conversation has not asked about yet first: they still have questions left.
    used = {chunk for turn in turns for chunk in [*turn["gold_ids"], *(turn.get("candidate_ids") or [])]}
    others = sorted(
        companion_chunks(clusters[cluster], gold_id, len(clusters[cluster]), set(reserved.values())),
        key=lambda chunk: chunk in used,
    )
    # A re-planned turn (the judge rejected the last one) moves along the cluster: the walker's gold
    # first, then the other chunks in turn. An underspecified turn keeps the walker's gold among its
    # candidates: its clarification stays there (a follow-up), so that is the chunk the user meant.
    if kind == "underspecified":
        namesakes = namesake_chunks(
            runtime, state["collection"], gold_id, leave_out={gold_id, *others, *reserved.values()}
        )
        others = ambiguous_partners(runtime, state["collection"], gold_id, [*others, *namesakes])
        chosen = [gold_id, *others[attempt : attempt + size - 1]]
    elif kind == "multi-passage":
        # its passages share a subject (agents/offline/namesakes.py), or it is no turn of this kind: the
        # cluster's chunks first, then those BM25 finds anywhere for what the gold is about
        searched = same_subject_chunks(
            runtime, state["collection"], gold_id, leave_out={gold_id, *others, *reserved.values()}
        )
        partners = subject_partners(runtime, state["collection"], gold_id, [*others, *searched])
        chosen = [gold_id, *partners[attempt : attempt + size - 1]]
        if len(chosen) == size and _shared_subject(runtime, state["collection"], chosen) is None:
            return None
    else:
        chosen = [gold_id, *others[: size - 1]][:size] if not attempt else others[attempt - 1 : attempt - 1 + size]
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
            searched = same_subject_chunks(
                runtime, state["collection"], held, leave_out={held, gold_id, *others, *reserved.values()}
            )
            chosen = subject_partners(runtime, state["collection"], held, [gold_id, *others, *searched])[:1]
            if chosen:
                return {**plan, "gold_ids": chosen, "held_out_ids": [held], "asked_ids": [*chosen, held]}
        return None
    if kind == "underspecified":
        candidates = sorted(chosen)  # sorted: the order does not tell which one is meant
        return {**plan, "gold_ids": [], "candidate_ids": candidates, "asked_ids": candidates}
    return {**plan, "gold_ids": chosen, "asked_ids": chosen}


def namesake_chunks(
    runtime: Runtime[SynthesisContext], collection: str, gold_id: str, leave_out: set[str]
) -> list[str]:
    """Chunks anywhere in the corpus that may document an entry of the gold's name: BM25's top
    chunks for the last names of the entries the gold documents. What a question leaves open is
    rarely within one cluster of the semantic path: lzma's and bz2's ``decompress`` lie apart."""
    (gold,) = passages_of(runtime, collection, [gold_id])
    return _search(
        runtime,
        collection,
        sorted({part for entry in documented_entries(gold) for part in entry.split(".")[-2:]}),
        leave_out,
    )


def same_subject_chunks(
    runtime: Runtime[SynthesisContext], collection: str, chunk_id: str, leave_out: set[str]
) -> list[str]:
    """Chunks anywhere in the corpus that may be about what ``chunk_id`` is about: BM25's top chunks
    for its subjects (agents/offline/namesakes.py ``subjects``)."""
    (passage,) = passages_of(runtime, collection, [chunk_id])
    return _search(runtime, collection, sorted(subjects(passage)), leave_out)


def _search(runtime: Runtime[SynthesisContext], collection: str, terms: list[str], leave_out: set[str]) -> list[str]:
    if not terms:
        return []
    index = bm25_index(job.workspace(runtime), collection, job.context(runtime).chroma_host)
    return top_scored(index.doc_ids, index.scores(" ".join(terms)), NAMESAKE_SEARCH_DEPTH, leave_out=leave_out)


def ambiguous_partners(
    runtime: Runtime[SynthesisContext], collection: str, gold_id: str, others: list[str]
) -> list[str]:
    """The chunks of ``others`` (the gold's cluster, then its namesakes) that document another entry
    of a name the gold's entry has (agents/offline/namesakes.py ``shared_name``): two meanings that
    lead a user to call different things. None: the turn becomes an answerable one."""
    passages = {passage["id"]: passage for passage in passages_of(runtime, collection, [gold_id, *others])}
    return [chunk for chunk in others if shared_name([passages[gold_id], passages[chunk]]) is not None]


def subject_partners(
    runtime: Runtime[SynthesisContext], collection: str, chunk_id: str, others: list[str]
) -> list[str]:
    """The chunks of ``others`` that have a fact about a subject ``chunk_id`` has a fact about."""
    passages = {passage["id"]: passage for passage in passages_of(runtime, collection, [chunk_id, *others])}
    return [
        other
        for other in others
        if other != chunk_id and shared_subject([passages[chunk_id], passages[other]]) is not None
    ]


def _shared_subject(runtime: Runtime[SynthesisContext], collection: str, chunk_ids: list[str]) -> str | None:
    return shared_subject(passages_of(runtime, collection, chunk_ids))
