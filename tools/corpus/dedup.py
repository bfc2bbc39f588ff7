"""Near-duplicate removal with MinHash-LSH over character 5-gram shingles.

Defaults and why:

* ``threshold=0.8`` (Jaccard similarity of the shingle sets): copies that differ by a
  header, whitespace or a few edited words score above 0.9, while different passages on
  the same topic share well under half of their 5-grams.
* ``num_perm=128``: the MinHash estimate of Jaccard then has a standard error of about
  ``1/sqrt(128) ≈ 0.09``, enough to find candidates.
* The LSH index is built at a lower threshold (``threshold - 0.2``) and every candidate
  is confirmed with the exact Jaccard of the shingle sets: at the target threshold alone
  the LSH misses about a tenth of true near-duplicates (measured), the lower one finds
  them, and the exact check keeps false positives out.

The first occurrence of a group is kept, so the result does not depend on hash order.

At a million chunks no text is held (:func:`deduplicate`): one pass over the stream keeps each
row's id and its 18 LSH band keys (144 bytes); rows whose band keys meet an earlier row's are
then decided in order, as an incremental LSH index would decide them, reading back only their
texts and their candidates' for the exact check. Datasketch's ``MinHashLSH`` held every band's
bytes in Python objects, about 6 KB a chunk.
"""

from __future__ import annotations

import itertools
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from datasketch import MinHash, MinHashLSH

from benchsmith.stores.persistence.bounded_cache import BoundedCache
from benchsmith.stores.progress import ProgressCallback
from benchsmith.tools.corpus.documents import page_of
from benchsmith.tools.defaults import DEFAULT_DEDUP_NUM_PERM, DEFAULT_DEDUP_THRESHOLD

SHINGLE_SIZE = 5
CANDIDATE_MARGIN = 0.2
BATCH = 512
MINHASH_SEED = 1  # the MinHash permutations' seed: the same signatures wherever a batch is keyed
# Fingerprints of rows read again for the exact check, kept for the next comparisons (~3 KB each).
FINGERPRINT_CACHE = 32_768
FNV_OFFSET, FNV_PRIME = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)


@dataclass
class DuplicateMatch:
    removed_id: str
    kept_id: str
    jaccard: float

    def to_json(self) -> dict:
        return asdict(self)


def char_shingles(text: str, size: int = SHINGLE_SIZE) -> set[bytes]:
    """Character ``size``-grams of the lower-cased text with whitespace runs collapsed."""
    normalized = re.sub(r"\s+", " ", text.lower()).strip()
    if len(normalized) <= size:
        return {normalized.encode("utf-8")}
    return {normalized[i : i + size].encode("utf-8") for i in range(len(normalized) - size + 1)}


def _fingerprint(shingles: set[bytes]) -> np.ndarray:
    """Sorted 32-bit hashes of the shingles: the exact-Jaccard check without keeping strings."""
    return np.unique(np.fromiter((zlib.crc32(s) for s in shingles), dtype=np.uint32, count=len(shingles)))


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    intersection = np.intersect1d(a, b, assume_unique=True).size
    return intersection / (a.size + b.size - intersection)


@dataclass(frozen=True)
class PageLoss:
    """Chunks of ``page`` removed as near-duplicates of chunks of ``kept_page`` (the same page when
    a page repeats itself)."""

    page: str
    kept_page: str
    chunks: int


def pages_that_lost_chunks(matches: Iterable[Mapping[str, Any]]) -> list[PageLoss]:
    """Per (page, page it lost chunks to), how many chunks near-duplicate removal took from it, most
    first: what a reader checks when a page's own introduction went as a copy of another page's."""
    losses = Counter((page_of(match["removed_id"]), page_of(match["kept_id"])) for match in matches)
    return [
        PageLoss(page, kept_page, count)
        for (page, kept_page), count in sorted(losses.items(), key=lambda item: (-item[1], item[0]))
    ]


@dataclass
class Deduplication:
    matches: list[DuplicateMatch]  # in row order
    dropped: set[int]  # rows left out of the unique set: near-duplicates, and ids seen in an earlier row


def find_near_duplicates(
    ids: Sequence[str],
    texts: Sequence[str],
    threshold: float = DEFAULT_DEDUP_THRESHOLD,
    num_perm: int = DEFAULT_DEDUP_NUM_PERM,
    seed: int = MINHASH_SEED,
    on_progress: ProgressCallback | None = None,
) -> list[DuplicateMatch]:
    """Every text whose Jaccard similarity to an earlier kept text is at least ``threshold``.

    Identical texts (Jaccard 1.0) count as duplicates too, whatever their ids.
    """
    return deduplicate(
        zip(ids, texts),
        texts.__getitem__,
        threshold=threshold,
        num_perm=num_perm,
        seed=seed,
        total=len(texts),
        on_progress=on_progress,
    ).matches


def deduplicate(
    records: Iterable[tuple[str, str]],
    text_of: Callable[[int], str],
    *,
    threshold: float = DEFAULT_DEDUP_THRESHOLD,
    num_perm: int = DEFAULT_DEDUP_NUM_PERM,
    seed: int = MINHASH_SEED,
    total: int | None = None,
    on_progress: ProgressCallback | None = None,
) -> Deduplication:
    """:func:`find_near_duplicates` over a stream of ``(id, text)``, holding no text.

    A first pass keeps each row's id and LSH band keys; rows whose band keys meet an earlier
    row's are then decided in order, their texts (and their candidates') read again with
    ``text_of(row)`` for the exact Jaccard check. Of candidates equally similar, the earliest
    row is the one kept.
    """
    bands = candidate_bands(threshold, num_perm)
    keyed = _keyed_batches(records, bands, num_perm, seed)
    return decide_near_duplicates(
        keyed, text_of, threshold=threshold, band_count=len(bands), total=total, on_progress=on_progress
    )


def candidate_bands(threshold: float, num_perm: int) -> list[tuple[int, int]]:
    """datasketch's banding (b bands of r rows) for the candidate threshold; its index is not used."""
    if not 0 < threshold <= 1:
        raise ValueError(f"dedup threshold must be in (0, 1], got {threshold}")
    return list(MinHashLSH(threshold=max(0.05, threshold - CANDIDATE_MARGIN), num_perm=num_perm).hashranges)


def band_keys(texts: Sequence[str], bands: Sequence[tuple[int, int]], num_perm: int, seed: int) -> np.ndarray:
    """(len(texts), bands) LSH band keys of the texts' MinHash signatures: a batch of rows is
    keyed on its own, so batches can be keyed anywhere (a Ray node, graphs/ingest_batches.py)."""
    if not texts:
        return np.zeros((0, len(bands)), dtype=np.uint64)
    signatures = MinHash.bulk([char_shingles(text) for text in texts], num_perm=num_perm, seed=seed)
    return _band_keys(np.stack([signature.hashvalues for signature in signatures]), bands)


def _keyed_batches(
    records: Iterable[tuple[str, str]], bands: Sequence[tuple[int, int]], num_perm: int, seed: int
) -> Iterator[tuple[list[str], np.ndarray]]:
    iterator = iter(records)
    while batch := list(itertools.islice(iterator, BATCH)):
        yield [chunk_id for chunk_id, _ in batch], band_keys([text for _, text in batch], bands, num_perm, seed)


def decide_near_duplicates(
    keyed: Iterable[tuple[Sequence[str], np.ndarray]],
    text_of: Callable[[int], str],
    *,
    threshold: float,
    band_count: int,
    total: int | None = None,
    on_progress: ProgressCallback | None = None,
) -> Deduplication:
    """:func:`deduplicate` from the rows' band keys, given in row order as batches of (ids, keys):
    where the keys were computed does not change a decision."""
    ids, keys, earlier_rows = _signature_pass(keyed, band_count, total, on_progress)
    groups = _band_groups(keys)
    del keys
    undecided = np.union1d(np.flatnonzero((groups >= 0).any(axis=1)), np.fromiter(earlier_rows, np.int64))
    kept = np.ones(len(ids), dtype=np.bool_)  # rows in the index (a row with no shared band is kept)
    members: dict[int, list[int]] = {}  # group → kept rows in it, in row order
    fingerprints: BoundedCache[int, np.ndarray] = BoundedCache(FINGERPRINT_CACHE)

    def fingerprint(row: int) -> np.ndarray:
        if (found := fingerprints.get(row)) is None:
            found = _fingerprint(char_shingles(text_of(row)))
            fingerprints[row] = found
        return found

    matches: list[DuplicateMatch] = []
    dropped: set[int] = set()
    for row in undecided.tolist():
        chunk_id = ids[row]
        if row in earlier_rows:
            dropped.add(row)
            if any(kept[other] for other in earlier_rows[row]):  # the same id already in the index
                kept[row] = False
                matches.append(DuplicateMatch(chunk_id, chunk_id, 1.0))
                continue
        row_groups = [group for group in groups[row].tolist() if group >= 0]
        candidates = sorted({other for group in row_groups for other in members.get(group, ())})
        best_row, best = None, 0.0
        if candidates:
            own = fingerprint(row)
            for other in candidates:
                similarity = jaccard(own, fingerprint(other))
                if similarity > best:
                    best_row, best = other, similarity
        if best_row is not None and best >= threshold:
            kept[row] = False
            dropped.add(row)
            matches.append(DuplicateMatch(chunk_id, ids[best_row], round(best, 4)))
        else:
            for group in row_groups:
                members.setdefault(group, []).append(row)
    return Deduplication(matches, dropped)


def _signature_pass(
    keyed: Iterable[tuple[Sequence[str], np.ndarray]],
    band_count: int,
    total: int | None,
    on_progress: ProgressCallback | None,
) -> tuple[list[str], np.ndarray, dict[int, list[int]]]:
    """Ids, (n, bands) band keys, and for each row whose id an earlier row has, those rows."""
    ids: list[str] = []
    blocks: list[np.ndarray] = []
    first_row: dict[str, int] = {}
    earlier_rows: dict[int, list[int]] = {}
    occurrences: dict[str, list[int]] = {}  # ids seen more than once
    for batch_ids, block in keyed:
        blocks.append(block)
        for chunk_id in batch_ids:
            row = len(ids)
            ids.append(chunk_id)
            if (first := first_row.setdefault(chunk_id, row)) != row:
                seen = occurrences.setdefault(chunk_id, [first])
                earlier_rows[row] = list(seen)
                seen.append(row)
        if on_progress:
            on_progress(len(ids), total)
    keys = np.concatenate(blocks) if blocks else np.zeros((0, band_count), dtype=np.uint64)
    return ids, keys, earlier_rows


def _band_keys(signatures: np.ndarray, bands: Sequence[tuple[int, int]]) -> np.ndarray:
    """(n, bands) 64-bit FNV-1a hashes of each band's MinHash values: rows share a key when they
    share the band (two different bands share one with probability 2^-64, and a candidate so
    found still has to pass the exact Jaccard check)."""
    keys = np.empty((len(signatures), len(bands)), dtype=np.uint64)
    for band, (start, end) in enumerate(bands):
        key = np.full(len(signatures), FNV_OFFSET, dtype=np.uint64)
        for column in range(start, end):
            key = (key ^ signatures[:, column].astype(np.uint64)) * FNV_PRIME
        keys[:, band] = key
    return keys


def _band_groups(keys: np.ndarray) -> np.ndarray:
    """(n, bands) group numbers: rows with the same key in a band are one group; -1 where no
    other row has the row's key in that band (most rows, in most bands)."""
    rows, band_count = keys.shape
    groups = np.full((rows, band_count), -1, dtype=np.int64)
    numbered = 0
    for band in range(band_count):
        order = np.argsort(keys[:, band], kind="stable")
        ordered = keys[order, band]
        starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]]))
        sizes = np.diff(np.append(starts, rows))
        run = np.repeat(np.arange(len(starts)), sizes)
        shared = sizes[run] > 1
        groups[order[shared], band] = numbered + run[shared]
        numbered += len(starts)
    return groups
