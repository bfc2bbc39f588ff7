"""Embedding texts into a Chroma collection, resumably: batches of ids the collection already
holds are skipped, so an interrupted indexing job continues where it stopped."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchsmith.stores.persistence.vectors import MAX_UPSERT_BATCH, VectorStore
from benchsmith.tools.retrieval.embedding import Embedder


@dataclass
class IndexItem:
    id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


def embed_into(
    store: VectorStore,
    items: Sequence[IndexItem],
    embedder: Embedder,
    batch_size: int,
    on_progress: Callable[[int, int], None] | None = None,  # the total is known: a ProgressCallback too
    text_lengths: Sequence[int] | None = None,
) -> int:
    """Embed and upsert the items the store lacks or holds with another text (a file changed since it
    was ingested), in batches; returns how many were embedded.

    Items are read by position, a batch at a time: ``items`` may read them from a file, and then
    ``text_lengths`` (each item's ``len(text)``) spares reading them all to order them.

    Embedded items reach the store in groups of up to ``MAX_UPSERT_BATCH``, written by one thread
    while the next group is embedded: every write makes Chroma save its whole HNSW index once at
    least 1,000 items came since the last save (0.85 s at a million items), so writes of 256 made a
    million-chunk ingestion save it 880 times (writes of 4,096 cut the ingestion's Chroma CPU from
    1,719 to 1,224 s there). An item embedded but not yet written when the process dies is written
    on resume, its vector read back from the embedding cache (ingestion's embedder always has one)."""
    lengths = text_lengths if text_lengths is not None else [len(item.text) for item in items]
    if len(lengths) != len(items):
        raise ValueError(f"{len(lengths)} text lengths for {len(items)} items")
    # Similar lengths in a batch waste less padding; the order does not matter to the index.
    ordered = sorted(range(len(items)), key=lengths.__getitem__)  # stable: ties in item order
    newly_embedded = 0
    with _GroupedWriter(store) as writer:
        for start in range(0, len(ordered), batch_size):
            batch = [items[position] for position in ordered[start : start + batch_size]]
            stored = store.stored_texts([item.id for item in batch])
            missing = [item for item in batch if stored.get(item.id) != item.text]
            if missing:
                writer.add(missing, embedder.encode([item.text for item in missing]))
                newly_embedded += len(missing)
            if on_progress is not None:
                on_progress(min(start + batch_size, len(ordered)), len(ordered))
    return newly_embedded


class _GroupedWriter:
    """Collects embedded items and upserts them ``MAX_UPSERT_BATCH`` at a time on one background
    thread, one write in flight: a write's error is raised at the next write or at the end."""

    def __init__(self, store: VectorStore):
        self.store = store
        self.items: list[IndexItem] = []
        self.vectors: list[np.ndarray] = []  # one row per item
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chroma-write")
        self.in_flight: Future[None] | None = None

    def __enter__(self) -> _GroupedWriter:
        return self

    def add(self, items: Sequence[IndexItem], vectors: np.ndarray) -> None:
        self.items.extend(items)
        self.vectors.extend(vectors)
        while len(self.items) >= MAX_UPSERT_BATCH:
            self._write(MAX_UPSERT_BATCH)

    def _write(self, count: int) -> None:
        self._wait()
        items, vectors = self.items[:count], self.vectors[:count]
        del self.items[:count], self.vectors[:count]
        if items:
            self.in_flight = self.pool.submit(
                self.store.upsert,
                [item.id for item in items],
                np.stack(vectors),
                [item.text for item in items],
                [item.metadata or None for item in items],
            )  # Chroma refuses {}

    def _wait(self) -> None:
        if self.in_flight is not None:
            in_flight, self.in_flight = self.in_flight, None
            in_flight.result()

    def __exit__(self, *_: object) -> None:
        try:  # the last group, also when embedding failed: what was embedded is kept
            self._write(len(self.items))
            self._wait()
        finally:
            self.pool.shutdown(wait=True)
