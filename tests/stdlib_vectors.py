"""The real embedder's vectors of the standard-library corpus, handed from one test to another.

Embedding the stdlib chunks (about 1,800 of them) with the real model costs minutes of CPU. The
demo test embeds them as a new user's first run does, in an empty workspace; once it has, its
workspace's embedding cache (stores/embedding_cache.py, keyed by embedder and text) is offered
here, and the stdlib configuration search starts from a copy of it, so it embeds only what the
demo did not (the whole documents). When the demo test is in the session, the search waits for
it to finish (another worker runs it; pytest-xdist's groups do not pin them to one worker under
pytest 9); otherwise, or when the demo failed, it embeds everything itself.

The file lives in the folder that every pytest-xdist worker of the session shares.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest

from benchsmith.stores.workspace import Workspace

DEMO_TEST = "test_demo_runs_every_job_offline"  # tests/test_cli.py: embeds the stdlib first, as a new user's run does
OFFERED_FILE = "stdlib-embedding-cache.sqlite"
DEMO_DONE_FILE = "stdlib-demo-done"


class StdlibVectors:
    def __init__(self, folder: Path):
        self.offered = folder / OFFERED_FILE
        self.demo_done = folder / DEMO_DONE_FILE

    def demo_finished(self) -> None:
        """The demo test ended, passed or not: nothing more will be offered."""
        self.demo_done.touch()

    def wait_for_the_demo(self, timeout_s: float) -> None:
        """Until the demo test has ended (it offers its vectors before), at most ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while not self.demo_done.exists() and time.monotonic() < deadline:
            time.sleep(1)

    def offer(self, workspace: Path) -> None:
        """Keep ``workspace``'s embedding cache for the tests that come after (its WAL included)."""
        source = Workspace.resolve(workspace).embedding_cache_path
        if self.offered.exists() or not source.exists():
            return
        partial = self.offered.with_name(f"{OFFERED_FILE}.{os.getpid()}.tmp")
        with sqlite3.connect(source) as reading, sqlite3.connect(partial) as writing:
            reading.backup(writing)
        writing.close()
        reading.close()
        partial.replace(self.offered)  # whole or not at all: a reader never sees half a file

    def seed(self, workspace: Path) -> bool:
        """Start ``workspace`` with the offered vectors; False where none were offered yet."""
        if not self.offered.exists():
            return False
        target = Workspace.resolve(workspace).embedding_cache_path
        target.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(self.offered) as reading, sqlite3.connect(target) as writing:
            reading.backup(writing)
        writing.close()
        reading.close()
        return True


@pytest.fixture(scope="session")
def stdlib_vectors(tmp_path_factory: pytest.TempPathFactory) -> StdlibVectors:
    base = tmp_path_factory.getbasetemp()
    # Under xdist each worker has its own base (…/popen-gw0); their parent is the session's.
    return StdlibVectors(base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base)
