"""Turns one conversation repeats of another: a corpus with few chunks a questioner can ask about
gives many conversations the same few turns, and a benchmark of 20 conversations that holds 15
distinct question/passage pairs measures less than it seems to.

A turn *repeats* when an earlier conversation (in conversation-id order) has a turn with the same
gold chunks and the same question (case, spacing and the final question mark aside). A
conversation whose turns repeat more than ``MOSTLY_REPEATED`` of the time adds little; the number
of the others is what the corpus supports at this length, and synthesis says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MOSTLY_REPEATED = 0.5  # a conversation more than half of whose turns another one already asked
EXAMPLES = 3


def _key(turn: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    question = " ".join(turn.get("question", "").lower().split()).rstrip("?").strip()
    return question, tuple(sorted(turn.get("gold_ids") or ()))


def repeated_turns(dialogues: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``{"turns", "repeated", "share", "mostly_repeated_conversations", "distinct_conversations",
    "examples"}``: the turns that repeat an earlier conversation's, the conversations mostly made of
    them (ids), how many conversations are not, and up to ``EXAMPLES`` repeated questions with the
    conversation that asked them first."""
    first_asked: dict[tuple[str, tuple[str, ...]], str] = {}
    turns = repeated = 0
    mostly: list[str] = []
    examples: list[dict[str, str]] = []
    for dialogue in sorted(dialogues, key=lambda item: item["conversation_id"]):
        conversation = dialogue["conversation_id"]
        own_repeats = 0
        for turn in dialogue["turns"]:
            key = _key(turn)
            earlier = first_asked.setdefault(key, conversation)
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
