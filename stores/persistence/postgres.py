"""Shared state in PostgreSQL, for runs that outgrow one process (``--database postgresql://…``
or ``BENCHSMITH_DATABASE_URL``).

One database holds, beside LangGraph's checkpoint tables (langgraph-checkpoint-postgres):

* ``benchsmith_runs``: the run records (job, settings, status, summary), as ``run.json`` does
  for one process;
* ``benchsmith_workers``: the process that holds a run's claim (stores/persistence/run_claims.py),
  named when a second start is refused;
* ``benchsmith_llm_cache`` and ``benchsmith_usage``: the model response cache and the usage
  ledger, shared by every process (and every Ray task) of a run.

Tables are created on first use; statements are plain SQL through psycopg 3.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from benchsmith.stores.errors import InputError

DATABASE_ENV = "BENCHSMITH_DATABASE_URL"
SCHEMA_LOCK = 0x62656E63  # an advisory lock id: "benc"

SCHEMA = """
CREATE TABLE IF NOT EXISTS benchsmith_runs (
    run_id TEXT PRIMARY KEY,
    job TEXT NOT NULL,
    status TEXT NOT NULL,
    config JSONB NOT NULL DEFAULT '{}',
    summary JSONB NOT NULL DEFAULT '{}',
    error TEXT,
    resume TEXT,
    created TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS benchsmith_workers (
    worker TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_seen TIMESTAMPTZ NOT NULL DEFAULT now(),
    stopped BOOLEAN NOT NULL DEFAULT false
);
CREATE TABLE IF NOT EXISTS benchsmith_llm_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS benchsmith_usage (
    id BIGSERIAL PRIMARY KEY,
    run_id TEXT NOT NULL,
    call JSONB NOT NULL,
    created TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS benchsmith_usage_run ON benchsmith_usage (run_id);
"""

_ready: set[str] = set()
_lock = threading.Lock()


def database_url(explicit: str | None = None) -> str | None:
    """``--database``, else ``$BENCHSMITH_DATABASE_URL``, else None (the embedded SQLite stores)."""
    url = explicit or os.environ.get(DATABASE_ENV) or None
    if url is not None and not url.startswith(("postgresql://", "postgres://")):
        raise InputError(f"--database must be a postgresql:// URL, got {url.split('://')[0]}://…")
    return url


def connect(url: str) -> Any:
    """An autocommit psycopg connection to ``url``, the schema created on first use."""
    import psycopg  # deferred: an optional dependency, needed only with a database URL

    try:
        connection = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as error:
        raise InputError(f"cannot connect to the database: {str(error).strip().splitlines()[0]}") from None
    with _lock:
        if url not in _ready:
            # Processes start together (a run's Ray tasks): one creates the tables, the others wait for it.
            connection.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK,))
            try:
                connection.execute(SCHEMA)
            finally:
                connection.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))
            _ready.add(url)
    return connection


@contextmanager
def connection(url: str) -> Iterator[Any]:
    """A connection for one block of work, closed after it."""
    handle = connect(url)
    try:
        yield handle
    finally:
        handle.close()
