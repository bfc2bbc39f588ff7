"""Embedding texts into a Chroma collection, resumably: batches of ids the collection already
holds are skipped, so an interrupted indexing job continues where it stopped."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchsmith.stores.progress import ProgressCallback
from benchsmith.stores.vectors import VectorStore
from benchsmith.tools.embedding import Embedder
from benchsmith.tools.defaults import DEFAULT_INDEX_BATCH_SIZE as DEFAULT_BATCH_SIZE


@dataclass
class IndexItem:
    id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


def embed_into(store: VectorStore, items: Sequence[IndexItem], embedder: Embedder, batch_size: int,
               on_progress: ProgressCallback | None = None, text_lengths: Sequence[int] | None = None) -> int:
    """Embed and upsert the items the store lacks or holds with another text (a file changed since it
    was ingested), in batches; returns how many were embedded.

    Items are read by position, a batch at a time: ``items`` may read them from a file, and then
    ``text_lengths`` (each item's ``len(text)``) spares reading them all to order them."""
    lengths = text_lengths if text_lengths is not None else [len(item.text) for item in items]
    if len(lengths) != len(items):
        raise ValueError(f"{len(lengths)} text lengths for {len(items)} items")
    # Similar lengths in a batch waste less padding; the order does not matter to the index.
    ordered = sorted(range(len(items)), key=lengths.__getitem__)  # stable: ties in item order
    newly_embedded = 0
    for start in range(0, len(ordered), batch_size):
        batch = [items[position] for position in ordered[start : start + batch_size]]
        stored = store.stored_texts([item.id for item in batch])
        missing = [item for item in batch if stored.get(item.id) != item.text]
        if missing:
            vectors = embedder.encode([item.text for item in missing])
            store.upsert([item.id for item in missing], vectors, [item.text for item in missing],
                         [item.metadata or None for item in missing])  # Chroma refuses {}
            newly_embedded += len(missing)
        if on_progress is not None:
            on_progress(min(start + batch_size, len(ordered)), len(ordered))
    return newly_embedded
