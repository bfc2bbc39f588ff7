"""Metadata filters: which chunks a configuration may retrieve at all.

A filter is ``none`` or predicates joined by ``&``, each ``FIELD OP VALUE``:

* ``=`` and ``!=``: equal or not (text, case-sensitive);
* ``~``: contains, ``^``: starts with (text, case-insensitive);
* ``>=``, ``<=``, ``>``, ``<``: numeric comparison.

Fields are a chunk's metadata: ``doc_id``, ``title``, ``source``, ``kind`` (text), ``position``
(its place in the document) and ``chars`` (its length). Example: ``title^json & chars>=200``.
A filtered retriever ranks only the chunks that pass, over the statistics of the whole
collection (what a search engine's filter does), so a filter changes which chunks compete,
not how they are scored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchsmith.stores.errors import InputError

NONE = "none"
FIELDS = {"doc_id": str, "title": str, "source": str, "kind": str, "position": float, "chars": float}
PREDICATE = re.compile(r"\s*([a-z_]+)\s*(!=|>=|<=|=|~|\^|>|<)\s*(.*?)\s*$")
NUMERIC_OPERATORS = (">=", "<=", ">", "<")


@dataclass(frozen=True)
class Predicate:
    field: str
    operator: str
    value: str

    def holds(self, metadata: Mapping[str, Any]) -> bool:
        actual = metadata.get(self.field)
        if actual is None:
            return False
        if self.operator in NUMERIC_OPERATORS:
            number, limit = float(actual), float(self.value)
            return {">=": number >= limit, "<=": number <= limit, ">": number > limit, "<": number < limit}[
                self.operator
            ]
        text = str(actual)
        if self.operator == "=":
            return text == self.value
        if self.operator == "!=":
            return text != self.value
        if self.operator == "~":
            return self.value.lower() in text.lower()
        return text.lower().startswith(self.value.lower())  # "^"


@dataclass(frozen=True)
class MetadataFilter:
    predicates: tuple[Predicate, ...] = ()

    @property
    def label(self) -> str:
        return " & ".join(f"{p.field}{p.operator}{p.value}" for p in self.predicates) or NONE

    def allows(self, metadata: Mapping[str, Any]) -> bool:
        return all(predicate.holds(metadata) for predicate in self.predicates)


def parse_filter(text: str | None) -> MetadataFilter:
    """A filter from its text form; ``none`` (or empty) allows everything."""
    text = (text or "").strip()
    if text in ("", NONE):
        return MetadataFilter()
    predicates = []
    for part in text.split("&"):
        match = PREDICATE.fullmatch(part)
        if match is None or not match.group(3):
            raise InputError(
                f"filter {text!r}: {part.strip()!r} is not FIELD OP VALUE (OP one of = != ~ ^ >= <= > <), "
                "e.g. title^json & chars>=200"
            )
        field, operator, value = match.groups()
        if field not in FIELDS:
            raise InputError(f"filter {text!r}: unknown field {field!r} (use {', '.join(FIELDS)})")
        if operator in NUMERIC_OPERATORS:
            try:
                float(value)
            except ValueError:
                raise InputError(f"filter {text!r}: {operator} compares numbers, got {value!r}") from None
        predicates.append(Predicate(field, operator, value))
    return MetadataFilter(tuple(predicates))
