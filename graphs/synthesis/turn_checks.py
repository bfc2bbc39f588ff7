"""The checks on the turn in flight before it is kept: the label judge (an unanswerable turn's
question answered by nothing left in the corpus, every gold of a multi-passage turn contributing)
and the quality gate (evals/quality_gate/), which re-plan or drop the turn (a flag of the gate's
reading model alone: graphs/synthesis/model_flags.py)."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from benchsmith.agents.pool_judge import PoolJudge
from benchsmith.agents.turn_types import ContributionJudge
from benchsmith.evals.measures.question_form import question_form
from benchsmith.evals.quality_gate import QUESTION_CLASSES, judge_question, judge_turn
from benchsmith.evals.quality_gate.evidence import TurnEvidence
from benchsmith.graphs.contexts.synthesize import SynthesisContext
from benchsmith.graphs.synthesis.lookups import bm25_index, corpus_stats, model_seam, passages_of, vector_store
from benchsmith.graphs.synthesis.model_flags import (
    counted_refusal,
    judge_replacement,
    keep_in_flight,
    refuse_replacement,
    replacing,
)
from benchsmith.graphs.synthesis.state import LABEL_ATTEMPTS, ConversationState, job, turn_position
from benchsmith.history import exchanges
from benchsmith.tools.retrieval.bm25 import top_scored

UNANSWERABLE_POOL_DEPTH = 10  # BM25's top chunks of the remaining corpus the judge reads for an unanswerable turn


def ill_formed_question(question: str, follow_up: bool, passages: list[dict[str, Any]] | None = None) -> bool:
    """Ill-formed by the audit's documented rule (evals/measures/question_form.py: a template, a fragment, a
    leftover...) or, given the gold ``passages``, by the quality gate's rules that read a question
    alone (evals/quality_gate/: unaskable, a topic that is no noun phrase, a copy of its passage). A
    chunk that yields only such a question (a generated codec table has nothing to ask about) is
    re-planned, as one whose question copies it is."""
    if question_form(question, follow_up=follow_up).problems():
        return True
    if passages is None:
        return False
    evidence = TurnEvidence(
        question=question,
        reply="",
        previous=(("", ""),) if follow_up else (),
        gold=tuple((passage["title"], passage["text"]) for passage in passages),
    )
    return judge_question(evidence).broken


def _unanswerable_pool(runtime: Runtime[SynthesisContext], state: ConversationState) -> list[str]:
    """The retrievers' pool for the question: BM25's top chunks of the corpus that remains
    (the chunks the turn holds out left out)."""
    context = job.context(runtime)
    index = bm25_index(job.workspace(runtime), state["collection"], context.chroma_host)
    held_out = set(state["turn_plan"]["held_out_ids"])
    query = " ".join([*(turn["question"] for turn in state.get("turns", [])[-1:]), state["draft"]["question"]])
    return top_scored(index.doc_ids, index.scores(query), UNANSWERABLE_POOL_DEPTH, leave_out=held_out)


def label_judge(
    state: ConversationState, runtime: Runtime[SynthesisContext]
) -> Command[Literal["polisher", "turn_type", "router"]]:
    """Check the turn's label before it is kept: an unanswerable turn is kept when the judge finds
    no chunk of the retrievers' pool over the remaining corpus that answers it (the held-out
    chunk is judged with them, as what answering looks like); a multi-passage turn when every gold
    contributes to the reference answer; any of them when its question is well formed (a chunk with
    nothing left to ask gives a template). A rejected turn is re-planned (``LABEL_ATTEMPTS`` plans in
    all: an unanswerable or partial turn on the next cluster's held-out chunk, the others on the
    cluster's next chunks); then it is dropped to an answerable turn, and the turn records the drop
    (``label_dropped``) and the rejections (``label_rejections``). A rejected replacement of a turn the
    reading model flagged gives the next one, or the original back (model_flags.py)."""
    kind = state.get("kind", "answerable")
    seam = model_seam(runtime, state.get("run_id"))
    plan, question = state["turn_plan"], state["draft"]["question"]
    follow_up = bool(state.get("turns"))
    parts = state["draft"].get("parts") or []
    asked_parts = parts if kind in ("partial", "multi-passage") else []  # an underspecified turn asks none of them
    if kind not in ("answerable", "clarification") and (
        ill_formed_question(question, follow_up) or any(ill_formed_question(part, True) for part in asked_parts)
    ):
        accepted = False  # a template or a fragment (a chunk with nothing left to ask) is no such turn
    elif kind == "unanswerable":
        pool = _unanswerable_pool(runtime, state)
        passages = passages_of(runtime, state["collection"], [*plan["held_out_ids"], *pool])
        pool_verdict = seam.run(
            PoolJudge(len(passages)),
            history=exchanges(state.get("turns", [])),
            question=question,
            passages=[p["text"] for p in passages],
            passage_titles=[p["title"] for p in passages],
            statistics=corpus_stats(runtime, state["collection"]),
        )
        accepted = not any(judgment.relevant for judgment in pool_verdict.judgments[len(plan["held_out_ids"]) :])
    elif kind == "multi-passage":
        passages = passages_of(runtime, state["collection"], plan["gold_ids"])
        verdict = seam.run(ContributionJudge(), question=question, answer=state["response"], passages=passages)
        accepted = len(verdict.contributes) == len(passages) and all(verdict.contributes)
    else:
        return _gated(runtime, state)
    if accepted:
        return _gated(runtime, state)
    if replacing(state):
        return refuse_replacement(state)
    attempt = (state.get("label_attempt") or {}).get("attempt", 0) + 1
    retry = attempt < LABEL_ATTEMPTS
    return Command(
        goto="turn_type",
        update={
            "label_attempt": {
                **(state.get("label_attempt") or {}),
                "turn": turn_position(state),
                "attempt": attempt,
                "rejections": attempt,
                "dropped": None if retry else kind,
            }
        },
    )


def _gated(
    runtime: Runtime[SynthesisContext], state: ConversationState
) -> Command[Literal["polisher", "turn_type", "router"]]:
    """The quality gate (evals/quality_gate/) on the turn in flight: kept, re-asked (its question
    refused: an answerable turn's questioner asks another, a typed turn is re-planned, then dropped
    to an answerable one) or, after ``LABEL_ATTEMPTS``, dropped with its class recorded. A flag of
    the reading model alone re-asks too, but costs no turn: the flagged turn waits in flight and
    comes back when no replacement passes the gate entirely (model_flags.py)."""
    mode = job.context(runtime).quality_gate
    if mode == "off":
        return Command(goto="polisher")
    verdict = judge_turn(_evidence(runtime, state), reading_model=True)
    if mode == "replan" and replacing(state):
        return judge_replacement(state, verdict)
    attempt = dict(state.get("label_attempt") or {})
    if not verdict.broken or mode == "flag":
        return Command(goto="polisher", update={"label_attempt": {**attempt, "flags": verdict.flags}})
    if verdict.by_model:
        return keep_in_flight(state, verdict)
    kind = state.get("kind", "answerable")
    gate = counted_refusal(attempt, verdict)
    flagged = verdict.first_class or ""
    refused = [*attempt.get("refused", []), state["draft"]["question"]]
    refused_golds = [*attempt.get("refused_golds", []), *state["turn_plan"].get("gold_ids", [])]
    tries = attempt.get("gate_attempt", 0) + 1
    update = {
        **attempt,
        "turn": turn_position(state),
        "gate": gate,
        "refused": refused,
        "gate_attempt": tries,
        **({"refused_golds": refused_golds} if verdict.flags.keys() & QUESTION_CLASSES else {}),
    }
    if kind not in ("answerable", "clarification"):
        typed_attempt = attempt.get("attempt", 0) + 1
        return Command(
            goto="turn_type",
            update={
                "label_attempt": {
                    **update,
                    "attempt": typed_attempt,
                    "rejections": typed_attempt,
                    "dropped": None if typed_attempt < LABEL_ATTEMPTS else kind,
                }
            },
        )
    if tries < LABEL_ATTEMPTS:
        return Command(goto="turn_type", update={"label_attempt": update})
    dropped = {
        "position": turn_position(state),
        "kind": kind,
        "question": state["draft"]["question"],
        "gold_ids": list(state["turn_plan"]["gold_ids"]),  # a re-planned turn does not come back to them
        "class": flagged,
        "reason": verdict.flags[flagged],
        "gate": gate,
    }
    return Command(goto="router", update={"dropped_turns": [dropped], "label_attempt": {}})


def _evidence(runtime: Runtime[SynthesisContext], state: ConversationState) -> TurnEvidence:
    """What the quality gate judges the turn in flight on."""
    collection, plan, kind = state["collection"], state["turn_plan"], state.get("kind", "answerable")

    def titled(ids: list[str]) -> tuple[tuple[str, str], ...]:
        return tuple((p["title"], p["text"]) for p in passages_of(runtime, collection, ids)) if ids else ()

    question = state["draft"]["question"]
    pool = None
    if kind == "unanswerable":
        pooled = [*_unanswerable_pool(runtime, state), *_dense_pool(runtime, state, list(plan["held_out_ids"]))]
        pool = [p["text"] for p in passages_of(runtime, collection, list(dict.fromkeys(pooled)))]
    return TurnEvidence(
        question=question,
        reply=state["response"],
        turn_type=kind,
        previous=tuple((turn["question"], turn["response"]) for turn in state.get("turns", [])),
        gold=titled(list(plan["gold_ids"])),
        held_out=titled(list(plan.get("held_out_ids") or [])),
        candidates=titled(list(plan.get("candidate_ids") or [])),
        remaining_pool=pool,
    )


def _dense_pool(runtime: Runtime[SynthesisContext], state: ConversationState, held_out: list[str]) -> list[str]:
    """The chunks nearest the held-out ones in the collection's own vectors, less the held-out
    ones: where a dense retriever finds the answer to a question asked from them. The stored
    vectors serve, so synthesis embeds nothing (its collection's embedder may be a server's)."""
    store = vector_store(runtime, state["collection"])
    vectors = store.embeddings(held_out)
    found = store.collection.query(
        query_embeddings=[vectors[chunk_id] for chunk_id in held_out],
        n_results=UNANSWERABLE_POOL_DEPTH + len(held_out),
    )
    leave_out = set(held_out)
    ranked = [chunk_id for row in zip(*found["ids"]) for chunk_id in row if chunk_id not in leave_out]
    return list(dict.fromkeys(ranked))[:UNANSWERABLE_POOL_DEPTH]
