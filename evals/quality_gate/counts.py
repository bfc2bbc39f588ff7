"""What the offline quality gate (evals/quality_gate/) did to a synthesized benchmark, for
``stats.json``: per rubric class, the questions it refused (the turn was asked again or re-planned
and then kept), the turns it dropped, and the kept turns it flagged (``--quality-gate flag``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from benchsmith.evals.quality_gate import GATE_CLASSES


def gate_counts(dialogues: list[dict[str, Any]], mode: str) -> dict[str, Any]:
    """``{"mode", "turns_kept", "refused", "dropped", "flagged_kept", "examples"}``: counts per class
    (every class listed, zeros included) and, per class, the first dropped or flagged question."""
    turns = [turn for dialogue in dialogues for turn in dialogue["turns"]]
    dropped = [item for dialogue in dialogues for item in dialogue.get("dropped_turns", [])]
    refused: Counter[str] = Counter()
    for turn in turns:
        refused.update(turn.get("gate_rejections") or {})
    flagged = Counter(klass for turn in turns for klass in (turn.get("gate_flags") or {}))
    examples: dict[str, str] = {}
    for item in dropped:
        examples.setdefault(item["class"], item["question"])
    for turn in turns:
        for klass in turn.get("gate_flags") or {}:
            examples.setdefault(klass, turn["question"])
    return {
        "mode": mode,
        "turns_kept": len(turns),
        "turns_dropped": len(dropped),
        "refused": {klass: refused[klass] for klass in GATE_CLASSES},
        "dropped": {klass: sum(item["class"] == klass for item in dropped) for klass in GATE_CLASSES},
        "flagged_kept": {klass: flagged[klass] for klass in GATE_CLASSES},
        "examples": examples,
    }
