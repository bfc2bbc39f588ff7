"""Built documentation trees: which files of a Sphinx or MkDocs build (or an AsciiDoc build's
folder) are its pages, and why each other file is not one.

A built tree ships each page once as HTML and, beside it, what a reader never sees as a page:

* **Sphinx** (a folder with ``_static/`` and ``searchindex.js``, ``objects.inv`` or ``_sources/``):
  ``_sources/`` (each page's source again, ``X.rst.txt`` or ``X.md.txt``), ``_static/``, ``_images/``,
  ``_downloads/``, ``_modules/`` (viewcode's highlighted source listings), ``search.html``,
  ``genindex*.html``, ``*-modindex.html`` (``py-modindex.html``), ``404.html``, and the search index
  and object inventory.
* **MkDocs** (a folder with ``search/search_index.json``, or with ``sitemap.xml`` or ``404.html``
  beside ``assets/``, ``css/`` or ``search/``): ``search/`` (the search index and its scripts),
  ``search.html``, ``404.html``, ``sitemap.xml``, and the theme's ``assets/``, ``css/``, ``js/``,
  ``fonts/``, ``img/`` and ``static/``.
* **Any folder**: a page's source beside its built page (``X.txt``, ``X.rst.txt``, ``X.md.txt``,
  ``X.md``, ``X.rst``, ``X.adoc`` next to ``X.html``: git-doc ships each AsciiDoc source so), and
  a ``.txt`` with no page of its own that an AsciiDoc source of the tree includes
  (``include::diff-options.txt[]``, ``include::../NAME.txt[]``, ``include::{build_dir}/NAME.txt[]``;
  the sources looked at are the ``.txt`` files of folders of AsciiDoc pages, whose generator
  ``<meta>`` says AsciiDoc): its text is in the pages that include it. A ``.txt`` without a page
  that nothing includes is read (git's technical notes, such as ``technical/sparse-index.txt``).

:class:`BuiltTrees` answers, for a file of a walked folder, the reason to skip it (one of the
``*_REASON`` strings, which the ingest summary groups by) or None for a page to read.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

SPHINX, MKDOCS = "sphinx", "mkdocs"

SPHINX_SOURCE_REASON = "Sphinx page source (the built page is read)"
STATIC_ASSET_REASON = "static asset"
DOWNLOAD_REASON = "download linked from a page (not a page)"
VIEWCODE_REASON = "highlighted source listing (Sphinx viewcode; the API pages are read)"
SEARCH_REASON = "search page or search index"
GENERAL_INDEX_REASON = "general index"
MODULE_INDEX_REASON = "module index"
NOT_FOUND_REASON = "not-found page (404)"
BUILD_OUTPUT_REASON = "build output, not a page (object inventory, sitemap)"
SOURCE_BESIDE_PAGE_REASON = "page source beside its built page (the built page is read)"
ASCIIDOC_INCLUDE_REASON = "AsciiDoc include (its text is in the built pages that include it)"

SPHINX_FOLDERS = {
    "_sources": SPHINX_SOURCE_REASON,
    "_static": STATIC_ASSET_REASON,
    "_images": STATIC_ASSET_REASON,
    "_downloads": DOWNLOAD_REASON,
    "_modules": VIEWCODE_REASON,
}
MKDOCS_FOLDERS = {
    "search": SEARCH_REASON,
    **{
        name: STATIC_ASSET_REASON
        for name in (
            "assets",
            "css",
            "js",
            "fonts",
            "img",
            "images",
            "static",
            "webfonts",
            "javascripts",
            "stylesheets",
        )
    },
}
BUILD_PAGES = {"search.html": SEARCH_REASON, "404.html": NOT_FOUND_REASON}
BUILD_OUTPUTS = {
    "searchindex.js": SEARCH_REASON,
    "objects.inv": BUILD_OUTPUT_REASON,
    "sitemap.xml": BUILD_OUTPUT_REASON,
    "sitemap.xml.gz": BUILD_OUTPUT_REASON,
}
PAGE_SUFFIXES = (".html", ".htm")
SOURCE_SUFFIXES = (".rst.txt", ".md.txt", ".txt", ".md", ".markdown", ".rst", ".adoc", ".asciidoc")
ASCIIDOC_INCLUDE = re.compile(r"^include::([^\[\s]+)\[", re.M)
ASCIIDOC_GENERATOR = re.compile(r"<meta\s+name=[\"']generator[\"']\s+content=[\"']Asciidoc(?:tor)?\b", re.I)
_ATTRIBUTE_PREFIX = re.compile(r"^(?:\{[^}]*\}/)+")


def build_kind(folder: Path | str) -> str | None:
    """``sphinx`` or ``mkdocs`` when ``folder`` is the root of such a build, else None."""
    folder = str(folder)

    def has(name: str) -> bool:
        return os.path.exists(os.path.join(folder, name))

    if os.path.isdir(os.path.join(folder, "_static")) and (
        has("searchindex.js") or has("objects.inv") or has("_sources")
    ):
        return SPHINX
    theme = any(os.path.isdir(os.path.join(folder, name)) for name in ("assets", "css", "search"))
    if has(os.path.join("search", "search_index.json")) or ((has("sitemap.xml") or has("404.html")) and theme):
        return MKDOCS
    return None


def source_stem(name: str) -> str | None:
    """``X`` for a source file named ``X.txt``, ``X.rst.txt``, ``X.md`` ... (else None)."""
    lowered = name.lower()
    return next((name[: -len(suffix)] for suffix in SOURCE_SUFFIXES if lowered.endswith(suffix)), None)


class BuiltTrees:
    """The skip rules of the built trees under one walked folder ``root`` (paths relative to it)."""

    def __init__(self, root: Path):
        self.root = root
        self._includes: frozenset[str] | None = None  # real paths the tree's AsciiDoc sources include
        self._builds: dict[Path, str | None] = {}  # folder → its build kind
        self._asciidoc: dict[Path, bool] = {}  # folder → is it an AsciiDoc build's

    def _build_kind(self, folder: Path) -> str | None:
        if folder not in self._builds:
            self._builds[folder] = build_kind(folder)
        return self._builds[folder]

    def skip_reason(self, relative: Path) -> str | None:
        """Why the file at ``relative`` is not a page of its tree, or None when it is one to read."""
        if reason := self._build_reason(relative):
            return reason
        return self._beside_page_reason(relative)

    def _build_reason(self, relative: Path) -> str | None:
        parts = relative.parts
        for depth in range(len(parts) - 1, -1, -1):  # the nearest enclosing build decides
            kind = self._build_kind(self.root.joinpath(*parts[:depth]))
            if kind is not None:
                return _reason_in_build(kind, parts[depth:])
        return None

    def _beside_page_reason(self, relative: Path) -> str | None:
        folder = self.root / relative.parent
        stem = source_stem(relative.name)
        if stem is None:
            return None
        if _has_page(folder, stem):
            return SOURCE_BESIDE_PAGE_REASON
        if relative.name.lower().endswith(".txt") and os.path.realpath(self.root / relative) in self._included():
            return ASCIIDOC_INCLUDE_REASON
        return None

    def _asciidoc_build_folder(self, folder: Path) -> bool:
        if folder not in self._asciidoc:
            self._asciidoc[folder] = asciidoc_build_folder(folder)
        return self._asciidoc[folder]

    def _included(self) -> frozenset[str]:
        """What the AsciiDoc sources of the tree's AsciiDoc folders include (read once, when first asked)."""
        if self._includes is None:
            found: set[str] = set()
            for folder, _, names in os.walk(self.root):
                if self._asciidoc_build_folder(Path(folder)):
                    for name in sorted(names):
                        if name.lower().endswith(".txt"):
                            found.update(asciidoc_includes(Path(folder) / name))
            self._includes = frozenset(found)
        return self._includes


def _reason_in_build(kind: str, parts: tuple[str, ...]) -> str | None:
    """The reason to skip a file at ``parts`` below the root of a ``kind`` build."""
    name = parts[-1].lower()
    top = parts[0] if len(parts) > 1 else None
    if kind == SPHINX and top in SPHINX_FOLDERS:
        return SPHINX_FOLDERS[top]
    if kind == MKDOCS and top in MKDOCS_FOLDERS:
        return MKDOCS_FOLDERS[top]
    if len(parts) == 1:
        if name in BUILD_PAGES:
            return BUILD_PAGES[name]
        if name in BUILD_OUTPUTS:
            return BUILD_OUTPUTS[name]
        if kind == SPHINX and name.startswith("genindex") and name.endswith(PAGE_SUFFIXES):
            return GENERAL_INDEX_REASON
        if kind == SPHINX and name.endswith(tuple(f"-modindex{suffix}" for suffix in PAGE_SUFFIXES)):
            return MODULE_INDEX_REASON
    return None


def _has_page(folder: Path, stem: str) -> bool:
    return any(os.path.isfile(folder / f"{stem}{suffix}") for suffix in PAGE_SUFFIXES)


def asciidoc_build_folder(folder: Path) -> bool:
    """Does this folder hold an AsciiDoc source beside its built page: ``X.txt`` and ``X.html``, the
    page made by AsciiDoc or Asciidoctor (its generator ``<meta>``; the first three pairs are looked at)?"""
    try:
        names = set(os.listdir(folder))
    except OSError:
        return False
    pages = sorted(f"{name[:-4]}.html" for name in names if name.endswith(".txt") and f"{name[:-4]}.html" in names)
    for page in pages[:3]:
        try:
            with open(folder / page, encoding="utf-8", errors="replace") as handle:
                head = handle.read(4096)
        except OSError:
            continue
        if ASCIIDOC_GENERATOR.search(head):
            return True
    return False


def asciidoc_includes(path: Path) -> set[str]:
    """The real paths of the files an AsciiDoc source includes (``include::NAME[]``, relative to
    its folder; a leading ``{attribute}/`` such as ``{build_dir}/`` is dropped)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    return {
        os.path.realpath(path.parent / _ATTRIBUTE_PREFIX.sub("", target))
        for target in ASCIIDOC_INCLUDE.findall(text)
        if "{" not in _ATTRIBUTE_PREFIX.sub("", target)
    }
