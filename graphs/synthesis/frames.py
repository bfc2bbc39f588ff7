"""A benchmark's questions spread over their frames and types: no frame above a fifth of them, no type above
half (issue 30).

A conversation never repeats a frame (agents/offline/asking.py), but conversations run at once with no
shared state, so a benchmark of a few turns can ask a third of its questions in one frame by chance
(typer's seeds: 25% to 43% of 7 or 8 turns; one Markdown seed 21% of 19; round 30 readings). At export
the questions of a frame above ``FRAME_CAP`` (evals/measures/question_frames.py) are asked again, last
first, in another wording of the same fact (``agents/questioner.py`` ``rewordings``): its reply is the
same statements, so only the wording changes. A wording is taken only in a frame below the limit and unused in its conversation, within the run's
``--max-overlap`` (or the question's own overlap, if above it), and passing the whole quality gate (a question
kept with the reading model's flag alone may take a wording that model alone flags, when none passes clean). Then the
questions of a question type above half of them (``TYPE_CAP``: attrs, seed 326, asked 18 factoids of 35) are
reworded in another type the same way, no frame or type taken to its limit.

Only the offline questioner's plain answerable, unpolished questions are reworded: a model's question is its
own, and a polished one leans on the history. Each reworded turn keeps what it asked under
``REFRAMED_KEY`` (null in the others), so spreading again (a resumed export) starts from what the
conversations asked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.agents.offline.asking import answer
from benchsmith.agents.questioner import rewordings
from benchsmith.agents.text import WordStatistics
from benchsmith.evals.measures.lexical_overlap import lexical_overlap
from benchsmith.evals.measures.question_frames import frame_concentration, frame_limit, share_limit
from benchsmith.evals.quality_gate import GateVerdict, judge_turn
from benchsmith.evals.quality_gate.evidence import TurnEvidence
from benchsmith.graphs.contexts.synthesize import SynthesisContext
from benchsmith.graphs.runtime.resources import asks_offline
from benchsmith.graphs.synthesis.lookups import corpus_stats, passages_of
from benchsmith.graphs.synthesis.state import job
from benchsmith.graphs.synthesis.turn_checks import ill_formed_question
from benchsmith.language import question_frame

TYPE_CAP = 0.5  # the largest share one question type may have (issue 30)
REFRAMED_KEY = "reframed_from"  # a reworded turn's fields as the conversation asked them
REWORDED_FIELDS = ("question", "question_unpolished", "rewrite", "question_type", "lexical_overlap", "overlap_rejected")

# (question, its question type) → may the turn take it?
Acceptable = Callable[[str, str | None], bool]
# (conversation, the turn's position, what a wording must be) → the turn's reworded fields, or None
Rewording = Callable[[dict[str, Any], int, Acceptable], dict[str, Any] | None]


def frame_of(turn: dict[str, Any]) -> str:
    """The frame of the question the questioner wrote (before any polish)."""
    return question_frame(turn.get("question_unpolished") or turn["question"])


def type_limit(questions: int) -> int:
    """The most questions one question type may have among ``questions``: a half, and at least one."""
    return share_limit(TYPE_CAP, questions)


def as_asked(dialogue: dict[str, Any]) -> dict[str, Any]:
    """The dialogue with every reworded turn as its conversation asked it."""
    return {**dialogue, "turns": [_as_asked(turn) for turn in dialogue["turns"]]}


def _as_asked(turn: dict[str, Any]) -> dict[str, Any]:
    asked = turn.get(REFRAMED_KEY)
    kept = {key: value for key, value in turn.items() if key != REFRAMED_KEY}
    if asked is None:
        return kept
    return {  # in the turn's own key order, so that a resumed export writes the same bytes
        key: asked.get(key, value) for key, value in kept.items() if key in asked or key not in REWORDED_FIELDS
    }


@dataclass(frozen=True)
class Spread:
    """What :func:`spread_questions` reworded: for a frame above its limit, and for a question type above its."""

    reframed: int = 0
    retyped: int = 0


def spread_questions(dialogues: list[dict[str, Any]], reword: Rewording) -> tuple[list[dict[str, Any]], Spread]:
    """The dialogues with the questions of each frame above :func:`frame_limit`, then of each question type
    above :func:`type_limit`, reworded by ``reword`` where it can, the latest first; a rewording takes no frame or
    type to its limit, nor a frame its conversation asks in already."""
    dialogues = [
        {**dialogue, "turns": [{**turn, REFRAMED_KEY: None} for turn in dialogue["turns"]]} for dialogue in dialogues
    ]
    places = [(d, t) for d, dialogue in enumerate(dialogues) for t in range(len(dialogue["turns"]))]
    frame_at = {(d, t): frame_of(dialogues[d]["turns"][t]) for d, t in places}  # each question parsed once
    frames = Counter(frame_at.values())
    types = Counter(dialogues[d]["turns"][t].get("question_type") for d, t in places)
    frames_allowed, types_allowed = frame_limit(len(places)), type_limit(len(places))

    def rewords(d: int, t: int, *, new_type: bool) -> bool:
        turns = dialogues[d]["turns"]
        turn = turns[t]
        frame, kind = frame_at[d, t], turn.get("question_type")
        own = {frame_at[d, position] for position in range(len(turns)) if position != t}

        def acceptable(question: str, question_type: str | None) -> bool:
            taken = question_frame(question)
            if taken == frame or taken in own or frames[taken] >= frames_allowed:
                return False
            return (question_type == kind and not new_type) or (
                question_type != kind and types[question_type] < types_allowed
            )

        fields = reword(dialogues[d], t, acceptable)
        if fields is None:
            return False
        reworded = {**turn, **fields, REFRAMED_KEY: {key: turn[key] for key in REWORDED_FIELDS if key in turn}}
        if not acceptable(reworded.get("question_unpolished") or reworded["question"], reworded.get("question_type")):
            return False  # a rewording must leave every frame and type within its limit
        turns[t], frame_at[d, t] = reworded, frame_of(reworded)
        frames[frame] -= 1
        frames[frame_at[d, t]] += 1
        types[kind] -= 1
        types[reworded.get("question_type")] += 1
        return True

    reframed = retyped = 0
    for frame in [frame for frame, count in frames.most_common() if count > frames_allowed]:
        for d, t in reversed([place for place in places if frame_at[place] == frame]):
            if frames[frame] <= frames_allowed:
                break
            reframed += rewords(d, t, new_type=False)
    for kind in [kind for kind, count in types.most_common() if kind is not None and count > types_allowed]:
        for d, t in reversed([(d, t) for d, t in places if dialogues[d]["turns"][t].get("question_type") == kind]):
            if types[kind] <= types_allowed:
                break
            retyped += rewords(d, t, new_type=True)
    return dialogues, Spread(reframed, retyped)


def question_spread(dialogues: list[dict[str, Any]], spread: Spread) -> dict[str, Any]:
    """``stats.json``'s ``question_spread``: the most used frame (evals/measures/question_frames.py, of the
    questions as the questioner wrote them) and question type, their shares, what is still above its cap,
    and the turns reworded for each."""
    turns = [turn for dialogue in dialogues for turn in dialogue["turns"]]
    frames = frame_concentration(
        {str(number): turn.get("question_unpolished") or turn["question"] for number, turn in enumerate(turns)}
    )
    types = Counter(turn.get("question_type") for turn in turns if turn.get("question_type"))
    top_type, most_type = types.most_common(1)[0] if types else (None, 0)
    return {
        **{key: frames[key] for key in ("questions", "frames", "top_frame", "top_share", "cap")},
        "above_cap": sorted(item["frame"] for item in frames["above_cap"]),
        "reframed": spread.reframed,
        "top_type": top_type,
        "top_type_share": round(most_type / len(turns), 4) if turns else 0.0,
        "type_cap": TYPE_CAP,
        "types_above_cap": sorted(kind for kind, count in types.items() if count > type_limit(len(turns))),
        "retyped": spread.retyped,
    }


def offline_rewording(runtime: Runtime[SynthesisContext], collection: str) -> Rewording:
    """How a run's turns are reworded: by the offline questioner when it asked them, else not at all."""
    context = job.context(runtime)
    if not asks_offline(context.llm):
        return lambda _dialogue, _position, _acceptable: None
    statistics = corpus_stats(runtime, collection)

    def reword(dialogue: dict[str, Any], position: int, acceptable: Acceptable) -> dict[str, Any] | None:
        turn = dialogue["turns"][position]
        asked = turn.get("question_unpolished") or turn["question"]
        if (
            turn.get("turn_type", "answerable") != "answerable"
            or len(turn["gold_ids"]) != 1
            or turn["question"] != asked
        ):
            return None  # a typed turn asks of several passages or none; a polished one leans on the history
        gold = passages_of(runtime, collection, turn["gold_ids"])[0]
        return reworded(dialogue, position, acceptable, gold, statistics, context.max_overlap)

    return reword


def reworded(
    dialogue: dict[str, Any],
    position: int,
    acceptable: Acceptable,
    gold: dict[str, Any],
    statistics: WordStatistics | None,
    max_overlap: float,
) -> dict[str, Any] | None:
    """The fields of the offline questioner's answerable turn at ``position``, asked in another wording of its fact
    that ``acceptable`` takes, within ``max_overlap`` (or the question's own overlap), with the same reply, and
    passing the whole gate (or, when none does and the question as asked carries the reading model's flag, flagged
    by that model alone); None when no wording does."""
    turn = dialogue["turns"][position]
    asked = turn.get("question_unpolished") or turn["question"]
    ceiling = max(max_overlap, turn.get("lexical_overlap") or 0.0)
    history = dialogue["turns"][:position]
    previous = tuple((earlier["question"], earlier["response"]) for earlier in history)

    def verdict(question: str) -> GateVerdict:
        evidence = TurnEvidence(
            question=question, reply=turn["response"], previous=previous, gold=((gold["title"], gold["text"]),)
        )
        return judge_turn(evidence, reading_model=True)

    # The reading model's flag alone never costs a turn (model_flags.py): a question kept with one may be reworded
    # into one the model flags too, no worse by the gate's account, when no wording passes clean (typer, test:
    # "launch applications" and "run a package or module" kept so, two in one frame of a benchmark of eight turns).
    asked_flagged_by_model: bool | None = None  # judged once, and only when a wording is flagged by the model alone
    fallback: dict[str, Any] | None = None
    for candidate in rewordings(
        gold,
        history,
        asked,
        corpus_stats=statistics,
        question_type=turn.get("question_type"),
        acceptable=lambda question: lexical_overlap(question, [gold["text"]]) <= ceiling,
        conversation=dialogue["conversation_id"],
    ):
        question = candidate.question
        overlap = round(lexical_overlap(question, [gold["text"]]), 4)
        if (
            not acceptable(question, candidate.question_type)
            or overlap > ceiling
            or answer(gold, question) != turn["response"]
            or ill_formed_question(question, bool(history), [gold])
        ):
            continue
        found = verdict(question)
        if found.flags:
            if asked_flagged_by_model is None and found.by_model:
                asked_flagged_by_model = verdict(asked).by_model
            if not (found.by_model and asked_flagged_by_model):
                continue
        fields = {
            "question": question,
            "question_unpolished": question,
            "rewrite": candidate.rewrite,
            "question_type": candidate.question_type,
            "lexical_overlap": overlap,
            "overlap_rejected": overlap > max_overlap,
        }
        if not found.flags:
            return fields
        fallback = fallback or fields
    return fallback
