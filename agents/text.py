"""Small text helpers for the offline baseline agents (deterministic, no model)."""

from __future__ import annotations

import re

SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")
WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from has have how if in into is it its of on or that the their "
    "then there these this to was what when where which who why will with you your about also not but than "
    "they them he she his her we our us i me my so such may might should would could".split()
)


def sentences(text: str) -> list[str]:
    """Sentences (and lines) of a passage, stripped, without the empty ones."""
    return [piece.strip() for piece in SENTENCE_END.split(text) if len(piece.strip()) > 1]


def content_words(text: str) -> list[str]:
    """Lower-cased words of three or more characters that are not stopwords, in order."""
    return [word for word in WORD.findall(text.lower()) if len(word) >= 3 and word not in STOPWORDS]


def leading_phrase(sentence: str, words: int = 8) -> str:
    """The first few words of a sentence, without trailing punctuation."""
    return " ".join(sentence.split()[:words]).rstrip(".,;:!?")
