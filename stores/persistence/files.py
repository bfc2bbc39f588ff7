"""The one atomic writer: a file is replaced whole or not at all.

Writes go to a temporary file beside the target, are synced to disk, then renamed over it:
a crash mid-write leaves the previous file (or none), never a half-written one, so a node
re-run after a crash writes the same file again.

Each writer has its own temporary file: several threads or processes writing the same path at
once (a run and a second start of it, before the claim refuses the second) never rename one
another's temporary away; the last rename wins, and every reader sees one writer's complete file.

A writer killed mid-write (SIGKILL, a power cut) leaves nothing behind where the file system
can make a file without a name (Linux's ``O_TMPFILE``: the temporary is named only when it is
complete, the instant before it replaces the target). Elsewhere it is named
``<target>.<8 characters>.tmp`` from the start; a writer holds an ``flock`` on its temporary until
it is renamed, so the next write of the same target removes the temporaries of that naming
whose writer is gone (no lock, untouched for a while) and never a live one's: a killed
``publish`` left a 0-byte ``corpus.parquet.<random>.tmp`` that every later run kept.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import tempfile
import time
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


STALE_AFTER_S = 60.0  # a temporary no writer holds and untouched this long is a killed writer's


@contextmanager
def atomic_writer(path: str | Path, newline: str | None = None, *, binary: bool = False) -> Iterator[IO[Any]]:
    """A handle (UTF-8 text, or bytes with ``binary=True``) whose content replaces ``path``
    when the block ends without error; on an error the target is left as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    handle, temporary = _temporary(path, binary, {} if binary else {"encoding": "utf-8", "newline": newline})
    try:
        with handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)  # held until the rename: a sweeper leaves it alone
            os.chmod(handle.fileno(), _FILE_MODE)
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
            if temporary is None:
                temporary = _name_unnamed(handle, path)
            os.replace(temporary, path)
    except BaseException:
        if temporary is not None:
            temporary.unlink(missing_ok=True)
        raise


def _temporary(path: Path, binary: bool, text: dict[str, Any]) -> tuple[IO[Any], Path | None]:
    """A handle on a new file in ``path``'s folder: without a name (None) where the file system can
    make one, else named ``<target>.<random>.tmp``."""
    mode = "wb" if binary else "w"
    try:
        descriptor = os.open(path.parent, os.O_TMPFILE | os.O_WRONLY, _FILE_MODE)
    except (AttributeError, OSError):  # not Linux, or a file system without unnamed files
        # returned open: the caller writes, closes and renames it
        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115
            mode, dir=path.parent, prefix=f"{path.name}.", suffix=".tmp", delete=False, **text
        )
        return handle, Path(handle.name)
    return os.fdopen(descriptor, mode, **text), None


def _name_unnamed(handle: IO[Any], path: Path) -> Path:
    """Give the complete unnamed file its temporary name (to rename it over ``path`` at once):
    ``linkat`` of its /proc/self/fd entry, the way the Linux manual gives for ``O_TMPFILE``."""
    name = path.parent / f"{path.name}.{secrets.token_hex(4)}.tmp"
    root = os.open("/", os.O_RDONLY)
    try:  # a source relative to a folder descriptor makes os.link call linkat, which follows the entry
        os.link(f"proc/self/fd/{handle.fileno()}", name, src_dir_fd=root, follow_symlinks=True)
    finally:
        os.close(root)
    return name


def remove_stale_temporaries(path: Path) -> None:
    """Remove the temporaries of ``path`` (``<name>.<8 characters>.tmp``) left by writers that were
    killed: those no writer holds a lock on and untouched for :data:`STALE_AFTER_S` seconds (a
    writer that has just made its temporary has not locked it yet)."""
    pattern = re.compile(re.escape(path.name) + r"\.[A-Za-z0-9_]{8}\.tmp")
    try:
        candidates = [entry.path for entry in os.scandir(path.parent) if pattern.fullmatch(entry.name)]
    except OSError:
        return
    for candidate in candidates:
        try:
            descriptor = os.open(candidate, os.O_RDONLY)
        except OSError:
            continue  # gone already: its writer renamed it
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if time.time() - os.fstat(descriptor).st_mtime >= STALE_AFTER_S:
                os.unlink(candidate)
        except OSError:
            pass  # BlockingIOError: a live writer's
        finally:
            os.close(descriptor)


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
