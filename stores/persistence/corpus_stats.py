"""Persisted word and similarity statistics of a collection:
``<workspace>/corpus_stats/<collection>.npz``.

Computed once per collection (tools/corpus/corpus_statistics.py) and read by synthesis:

* document frequencies of every word (lower-cased ``\\w+`` tokens), for IDF;
* postings (the chunks holding a word) for the words in at most ``posting_cap`` chunks, so
  the chunks sharing a set of words can be counted; a word in more chunks than that counts
  as everywhere, which keeps the count an upper bound;
* the mean and standard deviation of the cosine similarity of random pairs of chunks (a seeded
  sample), the baseline a soft topic switch must clear.

One ``.npz`` file: the arrays, and a JSON header (``meta``) with the collection, the chunk
count, the vocabulary and the similarity baseline.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchsmith.stores.persistence.npz_files import load_arrays, save_arrays
from benchsmith.stores.persistence.workspace import Workspace

FORMAT_VERSION = 1


@dataclass
class CorpusStatistics:
    collection: str
    chunks: int
    vocabulary: list[str]  # sorted words
    document_frequencies: np.ndarray  # int32, one per word of the vocabulary
    posting_offsets: np.ndarray  # int64, len(vocabulary) + 1; empty postings for uncapped words
    postings: np.ndarray  # int32 chunk numbers, word after word
    posting_cap: int
    similarity: dict[str, Any] = field(default_factory=dict)  # {"mean", "std", "pairs", "seed"}
    fingerprint: str = ""  # identifies the chunk set the statistics were computed from
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._index = {word: number for number, word in enumerate(self.vocabulary)}

    def document_frequency(self, word: str) -> int:
        number = self._index.get(word.lower())
        return 0 if number is None else int(self.document_frequencies[number])

    def chunks_with_all(self, words: Iterable[str]) -> int:
        """How many chunks contain every word (an upper bound when a word is in more than
        ``posting_cap`` chunks: such a word does not narrow the count)."""
        found = [self._index.get(word.lower()) for word in set(words)]
        if not found:
            return self.chunks
        numbers = [number for number in found if number is not None]
        if len(numbers) < len(found):
            return 0  # a word in no chunk
        posted = [number for number in numbers if self.document_frequencies[number] <= self.posting_cap]
        if not posted:
            return int(min(self.document_frequencies[number] for number in numbers))
        posted.sort(key=lambda number: self.document_frequencies[number])
        common = self._posting(posted[0])
        for number in posted[1:]:
            if common.size == 0:
                break
            common = np.intersect1d(common, self._posting(number), assume_unique=True)
        return int(common.size)

    def _posting(self, number: int) -> np.ndarray:
        return self.postings[self.posting_offsets[number] : self.posting_offsets[number + 1]]

    def similarity_threshold(self, margin: float) -> float:
        """The random-pair mean plus ``margin`` standard deviations."""
        return float(self.similarity.get("mean", 0.0)) + margin * float(self.similarity.get("std", 0.0))


def corpus_stats_path(workspace: Workspace, collection: str) -> Path:
    return workspace.root / "corpus_stats" / f"{collection}.npz"


def save_corpus_stats(workspace: Workspace, statistics: CorpusStatistics) -> Path:
    """Written whole or not at all (a temporary file renamed over the target)."""
    meta = {
        "format": FORMAT_VERSION,
        "collection": statistics.collection,
        "chunks": statistics.chunks,
        "vocabulary": statistics.vocabulary,
        "posting_cap": statistics.posting_cap,
        "similarity": statistics.similarity,
        "fingerprint": statistics.fingerprint,
    }
    return save_arrays(
        corpus_stats_path(workspace, statistics.collection),
        meta,
        document_frequencies=statistics.document_frequencies.astype(np.int32),
        posting_offsets=statistics.posting_offsets.astype(np.int64),
        postings=statistics.postings.astype(np.int32),
    )


def load_corpus_stats(workspace: Workspace, collection: str) -> CorpusStatistics | None:
    stored = load_arrays(corpus_stats_path(workspace, collection), FORMAT_VERSION)
    if stored is None:
        return None
    meta, arrays = stored
    return CorpusStatistics(
        collection=meta["collection"],
        chunks=meta["chunks"],
        vocabulary=meta["vocabulary"],
        document_frequencies=arrays["document_frequencies"],
        posting_offsets=arrays["posting_offsets"],
        postings=arrays["postings"],
        posting_cap=meta["posting_cap"],
        similarity=meta["similarity"],
        fingerprint=meta.get("fingerprint", ""),
    )
