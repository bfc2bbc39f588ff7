"""JSON Lines files: strict reading with file:line errors, atomic and append-only writing,
and logs of finished items keyed by id whose appends cost the same at any size."""

from __future__ import annotations

import functools
import json
import os
import threading
from array import array
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.files import atomic_writer


def open_user_file(path: str | Path, mode: str = "r") -> IO[Any]:
    """Open a file the user named, for reading (``mode`` "r": UTF-8 text, "rb": bytes); a
    missing file, a directory or an unreadable file is an :class:`InputError` naming it."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{path}: is a directory, expected a file")
    try:
        return path.open("rb") if mode == "rb" else path.open(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except OSError as error:
        raise InputError(f"{path}: cannot be read ({error.strerror or error})") from None


def decoded_line(path: str | Path, line_number: int, raw: bytes) -> str:
    """One line of a user file as text; bytes that are not UTF-8 name the file, line and column."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{path}:{line_number}: not valid UTF-8 (byte {raw[error.start]:#04x} at column "
            f"{error.start + 1}); save the file as UTF-8"
        ) from None


def text_lines(path: str | Path, max_line_bytes: int | None = None) -> Generator[str, None, None]:
    """The lines of a user's text file (endings kept, a leading byte order mark dropped), each
    decoded on its own so bytes that are not UTF-8 name their line; feeds csv.reader too. A line
    longer than ``max_line_bytes`` stops the read naming it, before it is held whole."""
    path = Path(path)
    with open_user_file(path, "rb") as handle:
        lines = iter(handle) if max_line_bytes is None else iter(lambda: handle.readline(max_line_bytes + 1), b"")
        for line_number, raw in enumerate(lines, start=1):
            if max_line_bytes is not None and len(raw) > max_line_bytes:
                raise InputError(
                    f"{path}:{line_number}: a line longer than {max_line_bytes / 2**20:g} MiB, the "
                    "limit of one record; split it"
                )
            line = decoded_line(path, line_number, raw)
            yield line.removeprefix("\ufeff") if line_number == 1 else line


def read_jsonl(path: str | Path, max_line_bytes: int | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line (at most ``max_line_bytes`` long).

    Lines are decoded one at a time, so bytes that are not UTF-8 stop the read naming the
    line, as does a line that is not a JSON object (a file cut off mid-line included): an
    :class:`InputError` naming the file and the 1-based line number.
    """
    path = Path(path)
    for line_number, line in enumerate(text_lines(path, max_line_bytes), start=1):
        if line.strip():
            yield line_number, _record(path, line_number, line)


def read_json(path: str | Path) -> Any:
    """The JSON value of a whole file the user named; a missing file, a directory, bytes that
    are not UTF-8 or malformed JSON is an :class:`InputError` naming the file (and line)."""
    path = Path(path)
    with open_user_file(path, "rb") as handle:
        raw = handle.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise InputError(
            f"{path}:{line}: not valid UTF-8 (byte {raw[error.start]:#04x}); save the file as UTF-8"
        ) from None
    if not text.strip():
        raise InputError(f"{path}: empty file, expected JSON")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{path}:{error.lineno}: malformed JSON ({error.msg})") from None


def read_json_object(path: str | Path) -> dict[str, Any]:
    """:func:`read_json` of a file that holds one JSON object (a report, a run record); anything
    else is an :class:`InputError` naming the file."""
    value = read_json(path)
    if not isinstance(value, dict):
        raise InputError(f"{path}: expected a JSON object, found {type(value).__name__}")
    return value


BYTE_ORDER_MARK = "\ufeff".encode("utf-8")


class JsonlRows:
    """A JSONL file read as a stream whose rows can be read again by number.

    Iterating yields ``(line_number, record)`` as :func:`read_jsonl` does (the same errors) and
    notes each row's byte offset (8 bytes a row), so a pass over a million records keeps row
    numbers and reads back the few it needs (:meth:`record`, thread-safe) instead of holding
    them all. Blank lines are not rows.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._offsets = array("q")  # each row's first byte, then the end of the file
        self._file: IO[bytes] | None = None  # a file object: closed when collected, should a cache drop us
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        for line_number, raw in self._rows():
            yield line_number, _record(self.path, line_number, decoded_line(self.path, line_number, raw))

    def _rows(self) -> Iterator[tuple[int, bytes]]:
        """Each row's line number and bytes, its offset noted; the offsets kept once the pass ends."""
        offsets, offset = array("q"), 0
        with open_user_file(self.path, "rb") as handle:
            for line_number, raw in enumerate(handle, start=1):
                start, offset = offset, offset + len(raw)
                if line_number == 1 and raw.startswith(BYTE_ORDER_MARK):
                    raw, start = raw[len(BYTE_ORDER_MARK) :], start + len(BYTE_ORDER_MARK)
                if raw.strip():
                    offsets.append(start)
                    yield line_number, raw
        offsets.append(offset)
        self._offsets = offsets

    def note_rows(self) -> JsonlRows:
        """A pass that only notes where the rows are (no record parsed), for :meth:`record`: the rows
        of a file this program wrote, read elsewhere a batch at a time (graphs/runtime/ray_data.py)."""
        for _ in self._rows():
            pass
        return self

    def __len__(self) -> int:
        """Rows seen by the last complete pass."""
        return max(0, len(self._offsets) - 1)

    def record(self, row: int) -> dict[str, Any]:
        """The record of row ``row`` (0-based) of the last complete pass."""
        if not 0 <= row < len(self):
            raise IndexError(f"{self.path}: no row {row} (the last pass read {len(self)})")
        if self._file is None:
            with self._lock:
                if self._file is None:
                    self._file = self.path.open("rb", buffering=0)
        start = self._offsets[row]
        # Up to the next row: the blank lines between are whitespace to the parser.
        result: dict[str, Any] = json.loads(os.pread(self._file.fileno(), self._offsets[row + 1] - start, start))
        return result

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _record(path: Path, line_number: int, line: str) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        cut = " (the line is cut off: is the file complete?)" if not line.endswith("\n") else ""
        raise InputError(f"{path}:{line_number}: malformed JSON ({error.msg}){cut}") from None
    if not isinstance(record, dict):
        raise InputError(f"{path}:{line_number}: expected a JSON object, got {json_kind(record)}")
    return record


def json_kind(value: Any) -> str:
    """What a parsed JSON value is, in JSON's words, for messages: 'an array', 'an object'..."""
    if isinstance(value, bool):
        return "a boolean"
    kinds = {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)


def load_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """All records of a JSONL file (for files our own pipeline wrote)."""
    return [record for _, record in read_jsonl(path)]


def records_by(path: Path, key: str) -> dict[str, dict[str, Any]]:
    """The records of the JSONL file ``path`` by their ``key`` field, read once per version of the
    file (its modification time): a run's nodes ask for its records one item at a time. The answer
    is shared: read it, do not change it."""
    return _records_by(path, key, path.stat().st_mtime)


@functools.lru_cache(maxsize=8)
def _records_by(path: Path, key: str, modified: float) -> dict[str, dict[str, Any]]:
    return {record[key]: record for record in load_jsonl(path)}


def write_jsonl_atomic(path: str | Path, records: Iterable[dict[str, Any]]) -> int:
    """Write all records to ``path`` atomically (stores/persistence/files.py); returns the count."""
    with jsonl_writer_atomic(path) as write:
        for record in records:
            write(record)
    return write.count


class _JsonlWrite:
    def __init__(self, handle: IO[str]):
        self.handle, self.count = handle, 0

    def __call__(self, record: dict[str, Any]) -> None:
        self.handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.count += 1


@contextmanager
def jsonl_writer_atomic(path: str | Path) -> Iterator[_JsonlWrite]:
    """``write(record)`` for one JSONL file written atomically (several can be open at once: one
    stream split into two files); ``write.count`` records written."""
    with atomic_writer(path) as handle:
        yield _JsonlWrite(handle)


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
