"""Per-group means of per-query values: by turn index and by switch type for conversational
benchmarks (MTR-Bench reports both: later turns and hard switches are where retrievers fail)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SWITCH_ORDER = ("start", "follow-up", "soft", "hard")


def mean_by_group(
    per_query: Mapping[str, Mapping[str, float]], group_of: Mapping[str, Any], measures: Sequence[str]
) -> dict[str, dict[str, float]]:
    """``{group: {measure: mean, "queries": count}}`` over the queries that have a group;
    groups in natural order (numbers ascending, switch types in conversation order)."""
    members: dict[Any, list[str]] = {}
    for query_id in per_query:
        if group_of.get(query_id) is not None:
            members.setdefault(group_of[query_id], []).append(query_id)
    result: dict[str, dict[str, float]] = {}
    for group in sorted(members, key=_group_order):
        query_ids = members[group]
        means = {measure: sum(per_query[q][measure] for q in query_ids) / len(query_ids) for measure in measures}
        result[str(group)] = {**means, "queries": len(query_ids)}
    return result


def _group_order(group: Any) -> tuple[int, Any]:
    if isinstance(group, int):
        return (0, group)
    if group in SWITCH_ORDER:
        return (1, SWITCH_ORDER.index(group))
    return (2, str(group))
