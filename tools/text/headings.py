"""Headings through cleaning: markers in the cleaned text, then a list of offsets.

Cleaning rewrites a document many times (markup stripped, lines dropped, whitespace
collapsed), so it cannot track character offsets of headings as it goes. Instead each
converter prefixes a heading's line with a marker (two private-use characters around
the level, optionally a title): ``\\ue000 2 \\ue001 Installation``. The markers travel
with their line through every later step, and :func:`split_headings` removes them from
the final text and returns ``[offset, level, title]`` for each. A marker with an explicit
title (``\\ue000 2:JSONDecoder.decode \\ue001``) names a section without a heading line of
its own (a docstring's object); an empty explicit title closes the sections at that level.

:func:`heading_path` gives the headings in force at an offset: page title › section ›
subsection, each the nearest heading above at its level.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Any

MARK_START, MARK_END = "\ue000", "\ue001"
PATH_SEPARATOR = " › "
_MARKER = re.compile(f"{MARK_START}(\\d)(?::([^{MARK_END}]*))?{MARK_END}")

Heading = list[Any]  # [offset: int, level: int, title: str] (a list: it round-trips through JSON)


def heading_marker(level: int, title: str | None = None) -> str:
    """The marker put before a heading's line; ``title`` names a section with no line."""
    named = "" if title is None else ":" + title.replace(MARK_END, "")
    return f"{MARK_START}{min(max(level, 1), 9)}{named}{MARK_END}"


def strip_markers(text: str) -> str:
    return _MARKER.sub("", text).replace(MARK_START, "").replace(MARK_END, "")


def split_headings(marked: str) -> tuple[str, list[Heading]]:
    """The text without markers, and each marked heading as ``[offset, level, title]``."""
    headings: list[Heading] = []
    out: list[str] = []
    offset = 0
    for line in marked.split("\n"):
        if MARK_START in line:
            markers = list(_MARKER.finditer(line))
            plain = strip_markers(line)
            for marker in markers:
                title = marker.group(2) if marker.group(2) is not None else plain.strip()
                headings.append([offset, int(marker.group(1)), title])
            line = plain
        out.append(line)
        offset += len(line) + 1
    return "\n".join(out), headings


def heading_path(headings: Sequence[Heading], offset: int) -> list[str]:
    """Titles of the headings in force at ``offset``, outermost first."""
    by_level: dict[int, str] = {}
    for start, level, title in headings:
        if start > offset:
            break
        by_level = {lvl: text for lvl, text in by_level.items() if lvl < level}
        if title:
            by_level[level] = title
    return [by_level[level] for level in sorted(by_level)]


def mark_lines(text: str, markers: dict[int, list[str]]) -> str:
    """Prefix the lines numbered in ``markers`` (0-based) with their markers."""
    lines = text.split("\n")
    for index, prefixes in markers.items():
        if 0 <= index < len(lines):
            lines[index] = "".join(prefixes) + lines[index]
    return "\n".join(lines)


def mark_python_structure(code: str, module: str) -> str:
    """Mark the module (level 1) and each class, function and method (level 2, by
    qualified name: ``JSONDecoder.decode``); code after a definition falls back to its
    enclosing one. Code that does not parse gets the module marker only."""
    markers: dict[int, list[str]] = {0: [heading_marker(1, module)]}
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return mark_lines(code, markers)

    def visit(body: list[ast.stmt], enclosing: str) -> None:
        for node in body:
            if not isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            name = f"{enclosing}.{node.name}" if enclosing else node.name
            first_line = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            markers.setdefault(first_line, []).append(heading_marker(2, name))
            if isinstance(node, ast.ClassDef):
                visit(node.body, name)
            if node.end_lineno is not None:  # the line after the definition is its parent's again
                markers.setdefault(node.end_lineno, []).append(heading_marker(2, enclosing))

    visit(tree.body, "")  # markers are appended in source order: an end before the next start
    return mark_lines(code, markers)


def mark_docstring_sections(text: str, module: str) -> str:
    """Mark the module and each ``module.Object.member(signature)`` line that starts a
    paragraph of a standard-library document (see ``loaders.module_documentation``)."""
    header = re.compile(rf"^{re.escape(module)}\.([A-Za-z_][\w.]*)(?:\(.*\))?$")
    lines = text.split("\n")
    markers: dict[int, list[str]] = {0: [heading_marker(1, module)]}
    for index, line in enumerate(lines):
        if (index == 0 or not lines[index - 1].strip()) and (match := header.match(line)):
            markers.setdefault(index, []).append(heading_marker(2, match.group(1)))
    return mark_lines(text, markers)
