"""The Fact record: what a statement does (its kind), what a question about it is about (its topic),
the words its questions are made of (its slots) and the statements that answer it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FactKind = Literal[
    "procedure",
    "condition",
    "remedy",
    "absence",
    "error",
    "definition",
    "purpose",
    "returns",
    "conditional-return",
    "parameter",
    "comparison",
    "capability",
    "default",
    "behaviour",
    "agent",
    "occasion",
    "advice",
    "section",
]


@dataclass(frozen=True)
class Fact:
    kind: FactKind
    topic: str  # what the question is about: a noun phrase or an entry's short name
    slots: tuple[tuple[str, str], ...]  # the words the questions are made of: vp, clause, entry, error, ...
    statement: int  # the position of the statement it comes from
    answer: tuple[int, ...]  # the positions of the statements that answer it, in order
    entry: str | None = None  # the qualified entry the statement documents
    entry_kind: str | None = None  # its kind ("function", "setting", a custom domain's "filter"...)
    example: str | None = None  # what a reply shows after the answering statements: an example in fences (examples.py)

    def slot(self, name: str) -> str:
        return dict(self.slots)[name]

    def has(self, name: str) -> bool:
        return any(key == name for key, _ in self.slots)


# What a reader finds in one statement: (kind, topic, slots) per fact; passage_facts makes each a Fact.
Found = list[tuple[FactKind, str, tuple[tuple[str, str], ...]]]
