"""Named presets of a synthesis run's turn-type rates and question-type mix (``--rates NAME``),
each from a named source.

Only presets whose figures come from a source that can be checked are offered. ``demo`` is the
rates `benchsmith demo` runs with, chosen to show every turn and question type in 120 turns. A
preset from a published benchmark (MTRAG's shares of unanswerable, underspecified and non-standalone
turns, Katsis et al. 2025) would need the paper's per-turn shares, which could not be verified
here: the public MTRAG-UN README gives 468 answerable and partially answerable questions of 666
tasks, one task per conversation chosen to favour the hard turns, which is not a per-turn rate.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from benchsmith.tools.benchmark.dialogue_walk import DEMO_QUESTION_TYPES


@dataclass(frozen=True)
class TurnTypeRates:
    """Shares of turns of each drawn kind, the question-type mix, and where the figures come from."""

    unanswerable_rate: float
    partial_rate: float
    underspecified_rate: float
    multi_gold_rate: float
    question_types: str
    source: str

    def settings(self) -> dict[str, float | str]:
        """The synthesis settings the preset sets (every field but its source)."""
        return {name: value for name, value in asdict(self).items() if name != "source"}

    def described(self) -> str:
        return (
            f"unanswerable {self.unanswerable_rate:g}, partial {self.partial_rate:g}, underspecified "
            f"{self.underspecified_rate:g}, multi-gold {self.multi_gold_rate:g}, question types "
            f"{self.question_types or 'unset'} ({self.source})"
        )


TURN_TYPE_PRESETS = {
    "demo": TurnTypeRates(
        unanswerable_rate=0.1,
        partial_rate=0.05,
        underspecified_rate=0.1,
        multi_gold_rate=0.1,
        question_types=DEMO_QUESTION_TYPES,
        source="benchsmith demo's rates: every turn and question type shows in 120 turns",
    ),
}


def presets_described() -> str:
    """Every preset with its figures and source, for ``--help``."""
    return "; ".join(f"{name}: {preset.described()}" for name, preset in TURN_TYPE_PRESETS.items())
