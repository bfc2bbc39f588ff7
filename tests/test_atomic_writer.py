"""The one atomic writer (stores/persistence/files.py): many threads and processes writing the same path at
once never raise, and leave one writer's complete file and no temporary behind."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import signal
import stat
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from benchsmith.stores.persistence.files import atomic_writer, write_bytes_atomic, write_text_atomic

WRITERS = 12
ROUNDS = 20


def content(writer: int) -> str:
    """Large enough that a write takes several system calls: a torn file would show."""
    return f"writer {writer}\n" * 20_000


def write_rounds(path: str, writer: int) -> None:
    for _ in range(ROUNDS):
        text = content(writer)
        with atomic_writer(path) as handle:
            for start in range(0, len(text), 4096):  # many writes: other writers run in between
                handle.write(text[start : start + 4096])


def assert_one_complete_file(path: Path) -> None:
    assert path.read_text(encoding="utf-8") in {content(writer) for writer in range(WRITERS)}
    assert [entry.name for entry in path.parent.iterdir()] == [path.name]  # no temporary left behind


def test_threads_writing_one_path_at_once_never_raise_and_leave_one_complete_file(tmp_path):
    path = tmp_path / "beir" / "corpus.jsonl"
    errors: list[BaseException] = []
    start = threading.Barrier(WRITERS)

    def writer(number: int) -> None:
        start.wait()
        try:
            write_rounds(str(path), number)
        except BaseException as error:  # collected and asserted below
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(number,)) for number in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert_one_complete_file(path)


def test_processes_writing_one_path_at_once_never_raise_and_leave_one_complete_file(tmp_path):
    path = tmp_path / "qrels.tsv"
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=write_rounds, args=(str(path), number)) for number in range(6)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
    assert [process.exitcode for process in processes] == [0] * 6
    assert_one_complete_file(path)


def test_an_error_in_the_block_keeps_the_previous_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "stats.json"
    write_text_atomic(path, "before")
    with pytest.raises(RuntimeError, match="mid-write"), atomic_writer(path) as handle:
        handle.write("half of the new")
        raise RuntimeError("mid-write")
    assert path.read_text(encoding="utf-8") == "before"
    assert [entry.name for entry in tmp_path.iterdir()] == ["stats.json"]


def test_binary_writes_and_text_newlines_are_written_as_given(tmp_path):
    write_bytes_atomic(tmp_path / "raw.bin", b"\x00\xff\r\n")
    assert (tmp_path / "raw.bin").read_bytes() == b"\x00\xff\r\n"
    with atomic_writer(tmp_path / "arrays.npz", binary=True) as handle:  # as corpus statistics are saved
        np.savez(handle, values=np.arange(5))
    with np.load(tmp_path / "arrays.npz") as arrays:
        assert arrays["values"].tolist() == [0, 1, 2, 3, 4]
    with atomic_writer(tmp_path / "table.tsv", newline="") as handle:
        handle.write("a\tb\r\n")
    assert (tmp_path / "table.tsv").read_bytes() == b"a\tb\r\n"


def test_a_written_file_gets_the_usual_permissions_not_the_temporary_files(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    write_text_atomic(tmp_path / "report.md", "# report")
    # A temporary file is created 0600; the renamed file must be readable as a plain open() makes it.
    assert stat.S_IMODE((tmp_path / "report.md").stat().st_mode) == 0o666 & ~umask


def _write_until_killed(path: str, ready: multiprocessing.synchronize.Event) -> None:
    with atomic_writer(path, binary=True) as handle:
        handle.write(b"\0" * 1024)
        handle.flush()
        ready.set()
        while True:  # a long write, as publish's corpus.parquet, until the kill
            handle.write(b"\0" * 1024)
            time.sleep(0.01)


def test_a_writer_killed_mid_write_leaves_the_previous_file_and_no_temporary(tmp_path):
    path = tmp_path / "corpus.parquet"
    write_bytes_atomic(path, b"previous")
    context = multiprocessing.get_context("fork")
    ready = context.Event()
    writer = context.Process(target=_write_until_killed, args=(str(path), ready))
    writer.start()
    assert ready.wait(30)
    os.kill(writer.pid, signal.SIGKILL)
    writer.join()
    assert path.read_bytes() == b"previous"
    assert [entry.name for entry in tmp_path.iterdir()] == ["corpus.parquet"]  # the unnamed temporary died with it


def test_the_next_write_removes_temporaries_killed_writers_left_and_no_live_one(tmp_path):
    """Where a file system cannot make unnamed files (or a version before this one wrote), a killed
    writer leaves ``<target>.<random>.tmp``: the next write of the target removes it."""
    path = tmp_path / "corpus.parquet"
    stale, recent, held = (tmp_path / f"corpus.parquet.{name}.tmp" for name in ("k1ll3d_0", "n3wb0rn1", "l1v3wr1t"))
    other = tmp_path / "queries.parquet.k1ll3d_0.tmp"  # another target's: not this write's to judge
    for temporary in (stale, recent, held, other):
        temporary.write_bytes(b"")
    an_hour_ago = time.time() - 3600
    for temporary in (stale, held, other):
        os.utime(temporary, (an_hour_ago, an_hour_ago))
    with open(held, "rb") as live:
        fcntl.flock(live, fcntl.LOCK_EX)  # a writer still writing it
        write_bytes_atomic(path, b"new")
    assert path.read_bytes() == b"new"
    assert sorted(entry.name for entry in tmp_path.iterdir()) == sorted(
        ["corpus.parquet", recent.name, held.name, other.name]
    )


def test_where_unnamed_files_are_not_made_a_named_temporary_is_used_and_renamed(tmp_path, monkeypatch):
    monkeypatch.delattr(os, "O_TMPFILE")
    write_rounds(str(tmp_path / "qrels.tsv"), 3)
    assert (tmp_path / "qrels.tsv").read_text(encoding="utf-8") == content(3)
    assert [entry.name for entry in tmp_path.iterdir()] == ["qrels.tsv"]
