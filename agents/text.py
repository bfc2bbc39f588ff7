"""Word statistics for the offline baseline agents (deterministic, no model).

How rare a word is across the collection, how many chunks share a set of words, come in through
:class:`WordStatistics`: the graph passes the collection's stored statistics, and
:class:`PassageStatistics` stands in for them over a few passages. A passage's structure
(units, sentences, plain text) is read by :mod:`benchsmith.passages`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Protocol

from benchsmith.words import content_words, stems, words

# ---------------------------------------------------------------------------------------
# Word statistics.


class WordStatistics(Protocol):
    """What the baseline agents need to know about the collection."""

    chunks: int

    def document_frequency(self, word: str) -> int:
        """Chunks containing the (lower-cased) word."""

    def chunks_with_all(self, words: Iterable[str]) -> int:
        """Chunks containing every one of the words (an upper bound where the statistics are capped)."""


class PassageStatistics:
    """Word statistics over a few passages: the stand-in when no collection statistics are given."""

    def __init__(self, texts: Iterable[str]):
        self._sets = [set(words(text)) for text in texts]
        self.chunks = len(self._sets)
        self._frequency = Counter(word for chunk in self._sets for word in chunk)

    def document_frequency(self, word: str) -> int:
        return self._frequency.get(word.lower(), 0)

    def chunks_with_all(self, wanted: Iterable[str]) -> int:
        wanted = {word.lower() for word in wanted}
        return sum(1 for chunk in self._sets if wanted <= chunk)


def inverse_document_frequency(statistics: WordStatistics, word: str) -> float:
    """Smoothed IDF, ``log((N + 1) / (df + 1)) + 1`` (the scikit-learn form): rare words weigh most."""
    return math.log((statistics.chunks + 1) / (statistics.document_frequency(word) + 1)) + 1.0


def lower_first(text: str) -> str:
    """``text`` with its first letter lower-cased for use mid-sentence, unless its first word is
    an acronym or a name written with inner capitals or digits ("PEP 517", "URLs", "macOS",
    "HTTPError"), which keeps its case: "where PEP 517 defines", never "where pEP 517 defines"."""
    first_word = text.split(maxsplit=1)[0] if text.strip() else ""
    if any(character.isupper() or character.isdigit() for character in first_word[1:]):
        return text
    return text[:1].lower() + text[1:]


def estimated_overlap(question: str, passage: str) -> float:
    """The share of the question's content-word stems that occur in the passage (0..1; 0 for a
    question without content words): ``|S(q) ∩ S(p)| / |S(q)|`` with S the Snowball stems of
    :func:`content_words`. The agents' estimate of the lexical overlap the evaluation measures
    (evals/measures/lexical_overlap.py, which agents may not import). It drops the agents' STOPWORDS, the
    measure only their subset MEASURE_STOPWORDS (benchsmith/words.py)."""
    asked = set(stems(content_words(question)))
    if not asked:
        return 0.0
    return len(asked & set(stems(content_words(passage)))) / len(asked)
