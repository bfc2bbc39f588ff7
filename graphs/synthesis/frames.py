"""A benchmark's questions spread over their frames: no frame above a fifth of them (issue 30).

A conversation never repeats a frame (agents/offline/asking.py), but conversations run at once with no
shared state, so a benchmark of a few turns can ask a third of its questions in one frame by chance
(typer's seeds: 25% to 43% of 7 or 8 turns; one Markdown seed 21% of 19; round 30 readings). At export
the questions of a frame above ``FRAME_CAP`` are asked again, last first, in another wording of the same
fact (``agents/questioner.py`` ``rewordings``): its reply is the same statements, so only the wording
changes. A wording is taken only in a frame below the limit and unused in its conversation, within the run's
``--max-overlap`` (or the question's own overlap, if above it), and passing the whole quality gate.

Only the offline questioner's plain answerable, unpolished questions are reworded: a model's question is its
own, and a polished one leans on the history. Each reworded turn keeps what it asked under
``REFRAMED_KEY`` (null in the others), so spreading again (a resumed export) starts from what the
conversations asked.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.agents.offline.asking import answer
from benchsmith.agents.questioner import rewordings
from benchsmith.evals.measures.lexical_overlap import lexical_overlap
from benchsmith.evals.quality_gate import judge_turn
from benchsmith.evals.quality_gate.evidence import TurnEvidence
from benchsmith.graphs.contexts.synthesize import SynthesisContext
from benchsmith.graphs.synthesis.lookups import corpus_stats, model_seam, passages_of
from benchsmith.graphs.synthesis.state import job
from benchsmith.graphs.synthesis.turn_checks import ill_formed_question
from benchsmith.language import question_frame

FRAME_CAP = 0.2  # the largest share of a benchmark's questions one frame may have (issue 30)
REFRAMED_KEY = "reframed_from"  # a reworded turn's fields as the conversation asked them
REWORDED_FIELDS = ("question", "question_unpolished", "rewrite", "question_type", "lexical_overlap", "overlap_rejected")

# (conversation, the turn's position, frames it must not take) → the turn's reworded fields, or None
Rewording = Callable[[dict[str, Any], int, frozenset[str]], dict[str, Any] | None]


def frame_of(turn: dict[str, Any]) -> str:
    """The frame of the question the questioner wrote (before any polish)."""
    return question_frame(turn.get("question_unpolished") or turn["question"])


def frame_limit(questions: int) -> int:
    """The most questions one frame may have among ``questions``: a fifth, and at least one."""
    return max(1, math.floor(FRAME_CAP * questions + 1e-9))


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


def spread_frames(dialogues: list[dict[str, Any]], reword: Rewording) -> tuple[list[dict[str, Any]], int]:
    """The dialogues with the questions of each frame above :func:`frame_limit` reworded by ``reword``
    where it can, the latest first, and how many were."""
    dialogues = [
        {**dialogue, "turns": [{**turn, REFRAMED_KEY: None} for turn in dialogue["turns"]]} for dialogue in dialogues
    ]
    places: dict[str, list[tuple[int, int]]] = {}
    for d, dialogue in enumerate(dialogues):
        for t, turn in enumerate(dialogue["turns"]):
            places.setdefault(frame_of(turn), []).append((d, t))
    counts = Counter({frame: len(found) for frame, found in places.items()})
    limit = frame_limit(sum(counts.values()))
    reframed = 0
    for frame in [frame for frame, count in counts.most_common() if count > limit]:
        for d, t in reversed(places[frame]):
            if counts[frame] <= limit:
                break
            turns = dialogues[d]["turns"]
            own = {frame_of(other) for position, other in enumerate(turns) if position != t}
            avoid = frozenset({name for name, count in counts.items() if count >= limit} | own | {frame})
            fields = reword(dialogues[d], t, avoid)
            if fields is None:
                continue
            turn = turns[t]
            reworded = {**turn, **fields, REFRAMED_KEY: {key: turn[key] for key in REWORDED_FIELDS if key in turn}}
            if frame_of(reworded) in avoid:
                continue  # a rewording must leave every frame within the limit
            turns[t] = reworded
            counts[frame] -= 1
            counts[frame_of(reworded)] += 1
            reframed += 1
    return dialogues, reframed


def frame_shares(dialogues: list[dict[str, Any]], reframed: int) -> dict[str, Any]:
    """``stats.json``'s ``question_frames``: the most used frame, its share, and the turns reworded."""
    counts = Counter(frame_of(turn) for dialogue in dialogues for turn in dialogue["turns"])
    total = sum(counts.values())
    top, most = counts.most_common(1)[0] if counts else (None, 0)
    return {
        "questions": total,
        "frames": len(counts),
        "top_frame": top,
        "top_share": round(most / total, 4) if total else 0.0,
        "cap": FRAME_CAP,
        "above_cap": sorted(frame for frame, count in counts.items() if count > frame_limit(total)),
        "reframed": reframed,
    }


def offline_rewording(runtime: Runtime[SynthesisContext], collection: str, run_id: str) -> Rewording:
    """How a run's turns are reworded: by the offline questioner when it asked them, else not at all."""
    if not model_seam(runtime, run_id).is_baseline:
        return lambda _dialogue, _position, _avoid: None
    context = job.context(runtime)
    statistics = corpus_stats(runtime, collection)

    def reword(dialogue: dict[str, Any], position: int, avoid: frozenset[str]) -> dict[str, Any] | None:
        turn = dialogue["turns"][position]
        asked = turn.get("question_unpolished") or turn["question"]
        if (
            turn.get("turn_type", "answerable") != "answerable"
            or len(turn["gold_ids"]) != 1
            or turn["question"] != asked
        ):
            return None  # a typed turn asks of several passages or none; a polished one leans on the history
        gold = passages_of(runtime, collection, turn["gold_ids"])[0]
        ceiling = max(context.max_overlap, turn.get("lexical_overlap") or 0.0)
        history = dialogue["turns"][:position]
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
            if question_frame(question) in avoid or overlap > ceiling or answer(gold, question) != turn["response"]:
                continue
            evidence = TurnEvidence(
                question=question,
                reply=turn["response"],
                previous=tuple((earlier["question"], earlier["response"]) for earlier in history),
                gold=((gold["title"], gold["text"]),),
            )
            if ill_formed_question(question, bool(history), [gold]) or judge_turn(evidence, reading_model=True).flags:
                continue
            return {
                "question": question,
                "question_unpolished": question,
                "rewrite": candidate.rewrite,
                "question_type": candidate.question_type or turn.get("question_type"),
                "lexical_overlap": overlap,
                "overlap_rejected": overlap > context.max_overlap,
            }
        return None

    return reword
