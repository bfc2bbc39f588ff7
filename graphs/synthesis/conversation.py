"""The conversation graph: one conversation over a cluster of the collection's clustering or over
given chunks, one turn at a time (the diagram in graphs/synthesis/__init__.py). Usable on its own
(Studio's "conversation", an app's own checkpointer) and run in line inside a synthesis run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command

from benchsmith.agents.polisher import Polisher
from benchsmith.agents.question_types import question_type_of
from benchsmith.agents.questioner import Questioner
from benchsmith.agents.responder import Responder
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.agents.turn_types import ReferenceResponder, TypedQuestioner
from benchsmith.evals.measures.lexical_overlap import lexical_overlap
from benchsmith.graphs.contexts.synthesize import SynthesisContext
from benchsmith.graphs.runtime.inline import InlineGraph
from benchsmith.graphs.synthesis.lookups import corpus_stats, model_seam, passages_of, walked_clusters
from benchsmith.graphs.synthesis.state import (
    DEFAULT_TURNS,
    ConversationInput,
    ConversationOutput,
    ConversationState,
    job,
    turn_position,
    turns_so_far,
)
from benchsmith.graphs.synthesis.turn_checks import ill_formed_question, label_judge
from benchsmith.graphs.synthesis.turn_plans import (
    check_turn_types,
    kind_plan,
    kind_policy,
    plan_turn,
    question_mix,
    share_plan,
)
from benchsmith.stores.errors import InputError
from benchsmith.tools.benchmark.dialogue_walk import (
    SwitchPolicy,
    draw_question_type,
    draw_switch,
    draw_turn_kind,
    turn_kind_position,
    turn_rng,
)
from benchsmith.tools.benchmark.overlap_retry import (
    BASELINE_FORM_REPLANS,
    FORM_REPLANS,
    RetryLimits,
    ask_with_corrections,
    ask_with_replans,
)
from benchsmith.tools.benchmark.polish import review_polish


def begin(state: ConversationState, runtime: Runtime[SynthesisContext]) -> Command[Literal["walker", "__end__"]]:
    """Check the input; refuse a changed one under an id that already has turns; end at once
    when the conversation is already finished."""
    has_cluster, has_chunks = state.get("cluster_id") is not None, bool(state.get("chunk_ids"))
    if has_cluster == has_chunks:
        raise InputError(f"conversation {state['conversation_id']!r}: give either cluster_id or chunk_ids")
    wanted = state.get("turns_wanted", DEFAULT_TURNS)
    if wanted < 1:
        raise InputError(f"conversation {state['conversation_id']!r}: turns_wanted must be at least 1")
    source = {
        "collection": state["collection"],
        "cluster_id": state.get("cluster_id"),
        "chunk_ids": list(state.get("chunk_ids") or []),
        "turns_wanted": wanted,
        **({"share": list(state["share"])} if state.get("share") else {}),
    }
    check_turn_types(job.context(runtime))  # impossible rates or an unknown question type stop here
    if state.get("source") not in (None, source):
        raise InputError(
            f"conversation {state['conversation_id']!r} was made from {state['source']}, not {source}: "
            "a changed input under an existing id is refused; use a new conversation id (thread)"
        )
    if has_cluster and not 0 <= state["cluster_id"] < len(walked_clusters(runtime, state)):
        raise InputError(
            f"conversation {state['conversation_id']!r}: no cluster {state['cluster_id']} in the "
            f"clustering of {state['collection']!r}"
        )
    done = len(state.get("turns", [])) >= wanted
    # langgraph types END as str, not as the Literal a route names
    return Command(goto=END if done else "walker", update={"source": source, "turns_wanted": wanted})  # type: ignore[arg-type]


def walker(state: ConversationState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Pick the gold chunk of the next turn from the last finished turn and the drawn switch,
    labelled by the similarity rule (a function of them: re-running it after a crash picks the
    same chunk)."""
    plan = plan_turn(runtime, state, state["switch"] if state.get("turns") else "start")
    assert plan is not None  # nothing is excluded: the previous gold (or the cluster's first chunk) remains
    return plan


# ---------------------------------------------------------------------------------------
# Turn types (issue 22): drawn per turn like switches, each built by its own node.

TurnRoute = Literal["answerable", "unanswerable", "partial", "underspecified", "multi_passage", "clarification"]
NODE_OF_KIND = {"multi-passage": "multi_passage"}
ANSWERABILITY_OF_KIND = {"unanswerable": "unanswerable", "partial": "partial", "underspecified": "underspecified"}


def turn_type(state: ConversationState, runtime: Runtime[SynthesisContext]) -> Command[TurnRoute]:
    """Draw the turn's type (seeded per conversation and turn, as the switch is) and its question
    type; the turn after an underspecified one is its clarification. A type the cluster cannot
    give, or one the judge rejected, becomes an answerable turn (recorded as dropped)."""
    context = job.context(runtime)
    turns = state.get("turns", [])
    index = turn_position(state)
    attempt = state.get("label_attempt") or {}
    attempt = attempt if attempt.get("turn") == index else {}
    if turns and turns[-1].get("answerability") == "underspecified":
        drawn = "clarification"
    else:
        drawn = draw_turn_kind(kind_policy(context), turn_kind_position(context.seed, state["conversation_id"], index))
    kind, dropped = drawn, attempt.get("dropped")
    if dropped or (drawn != "answerable" and kind_plan(runtime, state, drawn, attempt.get("attempt", 0)) is None):
        kind, dropped = "answerable", dropped or drawn
    question_type = draw_question_type(
        question_mix(context), turn_rng(context.seed, state["conversation_id"], index, "question-type")
    )
    return Command(
        goto=NODE_OF_KIND.get(kind, kind),  # type: ignore[arg-type]
        update={
            "kind": kind,
            "kind_drawn": drawn,
            "question_type": question_type,
            "label_attempt": {**attempt, "turn": index, "dropped": dropped},
        },
    )


def _build_kind(kind: str) -> Callable[[ConversationState, Runtime[SynthesisContext]], dict[str, Any]]:
    def build(state: ConversationState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
        attempt = (state.get("label_attempt") or {}).get("attempt", 0)
        plan = kind_plan(runtime, state, kind, attempt)
        assert plan is not None  # turn_type routed here because the plan exists
        return {"turn_plan": plan}

    build.__name__ = NODE_OF_KIND.get(kind, kind)
    build.__doc__ = f"The chunks of a {kind} turn (kind_plan)."
    return build


KIND_NODES = [
    _build_kind(kind)
    for kind in ("answerable", "unanswerable", "partial", "underspecified", "multi-passage", "clarification")
]


def _ask(
    runtime: Runtime[SynthesisContext], state: ConversationState, plan: dict[str, Any], seam: ModelSeam
) -> list[tuple[float, Any]]:
    """The questioner's drafts for one gold chunk with their overlaps: the first, then one per
    corrective turn while the last is above ``max_overlap`` (tools/benchmark/overlap_retry.py)."""
    context = job.context(runtime)
    cluster = walked_clusters(runtime, state)[plan["gold"]["cluster"]]
    passages = passages_of(runtime, state["collection"], cluster)
    gold = next(p for p in passages if p["id"] == plan["gold_id"])
    related = [p for p in passages if p["id"] != plan["gold_id"]]
    turns = state.get("turns", [])

    def measure_overlap(question: str) -> float:
        return round(lexical_overlap(question, [gold["text"]]), 4)

    # a question the gate dropped at an earlier position stays refused: asked again, it is dropped again
    dropped = [turn["question"] for turn in state.get("dropped_turns", []) if turn.get("question")]
    refused = [*(state.get("label_attempt") or {}).get("refused", []), *dropped]
    inputs = {
        "gold": gold,
        "related": related,
        "history": turns,
        "conversation": state["conversation_id"],  # the offline questioner's choice among equals (no prompt text)
        "switch": plan["switch"],
        **({"question_type": state["question_type"]} if state.get("question_type") else {}),
        **({"refused": refused} if refused else {}),
        "corpus_stats": corpus_stats(runtime, state["collection"]),
        "previous_subject": state.get("previous_subject") if turns else None,
        "max_overlap": context.max_overlap,
        "measure_overlap": measure_overlap,
    }

    def ask(drafts: list[tuple[float, Any]]) -> Any:
        rejected = [{"question": draft.question, "overlap": overlap} for overlap, draft in drafts]
        # The first call's inputs (and so its prompt and cache key) are those of a run without the limit.
        return seam.run(Questioner(), **inputs, **({"rejected": rejected} if rejected else {}))

    return ask_with_corrections(
        ask, lambda draft: measure_overlap(draft.question), context.max_overlap, context.overlap_attempts
    )


def questioner(state: ConversationState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Ask the turn's question; above ``max_overlap``, ask again with the overlap fed back (one
    corrective turn at a time), then re-plan the turn on another gold chunk as the walker would
    choose it; when all stay above the limit, keep the lowest-overlap question, flagged
    (tools/benchmark/overlap_retry.py)."""
    context = job.context(runtime)
    seam = model_seam(runtime, state.get("run_id"))
    if state.get("kind", "answerable") != "answerable":
        return _ask_typed(runtime, state, seam)
    plan: dict[str, Any] = {key: state.get(key) for key in ("gold", "switch", "switch_drawn", "gold_id", "similarity")}
    follow_up = bool(state.get("turns"))
    refused_golds = frozenset((state.get("label_attempt") or {}).get("refused_golds", []))
    if plan["gold_id"] in refused_golds:  # the quality gate refused this gold's question: another gold
        drawn = plan.get("switch_drawn") or plan["switch"]
        plan = (
            share_plan(runtime, state, drawn, refused_golds)
            or plan_turn(runtime, state, drawn, refused_golds, len(refused_golds))
            or plan
        )

    def ask(candidate: dict[str, Any]) -> list[tuple[bool, float, Any]]:
        asked = _ask(runtime, state, candidate, seam)
        gold = (
            passages_of(runtime, state["collection"], [candidate["gold_id"]])
            if context.quality_gate == "replan"
            else None
        )  # the gate's rules re-plan only in "replan"
        return [(ill_formed_question(draft.question, follow_up, gold), overlap, draft) for overlap, draft in asked]

    def replan(tried: list[dict[str, Any]]) -> dict[str, Any] | None:
        # A follow-up whose chunk has nothing left to ask moves on too (labelled by the switch rule;
        # switch_drawn keeps the router's draw, so the configured rates stay checkable). What the draw
        # allows is used up (a follow-up's chunk, the soft neighbours): anywhere else, labelled by the
        # similarity rule.
        drawn = tried[-1].get("switch_drawn") or tried[-1]["switch"]
        excluded = frozenset(tried_plan["gold_id"] for tried_plan in tried)
        return (
            share_plan(runtime, state, drawn, excluded)
            or plan_turn(runtime, state, drawn, excluded, len(tried))
            or (
                plan_turn(runtime, state, "hard", excluded, len(tried))
                if drawn != "hard" and turns_so_far(state)
                else None
            )
        )

    limits = RetryLimits(
        context.max_overlap, context.overlap_replans, BASELINE_FORM_REPLANS if seam.is_baseline else FORM_REPLANS
    )
    kept = ask_with_replans(plan, ask, replan, limits)
    draft = kept.draft
    return {
        **kept.plan,
        "turn_plan": {**state["turn_plan"], "gold_ids": [kept.plan["gold_id"]], "asked_ids": [kept.plan["gold_id"]]},
        "draft": {
            "question": draft.question,
            "rewrite": draft.rewrite,
            "subject": getattr(draft, "subject", None),
            "question_type": getattr(draft, "question_type", None),
        },
        "overlap": {
            "lexical_overlap": kept.overlap,
            "overlap_rejected": kept.overlap > context.max_overlap,
            "overlap_corrections": kept.corrections,
            "overlap_replans": kept.overlap_replans,
            "form_replans": kept.form_replans,
        },
    }


def _ask_typed(runtime: Runtime[SynthesisContext], state: ConversationState, seam: ModelSeam) -> dict[str, Any]:
    """The question of a turn that is not a plain answerable one (agents/turn_types.py), asked
    once: its overlap is recorded against the passages it is about, not corrected."""
    asked = passages_of(runtime, state["collection"], state["turn_plan"]["asked_ids"])
    draft = seam.run(
        TypedQuestioner(),
        kind=state["kind"],
        passages=asked,
        history=state.get("turns", []),
        question_type=state.get("question_type"),
        corpus_stats=corpus_stats(runtime, state["collection"]),
    )
    overlap = round(lexical_overlap(draft.question, [passage["text"] for passage in asked]), 4)
    return {
        "draft": {
            "question": draft.question,
            "rewrite": draft.rewrite,
            "subject": getattr(draft, "subject", None),
            "question_type": getattr(draft, "question_type", None),
            "parts": getattr(draft, "parts", None),
        },
        "overlap": {
            "lexical_overlap": overlap,
            "overlap_rejected": False,
            "overlap_corrections": 0,
            "overlap_replans": 0,
            "form_replans": 0,
        },
    }


def responder(state: ConversationState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Answers from the gold chunk only: no other passage reaches its prompt. A turn of another
    type gets its reference reply from the passages it may use (agents/turn_types.py): none for
    an unanswerable one, the available one for a partial one, the candidates for an
    underspecified one, every gold for a multi-passage one."""
    kind = state.get("kind", "answerable")
    if kind not in ("answerable", "clarification"):
        plan = state["turn_plan"]
        usable = {
            "unanswerable": [],
            "partial": plan["gold_ids"],
            "underspecified": plan["candidate_ids"],
            "multi-passage": plan["gold_ids"],
        }[kind]
        reply = model_seam(runtime, state.get("run_id")).run(
            ReferenceResponder(),
            kind=kind,
            passages=passages_of(runtime, state["collection"], usable),
            history=state.get("turns", []),
            question=state["draft"]["question"],
            parts=state["draft"].get("parts"),
            corpus_stats=corpus_stats(runtime, state["collection"]),
        )
        return {"response": reply.answer}
    (gold,) = passages_of(runtime, state["collection"], [state["gold_id"]])
    answer = model_seam(runtime, state.get("run_id")).run(
        Responder(),
        gold=gold,
        history=state.get("turns", []),
        question=state["draft"]["question"],
        corpus_stats=corpus_stats(runtime, state["collection"]),
    )
    return {"response": answer.answer}


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
        previous_id = walked_clusters(runtime, state)[position["cluster"]][position["offset"]]
        titles = passages_of(runtime, state["collection"], [plan["asked_ids"][0], previous_id])
        polished = model_seam(runtime, state.get("run_id")).run(
            Polisher(),
            history=turns,
            question=original,
            title=titles[0]["title"],
            previous_title=titles[1]["title"],
            subject=state["draft"].get("subject"),
            previous_subject=state.get("previous_subject"),
        )
        history_text = [text for turn in turns for text in (turn["question"], turn["response"])]
        review = review_polish(original, polished.question, history_text)
        asked, rejected = (polished.question.strip(), None) if review.accepted else (original, review.reason)
    attempt = state.get("label_attempt") or {}
    turn = {
        "index": len(turns),
        "question": asked,
        "question_unpolished": original,
        "rewrite": state["draft"]["rewrite"],
        "response": state["response"],
        "gold_ids": list(plan["gold_ids"]),
        "switch": state["switch"],
        "switch_drawn": state.get("switch_drawn"),
        "similarity_to_previous": state.get("similarity"),
        "polish_rejected": rejected,
        **state["overlap"],
        "answerability": ANSWERABILITY_OF_KIND.get(kind, "answerable"),
        # what the offline questioner wrote, else the type a model was asked for, else the wording's
        "question_type": state["draft"].get("question_type")
        or state.get("question_type")
        or question_type_of(original),
        # the polisher's coreference and ellipsis lean on the history; the rewrite is the standalone form
        "standalone": kind != "clarification" and asked == original,
        "held_out_ids": list(plan.get("held_out_ids") or []),
        "candidate_ids": list(plan.get("candidate_ids") or []),
        "turn_type": kind,
        "turn_type_drawn": state.get("kind_drawn", kind),
        "label_dropped": attempt.get("dropped") if attempt.get("turn") == turn_position(state) else None,
        "label_rejections": attempt.get("rejections", 0) if attempt.get("turn") == turn_position(state) else 0,
        "gate_rejections": dict(attempt.get("gate") or {}) if attempt.get("turn") == turn_position(state) else {},
        "gate_flags": dict(attempt.get("flags") or {}),
        "gate_replaced": dict(attempt.get("replaced") or {}) if attempt.get("turn") == turn_position(state) else {},
    }
    return {
        "turns": [turn],
        "position": state["gold"],
        "previous_subject": state["draft"].get("subject"),
        "label_attempt": {},
    }


def router(state: ConversationState, runtime: Runtime[SynthesisContext]) -> Command[Literal["walker", "__end__"]]:
    """Draw how the next turn relates to this one (follow-up, soft or hard switch), or end."""
    if turn_position(state) >= state["turns_wanted"]:
        return Command(goto=END)  # type: ignore[arg-type]  # langgraph types END as str
    if not state.get("turns"):  # the gate dropped every turn so far: start again
        return Command(goto="walker", update={"switch": "start"})
    context = job.context(runtime)
    policy = SwitchPolicy(context.switch_rate, context.hard_switch_rate)
    rng = turn_rng(context.seed, state["conversation_id"], turn_position(state) - 1, "router")
    switch = draw_switch(policy, rng)
    dropped = state.get("dropped_turns", [])
    if dropped and dropped[-1]["position"] == turn_position(state) - 1 and switch == "follow-up":
        switch = "soft"  # the turn just dropped had nothing left to ask here: move on
    if state["turns"][-1].get("answerability") == "underspecified":
        switch = "follow-up"  # the clarification stays on the chunk the user meant (the walker's gold)
    return Command(goto="walker", update={"switch": switch})


conversation_builder = StateGraph(
    ConversationState, context_schema=SynthesisContext, input_schema=ConversationInput, output_schema=ConversationOutput
)
CONVERSATION_NODES: tuple[Callable[..., Any], ...] = (
    begin,
    walker,
    turn_type,
    *KIND_NODES,
    questioner,
    responder,
    label_judge,
    polisher,
    router,
)
for node in CONVERSATION_NODES:
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
conversation_in_run = InlineGraph(conversation_builder)
