"""What the offline quality gate (evals/quality_gate/) did to a synthesized benchmark, for
``stats.json``: per rubric class, the questions it refused (the turn was asked again or re-planned
and then kept), the turns it dropped, the kept turns it flagged (``--quality-gate flag``; under
``replan`` the reading model's flags of turns no replacement passed) and the turns that replaced
one the reading model flagged."""

from __future__ import annotations

from collections import Counter
from typing import Any

from benchsmith.evals.quality_gate.evidence import GATE_CLASSES


def gate_counts(dialogues: list[dict[str, Any]], mode: str) -> dict[str, Any]:
    """``{"mode", "turns_kept", "turns_dropped", "refused", "dropped", "flagged_kept", "replaced",
    "model_flagged", "examples"}``: counts per class (every class listed, zeros included), the turns
    the reading model flagged that were replaced and kept (``model_flagged``, under ``replan``),
    and, per class, the first dropped or flagged question."""
    turns = [turn for dialogue in dialogues for turn in dialogue["turns"]]
    dropped = [item for dialogue in dialogues for item in dialogue.get("dropped_turns", [])]
    refused: Counter[str] = Counter()
    for turn in turns:
        refused.update(turn.get("gate_rejections") or {})
    flagged = Counter(klass for turn in turns for klass in (turn.get("gate_flags") or {}))
    replaced = Counter(klass for turn in turns for klass in (turn.get("gate_replaced") or {}))
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
        "replaced": {klass: replaced[klass] for klass in GATE_CLASSES},
        **({"model_flagged": _model_flagged(turns)} if mode == "replan" else {}),
        "examples": examples,
    }


def _model_flagged(turns: list[dict[str, Any]]) -> dict[str, int]:
    """The turns the reading model alone flagged: replaced by a question the gate passed, or kept
    (no replacement passed: under ``replan`` a kept turn's flags are the model's)."""
    return {
        "replaced": sum(bool(turn.get("gate_replaced")) for turn in turns),
        "kept": sum(bool(turn.get("gate_flags")) for turn in turns),
    }
