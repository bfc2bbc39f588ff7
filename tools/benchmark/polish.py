"""Checks on a polished question: a rewrite is kept only if it says the same thing, no longer.

Rejected (and the original kept) when the rewrite

* carries meta text ("here is", "rewritten", "question:"): the model talked about its task;
* is longer than ``max_growth`` × the original (1.3): polishing compresses, it never pads;
* brings content words found neither in the original question nor in the conversation so
  far: pronouns and ellipsis only remove or refer back, so a new word means new meaning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from benchsmith.words import words

MAX_GROWTH = 1.3
META_TEXT = re.compile(r"\b(here is|here's|rewritten|rephrased|polished|paraphrased?|question\s*:)", re.IGNORECASE)
# Words a conversational rewrite may add without adding meaning.
REFERRING_WORDS = frozenset(
    "it its it's this that these those they them their there he him his she her one ones same other another "
    "what about and how which who whom whose when where why also too then so again more else".split()
)


@dataclass(frozen=True)
class PolishReview:
    accepted: bool
    reason: str | None = None


def _words(text: str) -> set[str]:
    return {word for word in words(text) if len(word) >= 3}


def review_polish(original: str, polished: str, history: Iterable[str], max_growth: float = MAX_GROWTH) -> PolishReview:
    polished = polished.strip()
    if not polished:
        return PolishReview(False, "empty rewrite")
    if META_TEXT.search(polished):
        return PolishReview(False, "meta text")
    if len(polished) > max_growth * len(original):
        return PolishReview(False, f"grew to {len(polished) / len(original):.2f}× the original")
    known = _words(original) | REFERRING_WORDS
    for text in history:
        known |= _words(text)
    new_words = sorted(_words(polished) - known)
    if new_words:
        return PolishReview(False, "new content words: " + ", ".join(new_words[:5]))
    return PolishReview(True)
