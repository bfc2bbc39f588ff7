"""The LangGraph checkpointer of the CLI: SQLite in the workspace, one thread per run id.

WAL journal with ``synchronous=NORMAL``: a commit no longer waits for an fsync, which made
checkpoint writes the bottleneck of concurrent runs, and a killed process still loses
nothing committed (only a power cut can drop the last transactions).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from langgraph.checkpoint.sqlite import SqliteSaver

from benchsmith.stores.workspace import Workspace


@contextmanager
def sqlite_checkpointer(workspace: Workspace) -> Iterator[SqliteSaver]:
    connection = sqlite3.connect(workspace.checkpoints_path, check_same_thread=False, timeout=30)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        yield SqliteSaver(connection)
    finally:
        connection.close()
