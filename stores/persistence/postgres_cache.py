"""The model response cache in PostgreSQL, shared by every process of every machine (a run's Ray tasks too): the same
interface as stores/persistence/llm_cache.LLMCache (keys from the model seam, never holding a key)."""

from __future__ import annotations

import threading

from benchsmith.stores.persistence.postgres import connect


class PostgresLLMCache:
    def __init__(self, url: str):
        self._connection = connect(url)
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._connection.execute(
                "SELECT response FROM benchsmith_llm_cache WHERE key = %s", (key,)
            ).fetchone()
        return row[0] if row else None

    def put(self, key: str, model: str, response: str) -> None:
        with self._lock:
            self._connection.execute(
                "INSERT INTO benchsmith_llm_cache (key, model, response) VALUES (%s, %s, %s) "
                "ON CONFLICT (key) DO UPDATE SET response = EXCLUDED.response",
                (key, model, response),
            )

    def __len__(self) -> int:
        with self._lock:
            result: int = self._connection.execute("SELECT count(*) FROM benchsmith_llm_cache").fetchone()[0]
            return result
