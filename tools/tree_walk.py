"""Walk a source folder: every file under it once per path, in order, with its real path, and the
symbolic links to folders that are not followed, each with its reason.

Names starting with a dot (``.git``, ``.buildinfo``) are not corpus and are not walked. A symbolic
link to a folder inside the source folder is followed (its files are listed under the link's
path, with the real path they share with the files they are: the loader reads each real file
once and lists the others as links to it); one to a folder outside it, or to a folder that holds
the link (a loop), is listed and not followed. A symbolic link to a file is a file (its real path
tells the loader whether that file was already read); a broken one is listed. A FIFO, socket or
device (or a link to one) is listed and never opened; so is a folder that cannot be read.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.tools.corpus.documents import SkippedFile

LINK_OUTSIDE_REASON = "symbolic link to a folder outside the source folder (not followed)"
LINK_LOOP_REASON = "symbolic link to a folder that holds it (not followed)"
BROKEN_LINK_REASON = "broken symbolic link"


@dataclass(frozen=True)
class WalkedFile:
    path: Path  # the source folder joined with ``relative``
    relative: Path  # as walked: through a link, the link's path
    real: str  # the real path (links resolved)
    linked: bool  # reached through a symbolic link (the file's or a folder's above it)


@dataclass
class WalkedTree:
    files: list[WalkedFile] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


def walk_tree(root: Path) -> WalkedTree:
    """Every file under ``root`` (see the module docstring), depth first in name order."""
    tree = WalkedTree()
    root_real = os.path.realpath(root)
    _visit(tree, root, Path(), root_real, root_real, False, frozenset({root_real}))
    return tree


def _visit(
    tree: WalkedTree, root: Path, relative: Path, folder_real: str, root_real: str, linked: bool, chain: frozenset[str]
) -> None:
    try:
        entries = sorted(os.scandir(root / relative), key=lambda entry: entry.name)
    except OSError as error:
        tree.skipped.append(SkippedFile(str(root / relative), f"unreadable folder: {error.strerror or error}"))
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue  # hidden: .git, .buildinfo, .doctrees
        walked = relative / entry.name
        path = root / walked
        if entry.is_symlink():
            real = os.path.realpath(entry.path)
            if os.path.isdir(real):
                if not (real == root_real or real.startswith(root_real + os.sep)):
                    tree.skipped.append(SkippedFile(str(path), LINK_OUTSIDE_REASON))
                elif real in chain:  # the folder holding the link, or one above it
                    tree.skipped.append(SkippedFile(str(path), LINK_LOOP_REASON))
                else:
                    _visit(tree, root, walked, real, root_real, True, chain | {real})
            elif os.path.isfile(real):
                tree.files.append(WalkedFile(path, walked, real, True))
            elif os.path.lexists(real):
                reason = f"symbolic link to {_special_kind(real)}, not a regular file"
                tree.skipped.append(SkippedFile(str(path), reason))
            else:
                tree.skipped.append(SkippedFile(str(path), BROKEN_LINK_REASON))
        elif entry.is_dir(follow_symlinks=False):
            real = os.path.join(folder_real, entry.name)
            _visit(tree, root, walked, real, root_real, linked, chain | {real})
        elif entry.is_file(follow_symlinks=False):
            tree.files.append(WalkedFile(path, walked, os.path.join(folder_real, entry.name), linked))
        else:  # reading a FIFO would wait for a writer forever; a device is no document
            tree.skipped.append(SkippedFile(str(path), f"{_special_kind(entry.path)}, not a regular file"))


def _special_kind(path: str) -> str:
    """What a file that is neither a regular file nor a folder is, in words."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        return f"an unreadable file ({error.strerror or error})"
    kinds = (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((name for test, name in kinds if test(mode)), "a special file")
