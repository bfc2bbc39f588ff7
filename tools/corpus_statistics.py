"""A collection's word and similarity statistics, computed once and kept in the workspace
(stores/persistence/corpus_stats.py).

Words are lower-cased ``\\w+`` tokens (benchsmith/words.py ``words``), the tokenization of
the baseline agents. The random-pair similarity is the mean and standard deviation of
the cosine similarity of ``pairs`` pairs of distinct chunks drawn with a seeded generator: what
two chunks picked at random share. A soft topic switch must clear it by a margin.
"""

from __future__ import annotations

import hashlib
import threading
from array import array
from collections.abc import Callable, Iterable

import numpy as np

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.corpus_stats import CorpusStatistics, load_corpus_stats, save_corpus_stats
from benchsmith.stores.persistence.vectors import VectorStore
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.words import words

RANDOM_PAIRS = 2000
PAIR_SEED = 0
# Words in more chunks than this keep only their frequency: they would not narrow a count of
# chunks sharing a set of words much, and their postings would dominate the file.
DEFAULT_POSTING_CAP = 1000
_computing = threading.Lock()


def random_pair_similarity(vectors: np.ndarray, pairs: int = RANDOM_PAIRS, seed: int = PAIR_SEED) -> dict[str, float]:
    """Mean and standard deviation of the cosine similarity of random pairs of distinct rows."""
    return sampled_pair_similarity(len(vectors), lambda rows: vectors[rows], pairs, seed)


def sampled_pair_similarity(
    count: int, rows_of: Callable[[np.ndarray], np.ndarray], pairs: int = RANDOM_PAIRS, seed: int = PAIR_SEED
) -> dict[str, float]:
    """:func:`random_pair_similarity` of ``count`` rows, reading only the sampled ones
    (``rows_of(row numbers)`` → their vectors): a million vectors need not be held."""
    if count < 2:
        return {"mean": 0.0, "std": 0.0, "pairs": 0, "seed": seed}
    rng = np.random.default_rng(seed)
    first = rng.integers(0, count, pairs)
    second = rng.integers(0, count - 1, pairs)
    second = second + (second >= first)  # never a chunk with itself
    sampled, positions = np.unique(np.concatenate([first, second]), return_inverse=True)
    vectors = np.asarray(rows_of(sampled))
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1, norms)
    similarities = np.einsum("ij,ij->i", unit[positions[:pairs]], unit[positions[pairs:]])
    return {
        "mean": round(float(similarities.mean()), 6),
        "std": round(float(similarities.std()), 6),
        "pairs": int(pairs),
        "seed": seed,
    }


def compute_corpus_statistics(
    collection: str,
    ids: list[str],
    vectors: np.ndarray,
    texts: list[str],
    posting_cap: int = DEFAULT_POSTING_CAP,
    pairs: int = RANDOM_PAIRS,
    seed: int = PAIR_SEED,
) -> CorpusStatistics:
    """The statistics of chunks numbered in the order given."""
    postings = WordPostings()
    for text in texts:
        postings.add(text)
    return postings.statistics(
        collection, ids, np.arange(len(ids)), lambda rows: vectors[rows], posting_cap, pairs, seed
    )


class WordPostings:
    """The distinct words of each chunk of a stream, as (word, position) pairs in two int32
    arrays (8 bytes a pair: a million chunks' postings without a Python list per word)."""

    def __init__(self) -> None:
        self.word_numbers: dict[str, int] = {}
        self.words = array("i")
        self.positions = array("i")
        self.count = 0

    def add(self, text: str) -> None:
        numbers = [self.word_numbers.setdefault(word, len(self.word_numbers)) for word in set(words(text))]
        self.words.extend(numbers)
        self.positions.extend([self.count] * len(numbers))
        self.count += 1

    def statistics(
        self,
        collection: str,
        ids: list[str],
        numbers: np.ndarray,
        rows_of: Callable[[np.ndarray], np.ndarray],
        posting_cap: int = DEFAULT_POSTING_CAP,
        pairs: int = RANDOM_PAIRS,
        seed: int = PAIR_SEED,
    ) -> CorpusStatistics:
        """The statistics, the chunk at stream position p being chunk ``numbers[p]``; ``rows_of``
        reads the vectors of chunk numbers (only the sampled pairs' are read)."""
        statistics = self.word_statistics(collection, numbers, posting_cap)
        statistics.similarity = sampled_pair_similarity(self.count, rows_of, pairs, seed)
        statistics.fingerprint = fingerprint(ids)
        return statistics

    def word_statistics(self, collection: str, numbers: np.ndarray, posting_cap: int) -> CorpusStatistics:
        """Frequencies and postings alone (no similarity baseline), chunks numbered as in :meth:`statistics`."""
        vocabulary = sorted(self.word_numbers)
        rank = np.empty(len(vocabulary), dtype=np.int64)
        rank[[self.word_numbers[word] for word in vocabulary]] = np.arange(len(vocabulary))
        word = rank[np.frombuffer(self.words, dtype=np.int32)]
        chunk = np.asarray(numbers, dtype=np.int64)[np.frombuffer(self.positions, dtype=np.int32)]
        frequencies = np.bincount(word, minlength=len(vocabulary)).astype(np.int32)
        posted = frequencies[word] <= posting_cap
        # Postings word after word, each word's chunks in ascending order.
        keys = np.sort(word[posted] * max(1, self.count) + chunk[posted])
        offsets = np.zeros(len(vocabulary) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(np.bincount(word[posted], minlength=len(vocabulary)))
        return CorpusStatistics(
            collection=collection,
            chunks=self.count,
            vocabulary=vocabulary,
            document_frequencies=frequencies,
            posting_offsets=offsets,
            postings=(keys % max(1, self.count)).astype(np.int32),
            posting_cap=posting_cap,
        )


def exact_word_statistics(texts: Iterable[str]) -> CorpusStatistics:
    """Word statistics of a stream of texts with every word posted, so counts are exact: what
    agents.text.PassageStatistics gives (a set of words per text, a scan per count), in int32
    arrays a million texts can afford."""
    postings = WordPostings()
    for text in texts:
        postings.add(text)
    return postings.word_statistics("", np.arange(postings.count), posting_cap=max(1, postings.count))


def fingerprint(ids: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(ids)).encode("utf-8")).hexdigest()[:16]


def corpus_statistics(workspace: Workspace, store: VectorStore) -> CorpusStatistics:
    """The collection's statistics: the stored ones while the collection keeps its size,
    otherwise computed from every chunk's text in one pass (chunks numbered in id order; the
    vectors of the sampled pairs alone read back) and stored."""
    with _computing:  # concurrent conversations of one run compute them once
        existing = load_corpus_stats(workspace, store.name)
        if existing is not None and existing.chunks == store.count():
            return existing
        ids: list[str] = []
        postings = WordPostings()
        for page in store.iter_all(include=("documents",)):
            ids.extend(page["ids"])
            for text in page["documents"]:
                postings.add(text)
        if not ids:
            raise InputError(f"collection {store.name!r} is empty: ingest a corpus into it first")
        in_id_order = sorted(range(len(ids)), key=ids.__getitem__)
        numbers = np.empty(len(ids), dtype=np.int64)
        numbers[in_id_order] = np.arange(len(ids))

        def rows_of(rows: np.ndarray) -> np.ndarray:
            wanted = [ids[in_id_order[row]] for row in rows.tolist()]
            found = store.embeddings(wanted)
            return np.stack([found[chunk_id] for chunk_id in wanted])

        statistics = postings.statistics(store.name, ids, numbers, rows_of)
        save_corpus_stats(workspace, statistics)
        return statistics
