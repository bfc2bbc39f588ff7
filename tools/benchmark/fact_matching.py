"""Matching minimal facts across chunks and chunkings (SEARA's minimal retrieval facts).

A judge quotes, from each relevant chunk, the minimal spans that answer the query. The same
fact reaches the pool through several chunks (overlapping chunks, two chunkings of one
document, a duplicated paragraph), quoted with slightly different boundaries; counted once
per chunk it would inflate the recall of whichever configuration retrieves more copies. So
the facts of a query are clustered, and a cluster is one fact:

1. Normalization: Unicode NFKC, case folding, every run of non-alphanumeric characters one
   space. Equal normalized texts are the same fact.
2. Text overlap of the normalized word sets A and B: the same fact when the Jaccard
   similarity |A ∩ B| / |A ∪ B| is at least ``same_jaccard`` (0.8), or when the shorter text,
   of at least ``min_contained_words`` words (3), occurs inside the longer one (a span quoted
   with more or less context).
3. Near-matches, Jaccard at least ``near_jaccard`` (0.4) or overlap coefficient
   |A ∩ B| / min(|A|, |B|) at least ``near_overlap`` (0.6), go to ``same_fact`` (the judge)
   when one is given; anything less is a different fact.

Clusters are the connected components of the "same fact" relation (union–find), so the
result does not depend on the order facts arrive in.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

NON_ALPHANUMERIC = re.compile(r"[^\w]+|_+")
SAME_JACCARD, NEAR_JACCARD, NEAR_OVERLAP, MIN_CONTAINED_WORDS = 0.8, 0.4, 0.6, 3


def normalize_fact(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return NON_ALPHANUMERIC.sub(" ", folded).strip()


@dataclass(frozen=True)
class MatchThresholds:
    same_jaccard: float = SAME_JACCARD
    near_jaccard: float = NEAR_JACCARD
    near_overlap: float = NEAR_OVERLAP
    min_contained_words: int = MIN_CONTAINED_WORDS


def compare_facts(first: str, second: str, thresholds: MatchThresholds = MatchThresholds()) -> str:
    """``same``, ``near`` (ask the judge) or ``different``, for two normalized facts."""
    if first == second:
        return "same"
    words_a, words_b = set(first.split()), set(second.split())
    if not words_a or not words_b:
        return "different"
    shared = len(words_a & words_b)
    jaccard = shared / len(words_a | words_b)
    shorter, longer = sorted((first, second), key=len)
    if jaccard >= thresholds.same_jaccard or (
        len(shorter.split()) >= thresholds.min_contained_words and f" {shorter} " in f" {longer} "
    ):
        return "same"
    if jaccard >= thresholds.near_jaccard or shared / min(len(words_a), len(words_b)) >= thresholds.near_overlap:
        return "near"
    return "different"


def cluster_facts(
    facts: Sequence[str],
    same_fact: Callable[[str, str], bool] | None = None,
    thresholds: MatchThresholds = MatchThresholds(),
) -> list[int]:
    """The cluster number of each fact; clusters are numbered in the order of their smallest
    normalized text. ``same_fact(a, b)`` decides near-matches (given the original texts)."""
    normalized = [normalize_fact(fact) for fact in facts]
    distinct = sorted(set(normalized))
    original: dict[str, str] = {}
    for fact, norm in zip(facts, normalized):
        original.setdefault(norm, fact)
    parent = list(range(len(distinct)))

    def root(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    for i, first in enumerate(distinct):
        for j in range(i + 1, len(distinct)):
            if root(i) == root(j):
                continue
            decision = compare_facts(first, distinct[j], thresholds)
            if decision == "same" or (
                decision == "near" and same_fact is not None and same_fact(original[first], original[distinct[j]])
            ):
                parent[max(root(i), root(j))] = min(root(i), root(j))
    roots = sorted({root(index) for index in range(len(distinct))})
    number = {index: roots.index(root(index)) for index in range(len(distinct))}
    position = {norm: number[index] for index, norm in enumerate(distinct)}
    return [position[norm] for norm in normalized]
