"""Turns one conversation repeats of another: a corpus with few chunks a questioner can ask about
gives many conversations the same few turns, and a benchmark of 20 conversations that holds 15
distinct question/passage pairs measures less than it seems to.

A turn *repeats* when another conversation asked the same question on the same gold chunks (case,
spacing and the final question mark aside) before it, or asked of the same gold chunks what the same
reply answers: the same fact in another frame ("What's the best way to destroy widgets?" and "What is
the recommended way to destroy widgets?", guizero, development round 25). Before it means at an
earlier turn, or at the same turn with a lower conversation id (the conversations read side by side,
turn by turn: :func:`_first_asked`). A turn without gold (unanswerable) repeats by its question alone:
its reply says the same of every such turn.
A conversation whose turns repeat more than ``MOSTLY_REPEATED`` of the time adds little; the number
of the others is what the corpus supports at this length, and synthesis says so.

Synthesis ends each conversation before its first repeated turn (:func:`end_at_repeats`): a
benchmark asks each question about a passage once, and a prefix of a conversation is still a
conversation (a later turn may lean on the one cut). Side by side, a question asked at the first
turn of one conversation and the fifth of another ends the other one a turn early, not the first
one at once: in conversation-id order the cut took 52 of 120 turns on requests, side by side 37
(development round 15). Readers of every development and test tree
noted the same turns recurring (typer, round 14: 66 turns held 21 distinct questions), and a
broken turn repeated five times is five broken queries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MOSTLY_REPEATED = 0.5  # a conversation more than half of whose turns another one already asked
EXAMPLES = 3
CUT_KEY = "repeats_cut"  # a conversation's turns from its first repeat on, kept in its record


Key = tuple[str, str, tuple[str, ...]]


def _keys(turn: dict[str, Any]) -> tuple[Key, ...]:
    """The turn's question on its gold and, where it has gold, its reply on its gold."""
    gold = tuple(sorted(turn.get("gold_ids") or ()))
    question = " ".join(turn.get("question", "").lower().split()).rstrip("?").strip()
    if not gold:
        return (("question", question, gold),)
    return ("question", question, gold), ("reply", " ".join(turn.get("response", "").split()), gold)


def repeated_turns(dialogues: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``{"turns", "repeated", "share", "mostly_repeated_conversations", "distinct_conversations",
    "examples"}``: the turns that repeat another conversation's, the conversations mostly made of
    them (ids), how many conversations are not, and up to ``EXAMPLES`` repeated questions with the
    conversation that asked them first."""
    ordered = sorted(dialogues, key=lambda item: item["conversation_id"])
    first_asked = _first_asked([(dialogue["conversation_id"], dialogue["turns"]) for dialogue in ordered])
    turns = repeated = 0
    mostly: list[str] = []
    examples: list[dict[str, str]] = []
    for dialogue in ordered:
        conversation = dialogue["conversation_id"]
        own_repeats = 0
        for turn in dialogue["turns"]:
            owners = (first_asked[key] for key in _keys(turn))
            earlier = next((owner for owner in owners if owner != conversation), conversation)
            if earlier != conversation:
                own_repeats += 1
                if len(examples) < EXAMPLES:
                    examples.append(
                        {"question": turn.get("question", ""), "conversation": conversation, "first_asked_in": earlier}
                    )
        turns += len(dialogue["turns"])
        repeated += own_repeats
        if dialogue["turns"] and own_repeats / len(dialogue["turns"]) > MOSTLY_REPEATED:
            mostly.append(conversation)
    return {
        "turns": turns,
        "repeated": repeated,
        "share": round(repeated / turns, 4) if turns else 0.0,
        "mostly_repeated_conversations": mostly,
        "distinct_conversations": len(dialogues) - len(mostly),
        "examples": examples,
    }


def _first_asked(conversations: Sequence[tuple[str, list[dict[str, Any]]]]) -> dict[Key, str]:
    """{question (or reply) and gold: the conversation that asked it first}, the conversations (in id order)
    read side by side: every first turn, then every second turn, and so on."""
    first_asked: dict[Key, str] = {}
    for position in range(max((len(turns) for _, turns in conversations), default=0)):
        for conversation, turns in conversations:
            if position < len(turns):
                for key in _keys(turns[position]):
                    first_asked.setdefault(key, conversation)
    return first_asked


def end_at_repeats(dialogues: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The dialogues (in conversation-id order) each ended before its first turn that repeats another
    conversation's (read side by side: a conversation that ends no longer asks its later turns), and
    the number of turns cut. The cut turns stay in the record under ``CUT_KEY``, so ending again (a
    resumed export) gives the same dialogues: the function of the turns the conversations asked, not
    of a file already cut."""
    ordered = sorted(dialogues, key=lambda item: item["conversation_id"])
    asked = [asked_turns(dialogue) for dialogue in ordered]
    keep = [len(turns) for turns in asked]
    first_asked: dict[Key, str] = {}
    for position in range(max(keep, default=0)):
        for index, (dialogue, turns) in enumerate(zip(ordered, asked, strict=True)):
            if position >= keep[index]:
                continue  # ended already, or asked no more
            conversation = dialogue["conversation_id"]
            keys = _keys(turns[position])
            if any(first_asked.get(key, conversation) != conversation for key in keys):
                keep[index] = position  # a cut turn claims none of its keys: the conversation no longer asks it
                continue
            for key in keys:
                first_asked.setdefault(key, conversation)
    ended, cut = [], 0
    for dialogue, turns, kept in zip(ordered, asked, keep, strict=True):
        record = {key: value for key, value in dialogue.items() if key != CUT_KEY}
        record["turns"] = turns[:kept]
        if kept < len(turns):
            record[CUT_KEY] = turns[kept:]
            cut += len(turns) - kept
        ended.append(record)
    return ended, cut


def asked_turns(dialogue: dict[str, Any]) -> list[dict[str, Any]]:
    """Every turn the conversation asked: those kept and those :func:`end_at_repeats` cut."""
    return [*dialogue["turns"], *dialogue.get(CUT_KEY, [])]
