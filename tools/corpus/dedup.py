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

At a million chunks no text is held (:func:`deduplicate`): one pass over the stream keys each
row (its 18 LSH band keys and a key of its id, 152 bytes); the rows that share a key are grouped
(:func:`candidate_groups`, or across a Ray cluster: graphs/runtime/ray_key_groups.py), and only
the rows in a group are then decided, in order, as an incremental LSH index would decide them,
reading back their texts and their candidates' for the exact check (:func:`decide_near_duplicates`).
Datasketch's ``MinHashLSH`` held every band's bytes in Python objects, about 6 KB a chunk.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
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

    def to_json(self) -> dict[str, Any]:
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

    A first pass keeps each row's id and keys (:func:`row_keys`); rows that share a key are then
    decided in order (:func:`decide_near_duplicates`), their texts (and their candidates') read
    again with ``text_of(row)`` for the exact Jaccard check. Of candidates equally similar, the
    earliest row is the one kept.
    """
    bands = candidate_bands(threshold, num_perm)
    ids: list[str] = []
    blocks: list[np.ndarray] = []
    iterator = iter(records)
    while batch := list(itertools.islice(iterator, BATCH)):
        batch_ids = [chunk_id for chunk_id, _ in batch]
        blocks.append(row_keys(batch_ids, [text for _, text in batch], bands, num_perm, seed))
        ids += batch_ids
        if on_progress:
            on_progress(len(ids), total)
    groups = candidate_groups(np.concatenate(blocks)) if blocks else []
    return decide_near_duplicates(groups, ids.__getitem__, text_of, threshold=threshold, id_column=len(bands))


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


def row_keys(
    ids: Sequence[str], texts: Sequence[str], bands: Sequence[tuple[int, int]], num_perm: int, seed: int
) -> np.ndarray:
    """(rows, bands + 1) keys of a batch of rows: their band keys (:func:`band_keys`), then a 64-bit
    hash of their id (column ``len(bands)``: rows sharing it may repeat an id, and
    :func:`decide_near_duplicates` compares their ids themselves)."""
    keys = np.empty((len(ids), len(bands) + 1), dtype=np.uint64)
    keys[:, : len(bands)] = band_keys(texts, bands, num_perm, seed)
    keys[:, len(bands)] = np.fromiter((_id_key(chunk_id) for chunk_id in ids), dtype=np.uint64, count=len(ids))
    return keys


def _id_key(chunk_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(chunk_id.encode("utf-8"), digest_size=8).digest(), "little")


def rows_sharing_a_key(keys: np.ndarray, rows: np.ndarray) -> list[np.ndarray]:
    """The rows (ascending) of each key that two or more of the rows have (``keys[i]`` is ``rows[i]``'s):
    the one grouping, whether a process groups every row's keys (:func:`candidate_groups`) or a node
    its partition of a cluster's (graphs/runtime/ray_key_groups.py)."""
    if not len(keys):
        return []
    order = np.lexsort((rows, keys))
    ordered, ordered_rows = keys[order], rows[order]
    starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]]))
    ends = np.append(starts[1:], len(ordered))
    shared = ends - starts > 1
    # Copies: a view would keep every row of the column alive for as long as its group.
    return [ordered_rows[start:end].copy() for start, end in zip(starts[shared].tolist(), ends[shared].tolist())]


def candidate_groups(keys: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(column, rows) of every key that two or more rows share in a column of ``keys`` (one row of
    :func:`row_keys` a row)."""
    rows = np.arange(len(keys), dtype=np.int64)
    return [(column, group) for column in range(keys.shape[1]) for group in rows_sharing_a_key(keys[:, column], rows)]


def decide_near_duplicates(
    groups: Iterable[tuple[int, np.ndarray]],
    id_of: Callable[[int], str],
    text_of: Callable[[int], str],
    *,
    threshold: float,
    id_column: int,
) -> Deduplication:
    """:func:`deduplicate`'s decisions from the candidate groups alone: (column, rows) for each key
    that two or more rows share (:func:`candidate_groups`), column ``id_column`` the ids' keys. Rows
    in no group are kept without being looked at; the others are decided in row order, as an
    incremental LSH index would decide them, reading back their ids (``id_of``) and texts
    (``text_of``). Where the groups were made (here, or across a Ray cluster) and the order they
    come in do not change a decision."""
    row_groups: dict[int, list[int]] = {}  # row → the numbers of its band groups
    earlier_rows: dict[int, list[int]] = {}  # row → the earlier rows of its id
    for number, (column, rows) in enumerate(groups):
        if column == id_column:
            _note_repeated_ids(rows.tolist(), id_of, earlier_rows)
        else:
            for row in rows.tolist():
                row_groups.setdefault(row, []).append(number)
    out_of_index: set[int] = set()  # rows not in the index (a row in no group is in it, never read)
    members: dict[int, list[int]] = {}  # group → rows in the index, in row order
    fingerprints: BoundedCache[int, np.ndarray] = BoundedCache(FINGERPRINT_CACHE)

    def fingerprint(row: int) -> np.ndarray:
        if (found := fingerprints.get(row)) is None:
            found = _fingerprint(char_shingles(text_of(row)))
            fingerprints[row] = found
        return found

    matches: list[DuplicateMatch] = []
    dropped: set[int] = set()
    for row in sorted(row_groups.keys() | earlier_rows.keys()):
        if row in earlier_rows:
            dropped.add(row)
            if any(other not in out_of_index for other in earlier_rows[row]):  # the same id already in the index
                out_of_index.add(row)
                chunk_id = id_of(row)
                matches.append(DuplicateMatch(chunk_id, chunk_id, 1.0))
                continue
        own_groups = row_groups.get(row, [])
        candidates = sorted({other for group in own_groups for other in members.get(group, ())})
        best_row, best = None, 0.0
        if candidates:
            own = fingerprint(row)
            for other in candidates:
                similarity = jaccard(own, fingerprint(other))
                if similarity > best:
                    best_row, best = other, similarity
        if best_row is not None and best >= threshold:
            out_of_index.add(row)
            dropped.add(row)
            matches.append(DuplicateMatch(id_of(row), id_of(best_row), round(best, 4)))
        else:
            for group in own_groups:
                members.setdefault(group, []).append(row)
    return Deduplication(matches, dropped)


def _note_repeated_ids(rows: list[int], id_of: Callable[[int], str], earlier_rows: dict[int, list[int]]) -> None:
    """For each of the rows (ascending; their ids share a key) whose id an earlier one has, those
    earlier rows."""
    seen: dict[str, list[int]] = {}
    for row in rows:
        same = seen.setdefault(id_of(row), [])
        if same:
            earlier_rows[row] = list(same)
        same.append(row)


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
