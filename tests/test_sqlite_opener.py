"""The one SQLite opener (stores/persistence/sqlite.py), used by the LLM cache, the embedding cache and the
checkpointer: threads opening a new file at once all succeed (select's judge workers each open
their store as their batch starts; concurrent runs each open the workspace's checkpoints)."""

import multiprocessing
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

from benchsmith.stores.persistence.checkpoints import sqlite_checkpointer
from benchsmith.stores.persistence.embedding_cache import EmbeddingCache
from benchsmith.stores.persistence.sqlite import open_sqlite
from benchsmith.stores.persistence.workspace import Workspace

THREADS = 4
TRIALS = 60


def run_at_once(work: Callable[[int], None]) -> list[str]:
    """``work(worker)`` in THREADS threads released together; the errors they raised."""
    start, errors = threading.Barrier(THREADS), []

    def worker(number: int) -> None:
        start.wait()
        try:
            work(number)
        except Exception as error:  # collected, asserted by the caller
            errors.append(repr(error))

    threads = [threading.Thread(target=worker, args=(number,)) for number in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_threads_opening_a_new_embedding_cache_at_once_all_open_it_and_write(tmp_path):
    # With the setup lock replaced by a no-op, 3 of 3 runs of this test and of the checkpointer's
    # below failed ("database is locked" within the 60 trials), as tests/test_llm_cache.py did.
    for trial in range(TRIALS):
        path = tmp_path / f"embeddings-{trial}.sqlite"

        def open_and_write(worker: int, path=path) -> None:
            cache = EmbeddingCache(path)
            cache.put_many("model", [(f"key-{worker}", bytes([worker]) * 8)])
            cache.close()

        errors = run_at_once(open_and_write)
        assert errors == [], f"trial {trial}: {errors[0]}"
        cache = EmbeddingCache(path)
        assert cache.get_many([f"key-{worker}" for worker in range(THREADS)]) == {
            f"key-{worker}": bytes([worker]) * 8 for worker in range(THREADS)
        }
        cache.close()


def test_threads_opening_a_new_checkpointer_at_once_all_open_it_and_write(tmp_path):
    for trial in range(TRIALS):
        workspace = Workspace.resolve(tmp_path / f"workspace-{trial}")

        def open_and_write(worker: int, workspace=workspace) -> None:
            with sqlite_checkpointer(workspace) as saver:
                saver.setup()  # the saver creates its tables on first use: here, all threads at once

        errors = run_at_once(open_and_write)
        assert errors == [], f"trial {trial}: {errors[0]}"
        connection = sqlite3.connect(workspace.checkpoints_path)
        tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"checkpoints", "writes"} <= tables
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        connection.close()


def test_the_opener_makes_the_folder_applies_the_schema_and_sets_wal(tmp_path):
    path = tmp_path / "new" / "folder" / "store.sqlite"
    connection = open_sqlite(
        path, "CREATE TABLE IF NOT EXISTS kept (key TEXT PRIMARY KEY);CREATE TABLE IF NOT EXISTS other (value INTEGER);"
    )
    with connection:
        connection.execute("INSERT INTO kept VALUES ('a')")
    assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert connection.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL
    connection.close()
    reopened = open_sqlite(Path(path))  # no schema: the file's tables and rows are kept
    assert reopened.execute("SELECT key FROM kept").fetchall() == [("a",)]
    assert reopened.execute("SELECT COUNT(*) FROM other").fetchone() == (0,)
    reopened.close()


PROCESSES = 8
SCHEMA = "CREATE TABLE IF NOT EXISTS written (worker INTEGER PRIMARY KEY);"


def _open_and_write_at(path: str, start: float, worker: int) -> str | None:
    """In a process of its own: wait for ``start``, open ``path`` and write a row; the error, if any."""
    while time.time() < start:
        pass  # released together: a barrier across processes
    try:
        connection = open_sqlite(path, SCHEMA)
        with connection:
            connection.execute("INSERT INTO written VALUES (?)", (worker,))
        connection.close()
    except Exception as error:  # returned, asserted by the caller
        return repr(error)
    return None


def test_processes_opening_a_new_file_at_once_all_open_it_and_write(tmp_path):
    # Ray's workers open a run's response cache so. Before the setup was tried again, 18 and 20 of 480
    # such opens (eight processes, 60 new files) failed with "database is locked" on the switch to WAL.
    context = multiprocessing.get_context("spawn")
    with context.Pool(PROCESSES) as pool:
        for trial in range(TRIALS // 4):
            path = str(tmp_path / f"shared-{trial}.sqlite")
            start = time.time() + 0.5
            errors = [
                error
                for error in pool.starmap(_open_and_write_at, [(path, start, worker) for worker in range(PROCESSES)])
                if error
            ]
            assert errors == [], f"trial {trial}: {errors[0]}"
            connection = sqlite3.connect(path)
            assert connection.execute("SELECT COUNT(*) FROM written").fetchone() == (PROCESSES,)
            connection.close()
