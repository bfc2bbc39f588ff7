"""The LangGraph checkpointer of the CLI and the API: one thread per run id, SQLite in the
workspace by default, PostgreSQL (langgraph-checkpoint-postgres) with ``--database``.

SQLite: opened by stores/persistence/sqlite.py (WAL journal, ``synchronous=NORMAL``, one setup at a time):
a commit no longer waits for an fsync, which made checkpoint writes the bottleneck of concurrent
runs, and a killed process still loses nothing committed (only a power cut can drop the last
transactions).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from benchsmith.stores.persistence.sqlite import open_sqlite
from benchsmith.stores.persistence.workspace import Workspace

_postgres_ready: set[str] = set()


@contextmanager
def sqlite_checkpointer(workspace: Workspace) -> Iterator[SqliteSaver]:
    connection = open_sqlite(workspace.checkpoints_path)
    try:
        yield SqliteSaver(connection)
    finally:
        connection.close()


@contextmanager
def postgres_checkpointer(url: str) -> Iterator[Any]:
    """LangGraph's PostgresSaver on ``url``, its tables created on first use."""
    from langgraph.checkpoint.postgres import PostgresSaver

    from benchsmith.stores.persistence.postgres import SCHEMA_LOCK, connect

    if url not in _postgres_ready:
        lock = connect(url)  # processes start together: one migrates, the others wait
        try:
            lock.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK,))
            with PostgresSaver.from_conn_string(url) as saver:
                saver.setup()
            lock.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))
        finally:
            lock.close()
        _postgres_ready.add(url)
    with PostgresSaver.from_conn_string(url) as saver:
        yield saver


@contextmanager
def run_checkpointer(workspace: Workspace, database: str | None) -> Iterator[Any]:
    """PostgreSQL when a database is given, else SQLite in the workspace."""
    manager = postgres_checkpointer(database) if database else sqlite_checkpointer(workspace)
    with manager as saver:
        yield saver
