"""SQLite cache of vectors from embedding servers, so a text is paid for once per (endpoint, model).

Keys come from the embeddings client (agents/seam/embeddings.py): a SHA-256 over the endpoint, the
model and the text, never the API key. Vectors are stored as float32 bytes (1.5 KB for 384
dimensions), beside their dimension.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence

from benchsmith.stores.persistence.bounded_cache import BoundedCache
from benchsmith.stores.persistence.sqlite import SharedTable
from benchsmith.stores.persistence.workspace import Workspace

SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created REAL NOT NULL
)
"""
# SQLite allows 32,766 host parameters per statement; stay far below.
LOOKUP_CHUNK = 500


class EmbeddingCache(SharedTable):
    """Thread-safe bulk get/put of float32 vectors; WAL mode lets several processes share it."""

    table, schema = "embeddings", SCHEMA

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]:
        """``{key: float32 bytes}`` of the keys stored; the others are absent."""
        found: dict[str, bytes] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), LOOKUP_CHUNK):
                chunk = unique[start : start + LOOKUP_CHUNK]
                placeholders = ",".join("?" * len(chunk))
                rows = self._connection.execute(
                    f"SELECT key, vector FROM embeddings WHERE key IN ({placeholders})", chunk
                ).fetchall()
                found.update((key, bytes(vector)) for key, vector in rows)
        return found

    def put_many(self, model: str, rows: Iterable[tuple[str, bytes]]) -> None:
        """Store ``(key, float32 bytes)`` rows of ``model`` in one transaction."""
        now = time.time()
        values = [(key, model, len(vector) // 4, vector, now) for key, vector in rows]
        with self._lock, self._connection:
            self._connection.executemany(
                "INSERT OR REPLACE INTO embeddings (key, model, dimension, vector, created) VALUES (?, ?, ?, ?, ?)",
                values,
            )


_open_caches: BoundedCache[str, EmbeddingCache] = BoundedCache(16)
_open_lock = threading.Lock()


def workspace_embedding_cache(workspace: Workspace) -> EmbeddingCache:
    """The workspace's embedding cache, opened once per process (the server embedders' and the
    in-process embedders' vectors share it)."""
    path = str(workspace.embedding_cache_path)
    with _open_lock:
        return _open_caches.get(path) or _open_caches.setdefault(path, EmbeddingCache(path))
