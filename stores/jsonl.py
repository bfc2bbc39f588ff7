"""JSON Lines files: strict reading with file:line errors, atomic and append-only writing,
and logs of finished items keyed by id whose appends cost the same at any size."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from benchsmith.stores.errors import InputError
from benchsmith.stores.files import atomic_writer


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line.

    A line that is not a JSON object stops the read with an :class:`InputError` naming the
    file and the 1-based line number.
    """
    path = Path(path)
    try:
        handle = path.open(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    with handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(f"{path}:{line_number}: malformed JSON ({error.msg})") from None
            except UnicodeDecodeError:
                raise InputError(f"{path}:{line_number}: not valid UTF-8") from None
            if not isinstance(record, dict):
                raise InputError(f"{path}:{line_number}: expected a JSON object, got {type(record).__name__}")
            yield line_number, record


def load_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """All records of a JSONL file (for files our own pipeline wrote)."""
    return [record for _, record in read_jsonl(path)]


def write_jsonl_atomic(path: str | Path, records: Iterable[dict[str, Any]]) -> int:
    """Write all records to ``path`` atomically (stores/files.py); returns the count."""
    count = 0
    with atomic_writer(path) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


def append_jsonl(path: str | Path, record: dict[str, Any], durable: bool = True) -> None:
    """Append one record. Once written it survives a killed process; ``durable`` also syncs it
    to disk (a power cut), which costs a disk flush per call: use it per finished item."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        handle.flush()
        if durable:
            os.fsync(handle.fileno())


def sync_file(path: str | Path) -> None:
    """Flush a file's written data to disk (fsync acts on the file, whichever handle wrote it)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class RecordLog:
    """An append-only JSONL file of finished items, one per id (``key``).

    Appending must cost the same at the millionth item as at the first, so the ids are read
    once and then only the bytes other writers appended since (a file replaced by a rewrite
    is read again). Thread-safe; obtain one per file with :func:`record_log`.
    """

    def __init__(self, path: str | Path, key: str):
        self.path = Path(path)
        self.key = key
        self._ids: set[str] = set()
        self._offset = 0
        self._inode: int | None = None
        self._lock = threading.Lock()

    def _refresh(self) -> None:
        try:
            status = self.path.stat()
        except FileNotFoundError:
            self._ids, self._offset, self._inode = set(), 0, None
            return
        if status.st_ino != self._inode or status.st_size < self._offset:  # replaced: read it all again
            self._ids, self._offset, self._inode = set(), 0, status.st_ino
        if status.st_size == self._offset:
            return
        with self.path.open("rb") as handle:
            handle.seek(self._offset)
            tail = handle.read()
        complete = tail[: tail.rfind(b"\n") + 1]  # a line still being written is read next time
        for line in complete.splitlines():
            if line.strip():
                self._ids.add(str(json.loads(line)[self.key]))
        self._offset += len(complete)

    def ids(self) -> set[str]:
        with self._lock:
            self._refresh()
            return set(self._ids)

    def __contains__(self, item_id: object) -> bool:
        with self._lock:
            self._refresh()
            return item_id in self._ids

    def append_once(self, record: dict[str, Any]) -> bool:
        """Append a finished item (synced to disk) unless its id is there already (a re-run
        after a kill); True when it was written."""
        with self._lock:
            self._refresh()
            item_id = str(record[self.key])
            if item_id in self._ids:
                return False
            append_jsonl(self.path, record)
            self._ids.add(item_id)
            self._offset = self.path.stat().st_size
            return True


_logs: dict[tuple[str, str], RecordLog] = {}
_logs_lock = threading.Lock()


def record_log(path: str | Path, key: str) -> RecordLog:
    """The process's one :class:`RecordLog` of ``path`` (so its ids are read once)."""
    resolved = str(Path(path).resolve())
    with _logs_lock:
        return _logs.setdefault((resolved, key), RecordLog(resolved, key))
