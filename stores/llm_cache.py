"""SQLite cache of model responses, so a re-run pays for no call twice.

Keys come from the model seam (agents/seam/models.py): a SHA-256 over the model spec, the
messages, the output schema and the sampling settings, never the API key.

Puts are committed by a background writer in batches (stores/persistence/write_behind.py), on a connection of
its own: a model call's thread never waits on a commit, and this process sees a put at once (it
is answered from memory until it is committed). A put reaches the file within about 10 ms; a
process killed with SIGKILL loses at most those, which a resumed run pays for again.
"""

from __future__ import annotations

import time
from pathlib import Path

from benchsmith.stores.persistence.sqlite import SharedTable, open_sqlite
from benchsmith.stores.persistence.write_behind import WriteBehind

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""

Row = tuple[str, str, str, float]  # key, model, response, created


class LLMCache(SharedTable):
    """Thread-safe get/put of response strings; WAL mode lets several processes share it."""

    table, schema = "responses", SCHEMA

    def __init__(self, path: str | Path):
        super().__init__(path)
        self._pending: dict[str, Row] = {}  # put, not yet committed: answered from here
        self._writer_connection = open_sqlite(self.path, self.schema)  # used by the writer's thread only
        self._writes: WriteBehind[Row] = WriteBehind(self._commit, name=f"llm-cache-{self.path.name}")

    def get(self, key: str) -> str | None:
        if (row := self._pending.get(key)) is not None:
            return row[2]
        with self._lock:
            row = self._connection.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, model: str, response: str) -> None:
        row = (key, model, response, time.time())
        self._pending[key] = row
        self._writes.submit(row)

    def flush(self) -> None:
        """Commit every put made so far (a failed commit is raised here)."""
        self._writes.drain()

    def _commit(self, rows: list[Row]) -> None:
        """One transaction for a batch; then the committed rows are read from the file again."""
        with self._writer_connection:
            self._writer_connection.executemany(
                "INSERT OR REPLACE INTO responses (key, model, response, created) VALUES (?, ?, ?, ?)", rows
            )
        for row in rows:
            if self._pending.get(row[0]) is row:  # unless it was put again since
                del self._pending[row[0]]

    def __len__(self) -> int:
        self.flush()
        return super().__len__()

    def close(self) -> None:
        self._writes.close()
        self._writer_connection.close()
        super().close()
