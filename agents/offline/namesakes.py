"""Turns about more than one passage, offline: what they must share to be real.

* An **underspecified** question is one two different API entries answer: both are named
  ``route`` (``Flask.route`` and ``Blueprint.route``), ``decompress`` (``lzma.decompress`` and
  ``bz2.decompress``), so the two meanings lead a user to call different things. One concept
  documented on an API page and again on a narrative page is no ambiguity (:func:`shared_name`).
* A **multi-passage** or **partial** question asks one subject across its passages: each passage
  has a fact about the same entry or noun phrase (:func:`shared_subject`), not three fragments
  stitched together.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Sequence
from typing import Any

from benchsmith.agents.offline.facts import Fact, passage_facts
from benchsmith.entries import heading_entry_of, same_entry, short_name, statements

# Names every API uses: sharing one tells nothing apart ("__init__", "get", "run", "close" of two classes
# are not what a user finds ambiguous; they name the class).
GENERIC_NAMES = frozenset(
    "__init__ __call__ __repr__ __str__ __eq__ __hash__ __enter__ __exit__ self cls args kwargs "
    "get set run close open read write main name value data type copy update clear".split()
)
BUILTIN_CLASSES = frozenset(name for name in dir(builtins) if name[:1].isupper())


def documented_entries(passage: dict[str, Any]) -> set[str]:
    """The qualified names of the entries a passage documents (its statements' entries, and its
    heading when that names one)."""
    found = {s.entry for s in statements(passage["text"], passage.get("title", "")) if s.entry}
    heading = heading_entry_of(passage.get("title", ""))
    if heading and heading.kind != "setting":
        found.add(heading.name)
    return {name for name in found if "." in name}


def shared_name(passages: Sequence[dict[str, Any]]) -> tuple[str, list[str]] | None:
    """A name that entries of every passage end with, each passage's entry another one
    (``("route", ["flask.Flask.route", "flask.Blueprint.route"])``); None when there is none."""
    by_last: list[dict[str, str]] = []
    for passage in passages:
        named: dict[str, str] = {}
        for entry in sorted(documented_entries(passage)):
            last = entry.rsplit(".", 1)[-1]
            if len(last) >= 3 and last not in GENERIC_NAMES and last not in BUILTIN_CLASSES:
                named.setdefault(last, entry)
        by_last.append(named)
    if not by_last:
        return None
    common = set(by_last[0]).intersection(*by_last[1:])
    titles = " ".join(passage.get("title", "") for passage in passages)

    def in_titles(name: str) -> bool:
        return bool(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", titles))

    for last in sorted(common, key=lambda name: (not in_titles(name), name)):  # the name the headings carry first
        qualified = [named[last] for named in by_last]
        if not any(same_entry(a, b) for position, a in enumerate(qualified) for b in qualified[position + 1 :]) and (
            len({_description(passage, entry) for passage, entry in zip(passages, qualified)}) == len(qualified)
        ):
            return last, qualified
    return None


def _description(passage: dict[str, Any], entry: str) -> str:
    """The entry's first statement in the passage: two entries described alike ("Session.config" and
    "Collector.config": "The pytest config object.", one inherited attribute) are one meaning (pytest, round 14)."""
    return next(
        (
            s.text.strip().lower()
            for s in statements(passage["text"], passage.get("title", ""))
            if s.entry == entry and s.role == "first"
        ),
        entry,
    )


ENTRY_KINDS = frozenset({"purpose", "returns", "parameter", "error", "conditional-return", "default"})


def _subject_key(fact: Fact) -> str:
    """What a fact is about: the entry for what an entry does, returns, takes or raises; else its topic
    (a definition under an entry is about the thing it defines)."""
    about = short_name(fact.entry) if fact.entry and fact.kind in ENTRY_KINDS else fact.topic
    return about.lower().removeprefix("the ")


def shared_subject(passages: Sequence[dict[str, Any]]) -> str | None:
    """A subject every passage has a fact about (an entry, a noun phrase), or None."""
    keys = [subjects(passage) for passage in passages]
    if not keys:
        return None
    common = set(keys[0]).intersection(*keys[1:])
    return min(common, key=lambda key: (-len(key), key)) if common else None


def subjects(passage: dict[str, Any]) -> set[str]:
    """What the passage's facts are about (entries' short names, noun phrases), lower-cased."""
    return {_subject_key(fact) for fact in passage_facts(passage["text"], passage.get("title", ""))}


def subject_facts(passage: dict[str, Any], subject: str) -> list[Fact]:
    return [fact for fact in passage_facts(passage["text"], passage.get("title", "")) if _subject_key(fact) == subject]
