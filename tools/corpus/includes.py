"""MkDocs include lines: markdown-include's and mdx_include's ``{!path!}`` and pymdownx.snippets'
``--8<-- "path"``.

A MkDocs build puts the named file where the line stands: a tutorial's code examples are often
kept beside the docs (``docs_src/``) and shown this way. Markdown sources keep the line, and so
does a tree built without the extension (Debian's ``python-typer-doc``: 173 lines on 47 pages,
inside the code blocks the examples should fill). Read as text, the line is neither prose nor the
code it stands for.

Loading does what the build does (:func:`inline_includes`): a line whose file is in the tree being
ingested is replaced by the file's text (HTML-escaped in an HTML page), found as the extensions look
for it, from the page's folder and then from each folder above it up to the tree's root (their
``base_path`` is a setting of the site, often its docs folder). A file outside the tree is never read:
a page's text does not choose what of the machine is ingested. A line whose file is not found is
left out of the text and named (:class:`IncludeNotes`), so the summary says which pages lost their
examples and how to read them in. Line ranges are read as each extension writes them
(``{!file.py[ln:7-13]!}``, ``--8<-- "file.py:7:13"``). One level: a line inside an included file stays
as it is.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# The whole line, as the extensions require (in a built page, between the tags of the code block it
# stands in): markdown-include's {!path!} and mdx_include's {!> path !} (options after a "|" are not
# applied) and snippets' --8<-- "path" or 'path', with an optional ":start:end" line range.
TAGS = r"(?:<[^<>\n]+>)*"
INCLUDE_LINE = re.compile(
    rf"""^(?P<before>[ \t]*{TAGS})"""
    r"""(?:\{!(?:>|&gt;)?\s*(?P<braced>[^!{}<>|\n]+?)\s*(?:\|[^!{}\n]*)?!\}|-{2}8<-{2}[ \t]+(?P<quote>["'])(?P<snippet>[^"'<>\n]+)(?P=quote))"""
    rf"""(?P<after>{TAGS}[ \t]*)$""",
    re.MULTILINE,
)
SNIPPET_RANGE = re.compile(r"^(?P<path>.+?)(?::(?P<start>\d*)(?::(?P<end>\d*))?)?$")
# markdown-include's line ranges: {!file.py[ln:7-13]!}, [ln:3-], [ln:-5], [ln:2,5-6]
INCLUDE_RANGES = re.compile(r"^(?P<path>.+?)\[ln:(?P<ranges>[\d,\- ]+)\]$")
EXAMPLES_SHOWN = 3  # include lines a warning names


@dataclass(frozen=True)
class Included:
    """The page's text with its include lines done, and the targets of those not found."""

    text: str
    missing: tuple[str, ...] = ()


def inline_includes(text: str, page: Path, root: Path, escape: bool = False) -> Included:
    """``text`` (the page at ``page``, in the tree at ``root``) with each include line replaced by
    the text of the file it names, found from the page's folder upwards and inside ``root`` only,
    or left out when not found (its target then in ``missing``). ``escape``: the page is HTML."""
    if "{!" not in text and "--8<--" not in text:  # most pages: no pass over the text, no look at the disk
        return Included(text)
    missing: list[str] = []
    read = _reader(root.resolve())

    def replaced(match: re.Match[str]) -> str:
        target = match["braced"] or match["snippet"]
        included = _included_text(target, page.parent, root, read, snippet=match["snippet"] is not None)
        if included is None:
            missing.append(target)
            included = ""
        return match["before"] + (html.escape(included, quote=False) if escape else included) + match["after"]

    return Included(INCLUDE_LINE.sub(replaced, text), tuple(missing))


def _included_text(
    target: str, folder: Path, root: Path, read: Callable[[Path], str | None], snippet: bool
) -> str | None:
    """The text of ``target`` (its line ranges applied) from the first folder, from ``folder`` up to
    ``root``, where it is a file."""
    path, ranges = _ranged(target, snippet)
    for base in [folder, *folder.parents]:
        text = read(base / path)
        if text is not None:
            if not ranges:
                return text.rstrip("\n")
            lines = text.splitlines()
            return "\n".join(line for start, end in ranges for line in lines[start - 1 : end])
        if base == root or root not in base.parents:
            return None
    return None


def _ranged(target: str, snippet: bool) -> tuple[str, list[tuple[int, int | None]]]:
    """The path a target names and its line ranges, 1-based and inclusive (none: the whole file)."""
    if snippet:
        ranged = SNIPPET_RANGE.match(target)
        if ranged and (ranged["start"] or ranged["end"]):
            start = int(ranged["start"]) if ranged["start"] else 1
            return ranged["path"], [(start, int(ranged["end"]) if ranged["end"] else None)]
        return ranged["path"] if ranged else target, []
    if not (ranged := INCLUDE_RANGES.match(target)):
        return target, []
    ranges: list[tuple[int, int | None]] = []
    for part in ranged["ranges"].replace(" ", "").split(","):
        first, dash, last = part.partition("-")
        start = int(first) if first else 1
        ranges.append((start, (int(last) if last else None) if dash else start))
    return ranged["path"], ranges


def _reader(root: Path) -> Callable[[Path], str | None]:
    """Reads a UTF-8 file inside ``root`` (after links are followed), else None."""

    def read(path: Path) -> str | None:
        try:
            real = path.resolve()
            if (root != real and root not in real.parents) or not real.is_file():
                return None
            return real.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            return None

    return read


@dataclass
class IncludeNotes:
    """The include lines whose files were not found, per page, for the run's warnings."""

    pages: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def note(self, page: str, missing: tuple[str, ...]) -> None:
        if missing:
            self.pages[page] = missing

    def warnings(self) -> list[str]:
        """One warning for all pages (empty when every include line was read)."""
        if not self.pages:
            return []
        lines = sum(len(missing) for missing in self.pages.values())
        shown = "; ".join(f"{missing[0]!r} in {page}" for page, missing in list(self.pages.items())[:EXAMPLES_SHOWN])
        more = ", …" if len(self.pages) > EXAMPLES_SHOWN else ""
        return [
            f"{len(self.pages)} page(s) include {lines} file(s) the tree does not hold (MkDocs include lines: "
            f"{shown}{more}); the lines are left out, and the code or text they stand for is missing from "
            "the corpus: ingest the folder that holds both the pages and the included files "
            "(choose the pages with --include) to read them in"
        ]
