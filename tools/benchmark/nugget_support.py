"""From support judgments to a benchmark: which pooled chunk supports which nugget, the
question filters, and the qrels both levels of measures read.

* A question is dropped when none of its nuggets is supported by a pooled chunk (nothing to
  retrieve), and, when asked, when any of its nuggets is unsupported (FreshStack keeps only
  questions whose every nugget the corpus supports).
* Nugget qrels: every judged (nugget, chunk) pair of a kept question, label 1 (supports) or 0.
* Query-level qrels: every judged chunk, labelled with the number of nuggets it supports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

NO_SUPPORTED_NUGGET = "no nugget is supported by a pooled chunk"
UNSUPPORTED_NUGGET = "a nugget is supported by no pooled chunk"


@dataclass
class QuestionSupport:
    question_id: str
    nugget_ids: list[str]
    pool: list[str]  # the judged chunks, in pool order
    supporters: dict[str, list[str]] = field(default_factory=dict)  # nugget id → supporting chunks, pool order
    reasons: dict[str, str] = field(default_factory=dict)  # chunk → the judge's reason

    @property
    def supported_nuggets(self) -> list[str]:
        return [nugget for nugget in self.nugget_ids if self.supporters.get(nugget)]

    def label(self, nugget_id: str, doc_id: str) -> int:
        return int(doc_id in self.supporters.get(nugget_id, ()))


def collect_support(
    question_id: str, nugget_ids: Sequence[str], pool: Sequence[str], judgments: Iterable[Mapping[str, Any]]
) -> QuestionSupport:
    """One question's support from its batch records (``{"support": {chunk: {"nuggets": [...],
    "reason": ...}}}``); a chunk judged twice keeps its first verdict."""
    verdicts: dict[str, Mapping[str, Any]] = {}
    for record in judgments:
        for doc_id, verdict in record["support"].items():
            verdicts.setdefault(doc_id, verdict)
    known = set(nugget_ids)
    supporters = {
        nugget: [doc_id for doc_id in pool if nugget in verdicts.get(doc_id, {}).get("nuggets", ())]
        for nugget in nugget_ids
    }
    unknown = {n for verdict in verdicts.values() for n in verdict.get("nuggets", ())} - known
    if unknown:
        raise ValueError(f"question {question_id}: judgments name unknown nuggets {sorted(unknown)}")
    return QuestionSupport(
        question_id,
        list(nugget_ids),
        list(pool),
        supporters,
        {doc_id: str(verdict.get("reason", "")) for doc_id, verdict in verdicts.items()},
    )


def filter_questions(
    supports: Sequence[QuestionSupport], all_nuggets_supported: bool
) -> tuple[list[QuestionSupport], list[tuple[str, str]]]:
    """``(kept, [(question id, why dropped)])``, both in the given order."""
    kept, dropped = [], []
    for support in supports:
        supported = support.supported_nuggets
        if not supported:
            dropped.append((support.question_id, NO_SUPPORTED_NUGGET))
        elif all_nuggets_supported and len(supported) < len(support.nugget_ids):
            dropped.append((support.question_id, UNSUPPORTED_NUGGET))
        else:
            kept.append(support)
    return kept, dropped


def nugget_qrels(supports: Sequence[QuestionSupport]) -> dict[str, dict[str, dict[str, int]]]:
    """``{qid: {nugget id: {chunk: label}}}`` over every judged pair."""
    return {
        support.question_id: {
            nugget: {doc_id: support.label(nugget, doc_id) for doc_id in support.pool} for nugget in support.nugget_ids
        }
        for support in supports
    }


def query_qrel_rows(supports: Sequence[QuestionSupport]) -> list[tuple[str, str, int]]:
    """``(qid, chunk, number of nuggets it supports)`` for every judged chunk."""
    return [
        (support.question_id, doc_id, sum(support.label(nugget, doc_id) for nugget in support.nugget_ids))
        for support in supports
        for doc_id in support.pool
    ]
