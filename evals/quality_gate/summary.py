"""The quality gate over a whole benchmark, for the audit: per rubric class, the rate of flagged
turns with examples, whether the benchmark is over the bound past which it is never usable, and how
its questions spread over their frames (evals/measures/question_frames.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchsmith.evals.measures.question_frames import frame_concentration, frame_note
from benchsmith.evals.quality_gate import MAX_FLAGGED_SHARE, GateVerdict
from benchsmith.evals.quality_gate.evidence import GATE_CLASSES

EXAMPLES_PER_CLASS = 3


def gate_summary(
    verdicts: Mapping[str, GateVerdict], questions: Mapping[str, str], examples: int = EXAMPLES_PER_CLASS
) -> dict[str, Any]:
    """``{"turns", "flagged", "flagged_share", "max_flagged_share", "over_limit", "classes", "frames"}``;
    ``classes``: per class, the turns flagged (a turn may be flagged in several), their share and
    the first ``examples`` turns with their question and why; ``frames``: the questions' frames
    (evals/measures/question_frames.py)."""
    turns = len(verdicts)
    flagged = sum(verdict.broken for verdict in verdicts.values())
    share = flagged / turns if turns else 0.0
    classes: dict[str, Any] = {}
    for klass in GATE_CLASSES:
        hits = [turn for turn, verdict in verdicts.items() if klass in verdict.flags]
        classes[klass] = {
            "turns": len(hits),
            "rate": round(len(hits) / turns, 4) if turns else 0.0,
            "examples": [
                {"turn": turn, "question": questions.get(turn, ""), "why": verdicts[turn].flags[klass]}
                for turn in hits[:examples]
            ],
        }
    return {
        "turns": turns,
        "flagged": flagged,
        "flagged_share": round(share, 4),
        "max_flagged_share": MAX_FLAGGED_SHARE,
        "over_limit": share > MAX_FLAGGED_SHARE,
        "classes": classes,
        "frames": frame_concentration(questions, examples),
    }


def gate_note(summary: Mapping[str, Any] | None) -> str | None:
    """What the verdict says of the gate: None when it flagged nothing and no frame is over its cap."""
    frames = frame_note((summary or {}).get("frames"))  # absent from a gate file written before frames were read
    if not summary or not summary.get("flagged"):
        return frames
    worst = sorted(
        ((klass, item["turns"]) for klass, item in summary["classes"].items() if item["turns"]),
        key=lambda pair: -pair[1],
    )
    listed = ", ".join(f"{klass.replace('_', ' ')} {count}" for klass, count in worst)
    bound = (
        f"over the {summary['max_flagged_share']:.0%} past which a benchmark is never usable"
        if summary["over_limit"]
        else f"under the {summary['max_flagged_share']:.0%} bound"
    )
    flags = (
        f"The offline quality gate flags {summary['flagged']:,} of {summary['turns']:,} turns "
        f"({summary['flagged_share']:.0%}, {bound}): {listed}."
    )
    return f"{flags} {frames}" if frames else flags
