"""The counts of a benchmark's turn labels (issue 22), for ``stats.json``: answerability,
question type, standalone, and the turn types drawn and dropped."""

from __future__ import annotations

from collections import Counter
from typing import Any

ANSWERABILITY = ("answerable", "partial", "unanswerable", "underspecified")


def label_counts(dialogues: list[dict[str, Any]]) -> dict[str, Any]:
    """Turns per label; a turn written before the labels existed counts as answerable, of no
    known type, standalone unless polished."""
    turns = [turn for dialogue in dialogues for turn in dialogue["turns"]]
    answerability = Counter(turn.get("answerability", "answerable") for turn in turns)
    return {
        "answerability": {label: answerability[label] for label in ANSWERABILITY},
        "question_types": dict(sorted(Counter(turn.get("question_type") or "unknown" for turn in turns).items())),
        "standalone": {
            "standalone": sum(bool(turn.get("standalone", True)) for turn in turns),
            "non_standalone": sum(not turn.get("standalone", True) for turn in turns),
        },
        "turn_types": dict(sorted(Counter(turn.get("turn_type", "answerable") for turn in turns).items())),
        "multi_gold_turns": sum(len(turn["gold_ids"]) > 1 for turn in turns),
        "held_out_chunks": len({chunk for turn in turns for chunk in turn.get("held_out_ids") or []}),
        "turn_types_dropped": dict(
            sorted(Counter(turn["label_dropped"] for turn in turns if turn.get("label_dropped")).items())
        ),
    }
