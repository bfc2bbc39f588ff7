"""The rules that check a turn's label: ``fake_ambiguity`` and ``unanswerable_answered``."""

from __future__ import annotations

import re

from benchsmith.entries import heading_entry_of, same_entry, statements
from benchsmith.evals.measures.answer_containment import contains_answer
from benchsmith.evals.quality_gate.evidence import TurnEvidence
from benchsmith.words import words


def fake_ambiguity(turn: TurnEvidence) -> str | None:
    """An underspecified question whose candidates do not document two different entries of the
    asked name, or whose previous turn already says which one is meant."""
    if turn.turn_type != "underspecified" or not turn.candidates:
        return None  # a benchmark that names no candidates cannot be checked
    asked = {word.rstrip("()") for word in re.findall(r"[\w.]+(?:\(\))?", turn.question) if len(word) > 2}
    meanings: list[set[str]] = []
    for title, text in turn.candidates:
        entries = {s.entry for s in statements(text, title) if s.entry}
        if heading := heading_entry_of(title):
            entries.add(heading.name)
        meanings.append({entry for entry in entries if entry.rsplit(".", 1)[-1] in asked})
    if len(meanings) < 2 or any(not named for named in meanings):
        return "a candidate documents no entry of the asked name: one concept, not two meanings"
    first, *others = meanings
    if any(same_entry(a, b) for other in others for a in first for b in other):
        return "the candidates document the same entry"
    if turn.previous:
        said = set(words(" ".join(turn.previous[-1])))
        qualifiers = [
            {part.lower() for entry in named for part in entry.split(".")[:-1] if len(part) > 2} for named in meanings
        ]
        shared = set.intersection(*qualifiers)
        if any((own - shared) & said for own in qualifiers):
            return "the previous turn already says which one is meant"
    return None


def unanswerable_answered(turn: TurnEvidence) -> str | None:
    """An unanswerable turn, or a partial turn's missing part, that a passage still in the corpus
    answers (evals/measures/answer_containment.py); a partial turn's gold counts as such a passage."""
    if turn.turn_type not in ("unanswerable", "partial") or not turn.held_out:
        return None
    remaining = list(turn.remaining_pool or [])
    question = turn.question
    if turn.turn_type == "partial":
        remaining += [text for _, text in turn.gold]  # the available passage must not answer the missing part
    if not remaining:
        return None
    found = contains_answer(question, [text for _, text in turn.held_out], remaining)
    return f"a remaining passage holds the answer: {found!r}" if found else None
