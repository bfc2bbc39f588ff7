"""SQLite cache of model responses, so a re-run pays for no call twice.

Keys come from the model seam (agents/models.py): a SHA-256 over the model spec, the
messages, the output schema and the sampling settings, never the API key.
"""

from __future__ import annotations

import time

from benchsmith.stores.sqlite import SharedTable

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""


class LLMCache(SharedTable):
    """Thread-safe get/put of response strings; WAL mode lets several processes share it."""

    table, schema = "responses", SCHEMA

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
