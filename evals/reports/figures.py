"""How reports show figures: a missing or undefined one (None, NaN: a kappa of judges that never
vary) as the document model's MISSING mark, never as a number."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from benchsmith.evals.reports import document


def undefined(value: float | None) -> bool:
    return value is None or math.isnan(value)


def decimal(value: float | None, places: int = 2) -> str:
    """A score or a coefficient, to two decimals (or ``places``)."""
    return document.MISSING if undefined(value) else f"{value:.{places}f}"


def signed(value: float | None) -> str:
    return document.MISSING if undefined(value) else f"{value:+.2f}"


def percent(value: float | None) -> str:
    return document.MISSING if undefined(value) else f"{value:.1%}"


def interval(low: float | None, high: float | None, show: Callable[[float | None], str]) -> str:
    return f"{show(low)}–{show(high)}"


def count_of(count: int, total: int) -> str:
    return f"{count:,} ({percent(count / total)} of the instances)" if total else f"{count:,}"


def by_judge(texts: Mapping[str, str]) -> document.BulletList:
    """Each judge's own words, one bullet per judge."""
    return document.BulletList([f"{judge}: {text}" for judge, text in texts.items()])
