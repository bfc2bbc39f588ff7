"""Leaving held-out chunks out of an exported corpus, with their near-duplicates.

An unanswerable turn asks about chunks held out of the benchmark's corpus: the question is
unanswerable only if no exported document carries their text. A copy of a held-out chunk
(the same passage under another heading, in another file) would answer it, so every document
whose MinHash Jaccard with a held-out chunk is at least the dedup threshold (0.8) is left out
too: the shingling, the LSH candidate margin and the exact check of tools/dedup.py, so
"near-duplicate" means the same here as at ingestion.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import islice
from typing import Any

import numpy as np
from datasketch import MinHash, MinHashLSH

from benchsmith.tools.dedup import (BATCH, CANDIDATE_MARGIN, DEFAULT_NUM_PERM, DEFAULT_THRESHOLD, DuplicateMatch,
                                    _fingerprint, char_shingles, jaccard)


class HeldOutFilter:
    """Tells, document by document, whether it is a held-out chunk or a near-duplicate of one."""

    def __init__(self, held_out: Mapping[str, str], threshold: float = DEFAULT_THRESHOLD,
                 num_perm: int = DEFAULT_NUM_PERM, seed: int = 1):
        if not 0 < threshold <= 1:
            raise ValueError(f"near-duplicate threshold must be in (0, 1], got {threshold}")
        self.threshold, self.num_perm, self.seed = threshold, num_perm, seed
        self.ids = set(held_out)
        self.index = MinHashLSH(threshold=max(0.05, threshold - CANDIDATE_MARGIN), num_perm=num_perm)
        self.fingerprints: dict[str, np.ndarray] = {}
        shingle_sets = [char_shingles(text) for text in held_out.values()]
        for chunk_id, shingles, signature in zip(held_out, shingle_sets,
                                                 MinHash.bulk(shingle_sets, num_perm=num_perm, seed=seed)):
            self.index.insert(chunk_id, signature)
            self.fingerprints[chunk_id] = _fingerprint(shingles)

    def matches(self, ids: list[str], texts: list[str]) -> list[DuplicateMatch | None]:
        """For each document, the held-out chunk it is or copies (None: it may be exported)."""
        shingle_sets = [char_shingles(text) for text in texts]
        signatures = MinHash.bulk(shingle_sets, num_perm=self.num_perm, seed=self.seed)
        found: list[DuplicateMatch | None] = []
        for doc_id, shingles, signature in zip(ids, shingle_sets, signatures):
            if doc_id in self.ids:
                found.append(DuplicateMatch(doc_id, doc_id, 1.0))
                continue
            fingerprint = _fingerprint(shingles)
            best_id, best = None, 0.0
            for candidate in self.index.query(signature):
                similarity = jaccard(fingerprint, self.fingerprints[candidate])
                if similarity > best:
                    best_id, best = candidate, similarity
            found.append(DuplicateMatch(doc_id, best_id, round(best, 4))
                         if best_id is not None and best >= self.threshold else None)
        return found


def without_held_out(documents: Iterable[dict[str, Any]], held_out: Mapping[str, str],
                     removed: list[DuplicateMatch] | None = None, threshold: float = DEFAULT_THRESHOLD,
                     num_perm: int = DEFAULT_NUM_PERM) -> Iterator[dict[str, Any]]:
    """The BEIR documents (``_id``, ``text``...) that are neither a held-out chunk (``held_out``:
    ``{chunk id: text}``) nor a near-duplicate of one, in their order; each one left out is
    appended to ``removed`` (``removed_id``, the held-out ``kept_id`` it matched, ``jaccard``).
    With nothing held out, the documents pass through untouched."""
    iterator = iter(documents)
    if not held_out:
        yield from iterator
        return
    matcher = HeldOutFilter(held_out, threshold, num_perm)
    while batch := list(islice(iterator, BATCH)):
        for document, match in zip(batch, matcher.matches([str(d["_id"]) for d in batch], [d["text"] for d in batch])):
            if match is None:
                yield document
            elif removed is not None:
                removed.append(match)
