"""The kind of page a document is, kept on each of its chunks (``page_kind`` in Chroma's metadata),
so a job can leave a kind of page out: synthesis, by default, asks no question of a changelog.

Four kinds, decided in this order (the first that fits). The figures were chosen on the
development half of ``benchmarks/doc_corpora.py`` (requests, mkdocs, git, stdlib); the test half
(flask, markdown, attrs) only judges them.

``api``
    An API reference. The ``stdlib`` source (docstrings) and Python files always; an HTML page
    with at least :data:`API_MIN_SHARE` (0.5) of its visible text inside API object descriptions
    (Sphinx's ``<dl class="py function">`` and the other object types of any domain, the
    ``<dl class="class">`` of Sphinx before 4, mkdocstrings' ``<div class="doc doc-object">``);
    a reStructuredText or Markdown source with an autodoc directive (``.. autoclass::``,
    ``{automodule}``, mkdocstrings' ``::: package.module``) or with at least that share of its
    text inside object directives (``.. function::``, ``.. py:class::``). The API pages have 0.82
    (requests' api.html) and 0.95 (mkdocs' dev-guide/api.html) of their text in object
    descriptions; the narrative page with the most has 0.43 (mkdocs' dev-guide/plugins.html,
    whose plugin events are mkdocstrings entries among prose), the next 0.16.
``changelog``
    Release history: a file or folder named as in :data:`CHANGELOG_NAMES` (changelog, changes,
    history, news, release notes, what's new, upgrading, migration, ``release-3.1``...), a page
    whose title is one (:data:`CHANGELOG_TITLE`: "Changelog", "Release Notes", "What's New in
    3.12", "Upgrading to 2.0"...), or a page that is mostly version headings: at least
    :data:`VERSION_HEADINGS_MIN` (3) section headings, at least :data:`VERSION_HEADINGS_MIN_SHARE`
    (0.5) of them a version ("2.28.1 (2022-06-29)", "Version 2.2.3", "v1.0"). Requests' "Community
    Updates" (community/updates.html: 147 of its 149 section headings are versions) is one by the
    last rule, mkdocs' about/release-notes.html by its name; no other page of the half has a
    version heading.
``index``
    A page that is mostly links: a toctree or landing page with little prose. At least
    :data:`INDEX_MIN_LINK_SHARE` (0.5) of its text is link text (a toctree's entries counted,
    though cleaning hides them), and at most :data:`INDEX_MAX_PROSE_CHARS` (2,000) non-space
    characters are not. Requests' index.html (0.54 of its text in links, 1,557 characters of
    prose) and community/out-there.html (0.55, a list of articles) are; the narrative pages with
    the most links have 0.40 (requests' dev/authors.html, contributors' names linked among
    prose) and 0.37 (mkdocs' user-guide/index.html, a paragraph and a short list of links: a
    landing page these rules keep narrative).
``narrative``
    Everything else: guides, tutorials, explanations, command manuals (all of git-doc).

A chunk without a ``page_kind`` (a collection ingested before page kinds) counts as narrative
(:func:`chunk_page_kind`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal

PageKind = Literal["narrative", "api", "changelog", "index"]
PAGE_KINDS: tuple[PageKind, ...] = ("narrative", "api", "changelog", "index")
DEFAULT_PAGE_KIND: PageKind = "narrative"  # a chunk stored without one

API_MIN_SHARE = 0.5
VERSION_HEADINGS_MIN = 3
VERSION_HEADINGS_MIN_SHARE = 0.5
INDEX_MIN_LINK_SHARE = 0.5
INDEX_MAX_PROSE_CHARS = 2000

CHANGELOG_NAMES = re.compile(
    r"^(?:changes?|changelogs?|change_?log|history|news|release_?notes?|relnotes|releases?|release_?history"
    r"|whats_?new|upgrad(?:e|ing)|migrat(?:e|ing|ion))(?:_?v?\d[\w.]*)?$"
)
CHANGELOG_TITLE = re.compile(
    r"^(?:the\s+)?(?:change\s*log|changes|history(?!\s+of\b)|news|release\s+(?:notes|history)|version\s+history"
    r"|what['’]?s\s+new|upgrad(?:e|ing)|migrat(?:ing|ion))\b",
    re.I,
)
VERSION_HEADING = re.compile(r"^\W*(?:(?:version|release|v)\s*)?\d+\.\d+(?:\.\d+)*(?:[a-z]+\d*)?(?![\w.])", re.I)

# Source markup: autodoc directives (RST and MyST) and mkdocstrings' identifiers; object directives.
_AUTODOC = re.compile(r"^\s*(?:\.\.\s+auto\w+::|```+\s*\{auto\w+\}|:::\s+[\w.]+\s*$)", re.M)
_OBJECT_DIRECTIVE = re.compile(
    r"^(\s*)\.\.\s+(?:py:)?(?:function|class|method|attribute|exception|data|decorator"
    r"|classmethod|staticmethod|property)::"
)
_TOCTREE = re.compile(r"^(\s*)(?:\.\.\s+toctree::|```+\s*\{toctree\})")
_MD_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])+)\]\([^)]*\)|\[([^\]]+)\]\[[^\]]*\]")
_RST_LINK = re.compile(r"`([^`<]+)(?:<[^>]+>)?`__?|:(?:std:)?(?:doc|ref|any):`([^`<]+)(?:<[^>]+>)?`")


@dataclass
class PageProfile:
    """Measures of a page's text in non-space characters: all of it, what sits in API object
    descriptions, in links (a toctree's entries counted, though hidden), and in a toctree alone."""

    text_chars: int = 0
    api_chars: int = 0
    api_objects: int = 0
    link_chars: int = 0
    links: int = 0
    toctree_chars: int = 0
    autodoc: bool = False  # a source with an autodoc directive (its text comes from the code)


def page_kind(
    path: str, kind: str, title: str, headings: Sequence[Sequence[Any]], profile: PageProfile | None
) -> PageKind:
    """The page kind of a document (see the module docstring): ``path`` relative to its corpus,
    ``kind`` the document kind, ``headings`` its ``[offset, level, title]``, ``profile`` its measures
    (:func:`source_profile` of a source, ``tools.text.html_text.html_page``'s of a page; None: none taken)."""
    if kind in ("stdlib", "python"):
        return "api"
    if profile is not None and is_api_page(profile):
        return "api"
    if is_changelog(path, title, headings):
        return "changelog"
    if profile is not None and is_index_page(profile):
        return "index"
    return "narrative"


def is_api_page(profile: PageProfile) -> bool:
    return profile.autodoc or (profile.api_objects > 0 and profile.api_chars >= API_MIN_SHARE * profile.text_chars)


def is_changelog(path: str, title: str, headings: Sequence[Sequence[Any]]) -> bool:
    parts = PurePosixPath(path.lower()).parts
    names = [*parts[:-1], _stem(parts[-1])] if parts else []
    if any(CHANGELOG_NAMES.match(re.sub(r"[\s'’.-]+", "_", name).strip("_")) for name in names):
        return True
    first = next((str(heading[2]) for heading in headings if str(heading[2]).strip()), title)
    if CHANGELOG_TITLE.match(first.strip()) or CHANGELOG_TITLE.match(title.strip()):
        return True
    sections = [str(heading[2]).strip() for heading in headings if int(heading[1]) >= 2 and str(heading[2]).strip()]
    versions = sum(1 for heading in sections if VERSION_HEADING.match(heading))
    return versions >= VERSION_HEADINGS_MIN and versions >= VERSION_HEADINGS_MIN_SHARE * len(sections)


def is_index_page(profile: PageProfile) -> bool:
    total = profile.text_chars + profile.toctree_chars
    prose = total - profile.link_chars
    return total > 0 and profile.link_chars >= INDEX_MIN_LINK_SHARE * total and prose <= INDEX_MAX_PROSE_CHARS


def _stem(name: str) -> str:
    for suffix in (".rst.txt", ".md.txt", ".txt", ".html", ".htm", ".md", ".markdown", ".rst", ".ipynb", ".py"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def source_profile(text: str, kind: str) -> PageProfile | None:
    """The measures of a reStructuredText or Markdown (MyST) source: its autodoc directives, the
    lines inside object directives (as API characters), its link texts and toctree entries."""
    if kind not in ("rst", "markdown"):
        return None
    profile = PageProfile(autodoc=bool(_AUTODOC.search(text)))
    lines = text.split("\n")
    block: tuple[str, int] | None = None  # ("api" | "toctree", the directive's indentation)
    for line in lines:
        chars = len("".join(line.split()))
        if not chars:
            continue
        indent = len(line) - len(line.lstrip())
        if block is not None and indent <= block[1] and not line.lstrip().startswith(("```", ":")):
            block = None
        if block is None and (opened := _OBJECT_DIRECTIVE.match(line) or _TOCTREE.match(line)):
            block = ("api" if _OBJECT_DIRECTIVE.match(line) else "toctree", len(opened.group(1)))
            profile.api_objects += block[0] == "api"
        if block is not None and block[0] == "toctree":
            if not line.lstrip().startswith((":", "..", "```")):
                profile.toctree_chars += chars
                profile.link_chars += chars
                profile.links += 1
            continue
        profile.text_chars += chars
        profile.api_chars += chars if block is not None else 0
        for match in (_MD_LINK if kind == "markdown" else _RST_LINK).finditer(line):  # the link, its target too
            profile.links += 1
            profile.link_chars += len("".join(match.group(0).split()))
    return profile


def chunk_page_kind(metadata: Mapping[str, Any] | None) -> str:
    """A stored chunk's page kind: its ``page_kind``, else narrative (ingested before page kinds)."""
    return str((metadata or {}).get("page_kind") or DEFAULT_PAGE_KIND)
