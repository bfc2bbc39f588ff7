"""The ``--judge`` option of a command that a judge ensemble grades (audit, robustness, select): what a
judge may be is the command's to say; repeated for an ensemble, the offline baseline judge when none is given."""

from __future__ import annotations

from typing import Any

from benchsmith.agents.defaults import BASELINE
from benchsmith.cli.settings import repeated_option


def judge_ensemble_option(judges: str) -> Any:
    """The ``--judge`` option, ``judges`` saying what a judge may be (its help text's start)."""
    return repeated_option("--judge", f"{judges} Repeat for an ensemble.", BASELINE)


def judges_given(judge: list[str] | None) -> list[str]:
    """The ``--judge`` values, the baseline judge when none is given."""
    return judge or [BASELINE]
