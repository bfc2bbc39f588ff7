"""SQLite cache of model responses, so a re-run pays for no call twice.

Keys come from the model seam (agents/models.py): a SHA-256 over the model spec, the
messages, the output schema and the sampling settings, never the API key.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from benchsmith.stores.sqlite import open_sqlite

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""


class LLMCache:
    """Thread-safe get/put of response strings; WAL mode lets several processes share it."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._connection = open_sqlite(self.path, SCHEMA)  # WAL, no fsync per commit (stores/sqlite.py)

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._connection.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, model: str, response: str) -> None:
        with self._lock, self._connection:
            self._connection.execute(
                "INSERT OR REPLACE INTO responses (key, model, response, created) VALUES (?, ?, ?, ?)",
                (key, model, response, time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            return self._connection.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._connection.close()
