"""How far the offline quality gate agrees with a reader of the same turns: a reviewer of a
synthesized benchmark (`benchsmith review`, read back by the audit) or the readings the gate is
calibrated on (benchmarks/gate_agreement.py). One turn is one pair (the reader says broken, the
gate flags it); a rejection is the reader's "broken", an accepted or edited turn is "ok"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchsmith.evals.measures.agreement import cohen_kappa


def reader_agreement(pairs: Sequence[tuple[bool, bool]]) -> dict[str, Any]:
    """``pairs``: per turn, (the reader says broken, the gate flags it). With B the turns both call
    broken, R the reader's broken, G the gate's flagged and A the turns where they agree, of N:

        agreement = A / N,   recall = B / R,   precision = B / G,

    the recall and precision being the gate's on the reader's rejections, and Cohen's κ of the two
    (evals/measures/agreement.py). A figure is None where its denominator is 0 (κ: where neither varies)."""
    turns = len(pairs)
    both = sum(reader and gate for reader, gate in pairs)
    broken = sum(reader for reader, _ in pairs)
    flagged = sum(gate for _, gate in pairs)
    agree = sum(reader == gate for reader, gate in pairs)
    kappa = cohen_kappa([reader for reader, _ in pairs], [gate for _, gate in pairs])
    return {
        "turns": turns,
        "reader_broken": broken,
        "gate_flagged": flagged,
        "both_broken": both,
        "gate_only": flagged - both,
        "reader_only": broken - both,
        "agreement": round(agree / turns, 4) if turns else None,
        "recall": round(both / broken, 4) if broken else None,
        "precision": round(both / flagged, 4) if flagged else None,
        "cohen_kappa": None if kappa is None else round(kappa, 4),
    }
