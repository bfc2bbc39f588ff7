"""What synthesis does with a flag of the quality gate's reading model alone (no rule flagged the
turn). The model weighs a turn, it proves nothing (precision about 0.6 on trees it was not fitted
on), so its flag never costs a turn: the flagged turn waits in flight as the fallback while its
question is refused and asked again (an answerable turn's questioner asks another, a typed turn is
re-planned on its type's next plan). A replacement is kept only when the gate passes it entirely,
no rule and no model flag; when one is flagged by anything (or the label judge rejects it) the
next is asked, and when ``LABEL_ATTEMPTS`` questions in all were asked (or a typed turn's plans
ran out) the original is restored, with its flag recorded (``flagged_kept`` in stats.json).
Re-asking on the flag and dropping after the attempts cost most turns of small trees, whose
replacements the rules flagged in turn."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.types import Command

from benchsmith.evals.quality_gate import QUESTION_CLASSES, GateVerdict
from benchsmith.graphs.synthesis.state import LABEL_ATTEMPTS, TURN_IN_FLIGHT, ConversationState, turn_position

FALLBACK = "fallback"  # label_attempt's key for the model-flagged turn waiting in flight
GateRoute = Literal["polisher", "turn_type", "router"]


def replacing(state: ConversationState) -> bool:
    """Whether the turn in flight replaces one the reading model flagged."""
    return bool((state.get("label_attempt") or {}).get(FALLBACK))


def keep_in_flight(state: ConversationState, verdict: GateVerdict) -> Command[GateRoute]:
    """The reading model alone flagged the turn: keep it (what the nodes wrote for it, and what the
    label judge and gate recorded so far) as the fallback, and ask again."""
    attempt = dict(state.get("label_attempt") or {})
    fallback = {
        "turn": {key: state[key] for key in TURN_IN_FLIGHT if key in state},  # type: ignore[literal-required]
        "flags": dict(verdict.flags),
        "label": {key: attempt[key] for key in ("dropped", "rejections") if key in attempt},
        "reasks": 0,
    }
    return _ask_again(state, {**attempt, FALLBACK: fallback}, verdict.flags)


def judge_replacement(state: ConversationState, verdict: GateVerdict) -> Command[GateRoute]:
    """A replacement the gate passes entirely is kept, with the flag of the turn it replaced
    recorded; one flagged by a rule or the model is refused in turn. A typed turn is replaced by
    one of its type only: when its plans ran out (turn_type made the replacement answerable) the
    original comes back."""
    attempt = dict(state.get("label_attempt") or {})
    if state.get("kind", "answerable") != attempt[FALLBACK]["turn"].get("kind", "answerable"):
        return _restore(attempt)
    if not verdict.broken:
        replaced = attempt.pop(FALLBACK)["flags"]
        return Command(goto="polisher", update={"label_attempt": {**attempt, "flags": {}, "replaced": replaced}})
    if not verdict.by_model:  # counted as a rule's refusal, as on any turn
        attempt["gate"] = counted_refusal(attempt, verdict)
    return _ask_again(state, attempt, verdict.flags)


def refuse_replacement(state: ConversationState) -> Command[GateRoute]:
    """The label judge rejected a replacement: the next one, or the original back."""
    return _ask_again(state, dict(state.get("label_attempt") or {}), {})


def counted_refusal(attempt: dict[str, Any], verdict: GateVerdict) -> dict[str, int]:
    """The turn's refusals per rule class (``label_attempt["gate"]``) with this verdict's first class added."""
    gate = dict(attempt.get("gate") or {})
    flagged = verdict.first_class or ""
    return {**gate, flagged: gate.get(flagged, 0) + 1}


def _ask_again(state: ConversationState, attempt: dict[str, Any], flags: dict[str, str]) -> Command[GateRoute]:
    """Refuse the question in flight and ask another (a question class refuses its gold too, as a
    rule's flag does), or restore the original once ``LABEL_ATTEMPTS`` questions were asked."""
    fallback = attempt[FALLBACK]
    if fallback["reasks"] + 1 >= LABEL_ATTEMPTS:
        return _restore(attempt)
    update = {
        **attempt,
        "turn": turn_position(state),
        "refused": [*attempt.get("refused", []), state["draft"]["question"]],
        FALLBACK: {**fallback, "reasks": fallback["reasks"] + 1},
    }
    if flags.keys() & QUESTION_CLASSES:
        update["refused_golds"] = [*attempt.get("refused_golds", []), *state["turn_plan"].get("gold_ids", [])]
    if state.get("kind", "answerable") not in ("answerable", "clarification"):
        # the next plan of its type (turn_type makes it answerable when none is left); never dropped
        # for the model's flag: the original is restored instead
        update["attempt"] = attempt.get("attempt", 0) + 1
        update["rejections"] = attempt.get("rejections", 0) + 1
        update["dropped"] = attempt.get("dropped")
    return Command(goto="turn_type", update={"label_attempt": update})


def _restore(attempt: dict[str, Any]) -> Command[GateRoute]:
    """The original turn goes on to the polisher as it was, its model flag recorded; the rules'
    refusals of its replacements stay counted."""
    fallback = attempt.pop(FALLBACK)
    label = {**attempt, "dropped": None, "rejections": 0, **fallback["label"], "flags": fallback["flags"]}
    return Command(goto="polisher", update={**fallback["turn"], "label_attempt": label})
