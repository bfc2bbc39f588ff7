"""Hard-negative documents by sentence replacement (MultiConIR, Lu et al., 2025).

A source document with N condition sentences s_1..s_N (spans of its text) and their rewrites
n_1..n_N gives:

* the positive P: the document itself, meeting all N conditions;
* the graded ladder HN_j, j = 1..N: s_1..s_j replaced by n_1..n_j, so with the query of all N
  conditions it meets N − j of them;
* the single-miss set M_k, k = 1..N: only s_k replaced, so with the query of the first k
  conditions it meets k − 1 of them (it misses the query's newest condition). M_1 = HN_1.

Everything outside the replaced spans stays byte for byte as in the positive.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

Kind = str  # "positive", "ladder" or "single_miss"


@dataclass(frozen=True)
class Span:
    start: int
    end: int


@dataclass(frozen=True)
class Located:
    """The conditions found in the document, in the extractor's order, and why others were not."""

    spans: list[Span]
    sentences: list[str]  # the verbatim text of each span
    rejected: list[tuple[str, str]]  # (sentence as given, reason)


def find_verbatim(document: str, sentence: str) -> list[Span]:
    """Every occurrence of ``sentence`` in ``document``, word for word; a run of whitespace
    matches any run (a wrapped line break is not a difference of wording)."""
    words = sentence.split()
    if not words:
        return []
    pattern = re.compile(r"\s+".join(re.escape(word) for word in words))
    return [Span(match.start(), match.end()) for match in pattern.finditer(document)]


def locate_conditions(document: str, sentences: Sequence[str], wanted: int) -> Located:
    """The first ``wanted`` of ``sentences`` that occur verbatim in ``document`` exactly once and
    overlap no condition kept before them; the others with the reason they were left out."""
    spans: list[Span] = []
    kept: list[str] = []
    rejected: list[tuple[str, str]] = []
    for sentence in sentences:
        if len(spans) == wanted:
            break
        found = find_verbatim(document, sentence)
        if not found:
            rejected.append((sentence, "not a verbatim substring of the document"))
        elif len(found) > 1:
            rejected.append((sentence, f"occurs {len(found)} times in the document"))
        elif any(found[0].start < span.end and span.start < found[0].end for span in spans):
            rejected.append((sentence, "overlaps an earlier condition"))
        else:
            spans.append(found[0])
            kept.append(document[found[0].start : found[0].end])
    return Located(spans, kept, rejected)


def replace_spans(document: str, spans: Sequence[Span], replacements: dict[int, str]) -> str:
    """``document`` with span i replaced by ``replacements[i]`` for each i given (spans do not overlap)."""
    pieces, position = [], 0
    for index in sorted(replacements, key=lambda i: spans[i].start):
        span = spans[index]
        pieces += [document[position : span.start], replacements[index]]
        position = span.end
    pieces.append(document[position:])
    return "".join(pieces)


@dataclass(frozen=True)
class Construction:
    """One document of a row: how it was made and what the judge should find."""

    kind: Kind
    number: int  # j of HN_j, k of M_k; N for the positive
    replaced: tuple[int, ...]  # 1-based conditions whose sentence was rewritten
    conditions: int  # the query it is judged against asks for conditions 1..conditions

    @property
    def key(self) -> str:
        return {"positive": "Positive", "ladder": f"HN{self.number}", "single_miss": f"Miss{self.number}"}[self.kind]

    @property
    def expected(self) -> tuple[int, ...]:
        """The conditions (1-based) of its query that it should satisfy."""
        return tuple(c for c in range(1, self.conditions + 1) if c not in self.replaced)


def constructions(count: int) -> list[Construction]:
    """The positive, the ladder HN_1..HN_N and the single-miss set M_1..M_N of N = ``count`` conditions."""
    return (
        [Construction("positive", count, (), count)]
        + [Construction("ladder", j, tuple(range(1, j + 1)), count) for j in range(1, count + 1)]
        + [Construction("single_miss", k, (k,), k) for k in range(1, count + 1)]
    )


def build_text(document: str, spans: Sequence[Span], negatives: Sequence[str], construction: Construction) -> str:
    """The text of ``construction``: the positive with the sentences of its replaced conditions
    swapped for their negatives."""
    return replace_spans(document, spans, {c - 1: negatives[c - 1] for c in construction.replaced})


def blamed_conditions(construction: Construction, satisfied: Sequence[int]) -> set[int]:
    """The rewritten conditions to redo when a document's count disagrees with its construction:
    the replaced conditions the judge still finds satisfied; if none is (the judge missed an
    untouched condition instead), the newest replaced one."""
    still_met = set(construction.replaced) & set(satisfied)
    if still_met:
        return still_met
    return {max(construction.replaced)} if construction.replaced else set()


def leading_part(text: str, max_chars: int) -> str:
    """``text`` cut to at most ``max_chars`` characters at the last paragraph break before the limit,
    else the last sentence end, else the last space (a document too long for one prompt)."""
    if len(text) <= max_chars:
        return text
    head = text[:max_chars]
    for separator in ("\n\n", ". ", "\n", " "):
        cut = head.rfind(separator)
        if cut > max_chars // 2:
            return head[: cut + (1 if separator == ". " else 0)].rstrip()
    return head.rstrip()


def changed_text(original: str, rewritten: str) -> tuple[str, str]:
    """Where two documents differ, widened to whole words: (the original's part, the rewrite's
    part). For a document made by one sentence replacement, that sentence and its rewrite (up to
    the words they share at their ends)."""
    prefix = 0
    limit = min(len(original), len(rewritten))
    while prefix < limit and original[prefix] == rewritten[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and original[-1 - suffix] == rewritten[-1 - suffix]:
        suffix += 1
    start = max(original.rfind(" ", 0, prefix), original.rfind("\n", 0, prefix)) + 1
    end_original, end_rewritten = len(original) - suffix, len(rewritten) - suffix
    stops = [index for index in (original.find(" ", end_original), original.find("\n", end_original)) if index >= 0]
    extra = (min(stops) if stops else len(original)) - end_original
    return original[start : end_original + extra].strip(), rewritten[start : end_rewritten + extra].strip()


RELATED_DOCUMENTS = 3
RELATED_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")


class RelatedDocuments:
    """For each document, the few others most like it: the pool a baseline negative draws its
    replacement names from (a name from a page on the same subject, not from anywhere in the
    corpus). Likeness is the IDF-weighted count of shared distinct words,
    ``Σ_{w ∈ A ∩ B} log(N / df(w))`` (words of three or more characters, lower-cased)."""

    def __init__(self, texts: dict[str, str]):
        self._words = {document_id: set(RELATED_WORD.findall(text.lower())) for document_id, text in texts.items()}
        frequency: dict[str, int] = {}
        for words in self._words.values():
            for word in words:
                frequency[word] = frequency.get(word, 0) + 1
        count = len(self._words)
        self._weight = {word: math.log(count / df) for word, df in frequency.items()}

    def of(self, document_id: str, limit: int = RELATED_DOCUMENTS) -> list[str]:
        """Ids of the ``limit`` documents sharing the most weight with ``document_id`` (ties by id)."""
        words = self._words.get(document_id, set())
        scored = [
            (sum(self._weight[word] for word in words & others), other)
            for other, others in self._words.items()
            if other != document_id
        ]
        return [other for score, other in sorted(scored, key=lambda item: (-item[0], item[1])) if score > 0][:limit]
