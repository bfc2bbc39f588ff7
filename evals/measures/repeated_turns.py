"""Turns one conversation repeats of another: a corpus with few chunks a questioner can ask about
gives many conversations the same few turns, and a benchmark of 20 conversations that holds 15
distinct question/passage pairs measures less than it seems to.

A turn *repeats* when an earlier conversation (in conversation-id order) has a turn with the same
gold chunks and the same question (case, spacing and the final question mark aside). A
conversation whose turns repeat more than ``MOSTLY_REPEATED`` of the time adds little; the number
of the others is what the corpus supports at this length, and synthesis says so.

Synthesis ends each conversation before its first repeated turn (:func:`end_at_repeats`): a
benchmark asks each question about a passage once, and a prefix of a conversation is still a
conversation (a later turn may lean on the one cut). Readers of every development and test tree
noted the same turns recurring (typer, round 14: 66 turns held 21 distinct questions), and a
broken turn repeated five times is five broken queries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MOSTLY_REPEATED = 0.5  # a conversation more than half of whose turns another one already asked
EXAMPLES = 3
CUT_KEY = "repeats_cut"  # a conversation's turns from its first repeat on, kept in its record


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


def end_at_repeats(dialogues: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The dialogues (in conversation-id order) each ended before its first turn that repeats an
    earlier conversation's, and the number of turns cut. The cut turns stay in the record under
    ``CUT_KEY``, so ending again (a resumed export) gives the same dialogues: the function of the
    turns the conversations asked, not of a file already cut."""
    first_asked: dict[tuple[str, tuple[str, ...]], str] = {}
    ended, cut = [], 0
    for dialogue in sorted(dialogues, key=lambda item: item["conversation_id"]):
        asked = asked_turns(dialogue)
        conversation = dialogue["conversation_id"]
        keep = next(
            (index for index, turn in enumerate(asked) if first_asked.get(_key(turn), conversation) != conversation),
            len(asked),
        )
        for turn in asked[:keep]:
            first_asked.setdefault(_key(turn), conversation)
        record = {key: value for key, value in dialogue.items() if key != CUT_KEY}
        record["turns"] = asked[:keep]
        if keep < len(asked):
            record[CUT_KEY] = asked[keep:]
            cut += len(asked) - keep
        ended.append(record)
    return ended, cut


def asked_turns(dialogue: dict[str, Any]) -> list[dict[str, Any]]:
    """Every turn the conversation asked: those kept and those :func:`end_at_repeats` cut."""
    return [*dialogue["turns"], *dialogue.get(CUT_KEY, [])]
