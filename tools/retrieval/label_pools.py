"""The pool a person labels per question (`benchsmith label`), TREC's way: the union of the top
``depth`` documents of several retrieval configurations, shown in an order no configuration set
(shuffled with a seed of the run and the question, so a restart shows the same order, and a
document's position says nothing about which system found it or how high), and the sample a
second assessor labels for Cohen's κ.

Also what the page shows of a passage: an excerpt around the question's first term (in the
studies issue 33 cites, paragraph excerpts were judged as well as whole documents, and faster),
the whole chunk a key away.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Iterable, Sequence

from benchsmith.words import WORD, content_words, stems, words

DEFAULT_POOL_DEPTH = 10  # each configuration's top k
DEFAULT_SECOND_SAMPLE = 0.15  # the share of the pool a second assessor labels
EXCERPT_CHARS = 600


def pooled(rankings: Iterable[Sequence[str]], depth: int) -> list[str]:
    """The union of each ranking's first ``depth`` documents, each once."""
    union: dict[str, None] = {}
    for ranking in rankings:
        union.update(dict.fromkeys(ranking[:depth]))
    return list(union)


def shown_order(doc_ids: Iterable[str], seed: int, question_id: str) -> list[str]:
    """``doc_ids`` shuffled by a generator seeded with the run's seed and the question: sorted first,
    so the order depends on neither the configurations' order nor their ranks."""
    order = sorted(set(doc_ids))
    random.Random(f"{seed}\x1f{question_id}").shuffle(order)
    return order


def second_sample(pairs: Sequence[tuple[str, str]], share: float, seed: int) -> list[tuple[str, str]]:
    """The (question, document) pairs a second assessor labels: ``ceil(share × pairs)`` of them
    chosen by a seeded hash of each pair (the same pairs whatever order the pools were built in),
    in the order of ``pairs``."""
    if share <= 0 or not pairs:
        return []
    count = min(len(pairs), math.ceil(share * len(pairs)))

    def rank(pair: tuple[str, str]) -> bytes:
        return hashlib.sha256(f"{seed}\x1f{pair[0]}\x1f{pair[1]}".encode()).digest()

    chosen = set(sorted(pairs, key=rank)[:count])
    return [pair for pair in pairs if pair in chosen]


def question_terms(question: str) -> list[str]:
    """The question's content words, which the page highlights (and matches by stem)."""
    return list(dict.fromkeys(content_words(question)))


def excerpt_bounds(text: str, terms: Sequence[str], width: int = EXCERPT_CHARS) -> tuple[int, int]:
    """``(start, end)`` of a window of about ``width`` characters around the first word of
    ``text`` whose stem is a term's stem (the text's start when none is), cut at word boundaries."""
    if len(text) <= width:
        return 0, len(text)
    wanted = set(stems(terms))
    lowered = text.lower()
    first = 0
    position = 0
    for word in words(text):
        at = lowered.find(word, position)
        position = at + len(word)
        if stems([word])[0] in wanted:
            first = at
            break
    start = max(0, first - width // 4)
    if start:
        start = text.find(" ", start) + 1 or start
    end = min(len(text), start + width)
    if end < len(text):
        end = text.rfind(" ", start, end) if text.rfind(" ", start, end) > start else end
    return start, end


def term_spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    """``(start, end)`` of each word of ``text`` whose stem is one of the terms' stems: what the page
    marks (as text ranges, so the text itself is never parsed as markup)."""
    wanted = set(stems(terms))
    if not wanted:
        return []
    return [(match.start(), match.end()) for match in WORD.finditer(text) if stems([match[0].lower()])[0] in wanted]
