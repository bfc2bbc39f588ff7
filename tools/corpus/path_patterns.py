"""``--include`` / ``--exclude``: which files of a source folder an ingestion reads, by glob.

A pattern is matched against a file's path relative to the source folder it was found in
(``/``-separated), with :mod:`fnmatch` semantics (``*`` matches any characters, ``/`` included;
``?``, ``[seq]``), and ``**/`` also matching no folder at all (``**/changelog.html`` matches a
top-level ``changelog.html``). A pattern that matches a folder matches every file under it
(``--exclude _build``, ``--include user``). With include patterns, a file is read only when one
matches it; an exclude pattern that matches it skips it. Either way the file is listed as
skipped, with the pattern. A pattern that matched nothing is reported: :meth:`PathPatterns.unmatched`.
"""

from __future__ import annotations

import fnmatch
import itertools
from collections.abc import Sequence
from pathlib import PurePosixPath

NOT_INCLUDED_REASON = "not matched by any --include pattern"


def excluded_reason(pattern: str) -> str:
    return f"excluded by --exclude {pattern}"


def glob_matches(pattern: str, path: str) -> bool:
    """Does ``pattern`` match the relative path ``path`` or a folder above it (see the module docstring)?"""
    parents = [str(parent) for parent in PurePosixPath(path).parents if str(parent) != "."]
    return any(
        fnmatch.fnmatchcase(candidate, variant) for variant in _variants(pattern) for candidate in (path, *parents)
    )


def _variants(pattern: str) -> list[str]:
    """The pattern with each ``**/`` kept or dropped (``**/`` may match no folder)."""
    pieces = pattern.split("**/")
    variants = []
    for kept in itertools.product((True, False), repeat=len(pieces) - 1):
        variant = pieces[0]
        for keep, piece in zip(kept, pieces[1:]):
            variant += ("**/" if keep else "") + piece
        variants.append(variant)
    return variants


class PathPatterns:
    """The include and exclude globs of one ingestion, and which of them matched a file."""

    def __init__(self, include: Sequence[str] = (), exclude: Sequence[str] = ()):
        self.include, self.exclude = tuple(include), tuple(exclude)
        self.matched: set[tuple[str, str]] = set()  # ("include" | "exclude", pattern)

    def __bool__(self) -> bool:
        return bool(self.include or self.exclude)

    def skip_reason(self, relative: str) -> str | None:
        """Why the file at ``relative`` (``/``-separated) is not read, or None."""
        included = not self.include
        for pattern in self.include:
            if glob_matches(pattern, relative):
                self.matched.add(("include", pattern))
                included = True
        excluded = [pattern for pattern in self.exclude if glob_matches(pattern, relative)]
        self.matched.update(("exclude", pattern) for pattern in excluded)
        if excluded:
            return excluded_reason(excluded[0])
        return None if included else NOT_INCLUDED_REASON

    def unmatched(self) -> list[str]:
        """A warning line for each pattern that matched no file."""
        return [
            f"--{option} {pattern} matched no file"
            for option, patterns in (("include", self.include), ("exclude", self.exclude))
            for pattern in patterns
            if (option, pattern) not in self.matched
        ]
