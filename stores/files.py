"""The one atomic writer: a file is replaced whole or not at all.

Writes go to a temporary file beside the target, are synced to disk, then renamed over it:
a crash mid-write leaves the previous file (or none), never a half-written one, so a node
re-run after a crash writes the same file again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Mapping
from typing import IO, Any


@contextmanager
def atomic_writer(path: str | Path, newline: str | None = None) -> Iterator[IO[str]]:
    """A text handle whose content replaces ``path`` when the block ends without error."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    try:
        with temporary.open("w", encoding="utf-8", newline=newline) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    os.replace(temporary, path)


def write_text_atomic(path: str | Path, text: str) -> None:
    with atomic_writer(path) as handle:
        handle.write(text)


def write_json_atomic(path: str | Path, payload: Any, indent: int | None = 2) -> None:
    write_text_atomic(path, json.dumps(payload, indent=indent, ensure_ascii=False))


def write_files_atomic(directory: str | Path, files: Mapping[str, tuple[str, str]]) -> dict[str, Path]:
    """Write ``{kind: (file name, text)}`` into ``directory``, each atomically; their paths by kind."""
    paths = {kind: Path(directory) / name for kind, (name, _) in files.items()}
    for kind, (_, text) in files.items():
        write_text_atomic(paths[kind], text)
    return paths
