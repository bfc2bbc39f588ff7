"""The LangGraph checkpointer of the CLI: SQLite in the workspace, one thread per run id."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from langgraph.checkpoint.sqlite import SqliteSaver

from stores.workspace import Workspace


@contextmanager
def sqlite_checkpointer(workspace: Workspace) -> Iterator[SqliteSaver]:
    with SqliteSaver.from_conn_string(str(workspace.checkpoints_path)) as saver:
        yield saver
