"""The one atomic writer: a file is replaced whole or not at all.

Writes go to a temporary file beside the target, are synced to disk, then renamed over it:
a crash mid-write leaves the previous file (or none), never a half-written one, so a node
re-run after a crash writes the same file again.

Each writer has its own temporary file (a unique name from :mod:`tempfile`): several threads
or processes writing the same path at once (the workers of a shared run in one workspace all
write the run's files) never rename one another's temporary away; the last rename wins, and
every reader sees one writer's complete file.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


def _new_file_mode() -> int:
    """The mode ``open()`` gives a new file (0666 less the umask); a temporary file is made 0600,
    which the renamed file would otherwise keep. Read once, at import, as umask can only be read
    by setting it."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


_FILE_MODE = _new_file_mode()


@contextmanager
def atomic_writer(path: str | Path, newline: str | None = None, *, binary: bool = False) -> Iterator[IO[Any]]:
    """A handle (UTF-8 text, or bytes with ``binary=True``) whose content replaces ``path``
    when the block ends without error; on an error the target is left as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = {} if binary else {"encoding": "utf-8", "newline": newline}
    handle = tempfile.NamedTemporaryFile("wb" if binary else "w", dir=path.parent, prefix=path.name + ".",
                                         suffix=".tmp", delete=False, **text)
    temporary = Path(handle.name)
    try:
        with handle:
            os.chmod(handle.fileno(), _FILE_MODE)
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


@contextmanager
def exclusive_lock(lock_path: str | Path) -> Iterator[None]:
    """Exclusive against every other process (and thread) holding the same lock file: an
    ``flock`` on ``lock_path``, created if missing, released when the block ends."""
    lock_path = Path(lock_path)
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def write_text_atomic(path: str | Path, text: str) -> None:
    with atomic_writer(path) as handle:
        handle.write(text)


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    with atomic_writer(path, binary=True) as handle:
        handle.write(data)


def write_json_atomic(path: str | Path, payload: Any, indent: int | None = 2) -> None:
    write_text_atomic(path, json.dumps(payload, indent=indent, ensure_ascii=False))


def write_files_atomic(directory: str | Path, files: Mapping[str, tuple[str, str]]) -> dict[str, Path]:
    """Write ``{kind: (file name, text)}`` into ``directory``, each atomically; their paths by kind."""
    paths = {kind: Path(directory) / name for kind, (name, _) in files.items()}
    for kind, (_, text) in files.items():
        write_text_atomic(paths[kind], text)
    return paths
