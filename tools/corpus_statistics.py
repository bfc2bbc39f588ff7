"""A collection's word and similarity statistics, computed once and kept in the workspace
(stores/corpus_stats.py).

Words are lower-cased ``\\w+`` tokens (benchsmith/words.py ``words``), the tokenization of
the baseline agents. The random-pair similarity is the mean and standard deviation of
the cosine similarity of ``pairs`` pairs of distinct chunks drawn with a seeded generator: what
two chunks picked at random share. A soft topic switch must clear it by a margin.
"""

from __future__ import annotations

import hashlib
import threading
from collections import defaultdict

import numpy as np

from benchsmith.stores.corpus_stats import CorpusStatistics, load_corpus_stats, save_corpus_stats
from benchsmith.stores.vectors import VectorStore
from benchsmith.stores.workspace import Workspace
from benchsmith.tools.corpus_clusters import stored_vectors
from benchsmith.words import words

RANDOM_PAIRS = 2000
PAIR_SEED = 0
# Words in more chunks than this keep only their frequency: they would not narrow a count of
# chunks sharing a set of words much, and their postings would dominate the file.
DEFAULT_POSTING_CAP = 1000
_computing = threading.Lock()


def random_pair_similarity(vectors: np.ndarray, pairs: int = RANDOM_PAIRS, seed: int = PAIR_SEED) -> dict[str, float]:
    """Mean and standard deviation of the cosine similarity of random pairs of distinct rows."""
    count = len(vectors)
    if count < 2:
        return {"mean": 0.0, "std": 0.0, "pairs": 0, "seed": seed}
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1, norms)
    rng = np.random.default_rng(seed)
    first = rng.integers(0, count, pairs)
    second = rng.integers(0, count - 1, pairs)
    second = second + (second >= first)  # never a chunk with itself
    similarities = np.einsum("ij,ij->i", unit[first], unit[second])
    return {"mean": round(float(similarities.mean()), 6), "std": round(float(similarities.std()), 6),
            "pairs": int(pairs), "seed": seed}


def compute_corpus_statistics(collection: str, ids: list[str], vectors: np.ndarray, texts: list[str],
                              posting_cap: int = DEFAULT_POSTING_CAP, pairs: int = RANDOM_PAIRS,
                              seed: int = PAIR_SEED) -> CorpusStatistics:
    chunks_of: dict[str, list[int]] = defaultdict(list)
    for number, text in enumerate(texts):
        for word in set(words(text)):
            chunks_of[word].append(number)
    vocabulary = sorted(chunks_of)
    frequencies = np.array([len(chunks_of[word]) for word in vocabulary], dtype=np.int32)
    posted = [chunks_of[word] if len(chunks_of[word]) <= posting_cap else [] for word in vocabulary]
    offsets = np.zeros(len(vocabulary) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(posting) for posting in posted])
    postings = np.array([number for posting in posted for number in posting], dtype=np.int32)
    return CorpusStatistics(collection=collection, chunks=len(texts), vocabulary=vocabulary,
                            document_frequencies=frequencies, posting_offsets=offsets, postings=postings,
                            posting_cap=posting_cap, similarity=random_pair_similarity(vectors, pairs, seed),
                            fingerprint=fingerprint(ids))


def fingerprint(ids: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(ids)).encode("utf-8")).hexdigest()[:16]


def corpus_statistics(workspace: Workspace, store: VectorStore) -> CorpusStatistics:
    """The collection's statistics: the stored ones while the collection keeps its size,
    otherwise computed from every chunk (text and embedding) and stored."""
    with _computing:  # concurrent conversations of one run compute them once
        existing = load_corpus_stats(workspace, store.name)
        if existing is not None and existing.chunks == store.count():
            return existing
        ids, vectors, texts = stored_vectors(store)
        statistics = compute_corpus_statistics(store.name, ids, vectors, texts)
        save_corpus_stats(workspace, statistics)
        return statistics
