"""JSON Lines files: strict reading with file:line errors, atomic and append-only writing."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from benchsmith.stores.errors import InputError


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
    """Write all records to ``path`` through a temporary file and a rename.

    A crash mid-write leaves the previous file (or none), never a half-written one, so a
    node that is re-run after a crash simply writes the same file again. Returns the count.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    count = 0
    with temporary.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    return count


def append_jsonl(path: str | Path, record: dict[str, Any]) -> None:
    """Append one finished item; flushed and synced so a kill right after keeps it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
