"""HTML to the text a reader sees: visible text by paragraph, headings marked, code kept.

Hidden: script, style, head, navigation, header, footer, forms, and elements whose class
or role says they are navigation (Sphinx's sidebars, related bars, ``¶`` header links,
viewcode's ``[source]`` links, toctree wrappers, breadcrumbs, a numbered toctree's section numbers;
``role="navigation"``).
``<h1>``–``<h6>`` become heading markers (``tools.text.headings``); ``<pre>`` keeps its lines, fenced
with the language that a Sphinx ``highlight-LANG`` or ``language-LANG`` class names.

A page the build left as Markdown source (no heading of its own, one-line paragraphs such as ``## Usage``:
Debian's python-black-doc, built without the MyST parser) is read by those as its headings, its emphasis marks
dropped; a heading of a stray closing bracket names no section.

An API entry of a Sphinx build (``<dt class="sig" id="requests.Response.close">close()</dt>``)
becomes one line that names it fully, ``requests.Response.close()``: the page shows the short
name under its class, which the text alone would lose. A table row becomes one line with its
cells between ``|`` (``| NormalizeWhiteSpace | built-in | Normalizes whitespace |``), so a
reader (and the chunk's units) still sees cells, not one run-on sentence.

:func:`html_page` also measures the page for its page kind (``tools.text.page_kinds``): how much of
its visible text sits inside API object descriptions (Sphinx's ``<dl class="py function">``, the
``<dl class="class">`` of Sphinx before 4, mkdocstrings' ``<div class="doc doc-object">``) and
inside links, counting a toctree's entries (hidden from the text, but the page's links all the same).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from benchsmith.tools.text.headings import MARK_END, MARK_START, heading_marker
from benchsmith.tools.text.page_kinds import PageProfile
from benchsmith.tools.text.sphinx_markup import fenced_code

HIDDEN_TAGS = {
    "script",
    "style",
    "nav",
    "header",
    "footer",
    "aside",
    "noscript",
    "form",
    "template",
    "svg",
    "head",
    "button",
}
HIDDEN_CLASSES = {
    "headerlink",
    "sphinxsidebar",
    "sphinxsidebarwrapper",
    "related",
    "toctree-wrapper",
    "breadcrumbs",
    "wy-breadcrumbs",
    "wy-nav-side",
    "rst-footer-buttons",
    "prev-next-area",
    "bd-sidebar-primary",
    "bd-sidebar-secondary",
    "bd-toc",
    "skip-link",
    "copybtn",
    "linenos",
    "footer",
    "navbar",
    "viewcode-link",
    "section-number",  # Sphinx's numbering of a numbered toctree's headings ("8.6.4.7. "): the manual's, no words
}
HIDDEN_ROLES = {"navigation", "search", "banner", "contentinfo"}
BLOCK_TAGS = {
    "p",
    "div",
    "section",
    "article",
    "main",
    "br",
    "li",
    "ul",
    "ol",
    "table",
    "pre",
    "blockquote",
    "dt",
    "dd",
    "hr",
    "dl",
    "figure",
    "figcaption",
    "caption",
    "details",
    "summary",
}
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
HEADINGS = {f"h{level}": level for level in range(1, 7)}
_MARKER_SPACE = re.compile(f"{MARK_END} +")  # a heading's text starts right after its marker
_LANGUAGE_CLASS = re.compile(r"\b(?:highlight|language|lang)-([\w+#.-]+)")
# An API object description: Sphinx's <dl class="py function"> (any domain object: "py", "c", "cpp", "js"...),
# Sphinx < 4's <dl class="function">, mkdocstrings' <div class="doc doc-object doc-class">.
API_OBJECT_TYPES = {
    "class",
    "function",
    "method",
    "attribute",
    "exception",
    "data",
    "classmethod",
    "staticmethod",
    "property",
    "decorator",
    "decoratormethod",
    "module",
    "type",
    "macro",
    "member",
    "struct",
    "enum",
    "var",
}
API_DOMAINS = {"py", "c", "cpp", "js", "rst"}
TOCTREE_CLASSES = {"toctree-wrapper"}


def is_api_object(tag: str, classes: set[str]) -> bool:
    """Is this element an API object description (see :data:`API_OBJECT_TYPES`)?"""
    if tag == "div":
        return {"doc", "doc-object"} <= classes
    return (
        tag == "dl"
        and bool(classes & API_OBJECT_TYPES)
        and (not classes - API_OBJECT_TYPES - API_DOMAINS - {"simple", "objdesc"})
    )


class _VisibleTextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.segments: list[tuple[str, str]] = [("text", "")]  # ("text" | "code" | "code:LANG", content)
        self.hidden: list[str] = []  # the tags open inside a hidden element, outermost first
        self.in_pre = 0
        self.language = ""
        self.entry: tuple[str, int] | None = None  # the qualified name of the API entry being read, where it starts
        self.row: list[str] | None = None  # the cells of the table row being read
        self.profile = PageProfile()
        self.api: list[str] = []  # the tags open inside an API object description
        self.toctree: list[str] = []  # the tags open inside a toctree (hidden, but its links count)
        self.in_link = 0

    def _append(self, kind: str, value: str) -> None:
        if self.segments[-1][0] == kind:
            self.segments[-1] = (kind, self.segments[-1][1] + value)
        else:
            self.segments.append((kind, value))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        classes = set(attributes.get("class", "").split())
        self._measure_start(tag, attributes, classes)
        if self.hidden:
            if tag not in VOID_TAGS:
                self.hidden.append(tag)
            return
        if (
            tag in HIDDEN_TAGS
            or classes & HIDDEN_CLASSES
            or attributes.get("role") in HIDDEN_ROLES
            or attributes.get("aria-hidden") == "true"
        ):
            if tag not in VOID_TAGS:
                self.hidden.append(tag)
            return
        if language := _LANGUAGE_CLASS.search(attributes.get("class", "")):
            self.language = language.group(1)
        if tag == "pre":
            self.in_pre += 1
            if self.in_pre == 1:
                self.segments.append((f"code:{self.language}", ""))
        elif tag in HEADINGS and not self.in_pre:
            self._append("text", f"\n\n{heading_marker(HEADINGS[tag])}")
        elif tag == "dt" and "sig" in classes and attributes.get("id") and not self.in_pre:
            self._append("text", "\n\n")
            self.entry = (attributes["id"], len(self.segments[-1][1]))
        elif tag == "tr" and not self.in_pre:
            self._append("text", "\n\n")
            self.row = []
        elif tag in ("td", "th") and self.row is not None and not self.in_pre:
            self._append("text", "\ue002")  # a cell boundary, made "|" when the row ends
        elif tag in BLOCK_TAGS and not self.in_pre:
            self._append("text", "\n\n")
        elif tag in ("td", "th") and not self.in_pre:
            self._append("text", " ")

    def _measure_start(self, tag: str, attributes: dict[str, str], classes: set[str]) -> None:
        if tag in VOID_TAGS:
            return
        if tag == "a" and attributes.get("href") and (self.toctree or not self.hidden):
            self.in_link += 1
            self.profile.links += 1
        if self.api:
            self.api.append(tag)
        elif not self.hidden and is_api_object(tag, classes):
            self.api.append(tag)
            self.profile.api_objects += 1
        if self.toctree or (not self.hidden and classes & TOCTREE_CLASSES):
            self.toctree.append(tag)

    def _measure_end(self, tag: str) -> None:
        if tag == "a" and self.in_link:
            self.in_link -= 1
        for stack in (self.api, self.toctree):
            if tag in stack:
                while stack and stack.pop() != tag:
                    pass

    def _measure_data(self, data: str) -> None:
        chars = len("".join(data.split()))
        if not chars:
            return
        if self.toctree and self.hidden:
            self.profile.toctree_chars += chars
            self.profile.link_chars += chars if self.in_link else 0
            return
        if self.hidden:
            return
        self.profile.text_chars += chars
        self.profile.api_chars += chars if self.api else 0
        self.profile.link_chars += chars if self.in_link else 0

    def handle_endtag(self, tag: str) -> None:
        self._measure_end(tag)
        if self.hidden:
            if tag in self.hidden:  # close up to the matching open tag (tolerates unclosed children)
                while self.hidden and self.hidden.pop() != tag:
                    pass
            return
        if tag == "pre" and self.in_pre:
            self.in_pre -= 1
            if not self.in_pre:
                self.segments.append(("text", "\n\n"))
                self.language = ""
        elif tag == "dt" and self.entry is not None and not self.in_pre:
            self._name_entry()
            self._append("text", "\n\n")
        elif tag == "tr" and self.row is not None and not self.in_pre:
            self._append("text", "\n\n")
            self.row = None
        elif (tag in BLOCK_TAGS or tag in HEADINGS) and not self.in_pre:
            self._append("text", "\n\n")

    def _name_entry(self) -> None:
        """The entry's line with its short name replaced by the qualified one its id gives."""
        assert self.entry is not None
        qualified, start = self.entry
        self.entry = None
        kind, text = self.segments[-1]
        if kind != "text" or start > len(text):
            return
        line = " ".join(text[start:].split())
        short = qualified.rsplit(".", 1)[-1]
        found = re.search(rf"(?<![\w.])(?:[\w.]*\.)?{re.escape(short)}(?![\w])", line)
        if found:
            line = line[: found.start()] + qualified + line[found.end() :]
        self.segments[-1] = (kind, text[:start] + line)

    def handle_data(self, data: str) -> None:
        self._measure_data(data)
        if self.hidden:
            return
        if self.in_pre:
            kind = self.segments[-1][0]
            self.segments[-1] = (kind, self.segments[-1][1] + data)
        else:
            self._append("text", data)


def html_to_text(html: str) -> str:
    """Visible text, one paragraph per block, headings marked and code fenced."""
    return html_page(html)[0]


def html_page(html: str) -> tuple[str, PageProfile]:
    """:func:`html_to_text`, and the page's measures for its page kind (one parse)."""
    parser = _VisibleTextParser()
    parser.feed(html)
    parser.close()
    parts: list[tuple[str, str | None]] = []  # each part as shown, and a prose paragraph's raw text
    for kind, content in parser.segments:
        if kind == "text":
            for paragraph in (part.replace("¶", " ") for part in content.split("\n\n")):
                text = _table_row(_MARKER_SPACE.sub(MARK_END, " ".join(paragraph.split())))
                if text and not _empty_heading(text):
                    parts.append((text, paragraph))
        else:
            code = "\n".join(fenced_code(kind.partition(":")[2], content.strip("\n").split("\n"))).strip("\n")
            parts.append((code, None))
    if not any(text.startswith(MARK_START) for text, _ in parts):
        parts = _rendered_markdown(parts)
    joined: list[str] = []
    for part in filter(None, (text for text, _ in parts)):
        if joined and _is_row(part) and _is_row(joined[-1].rsplit("\n", 1)[-1]):
            joined[-1] += "\n" + part  # a table's rows stay together, one line each
        else:
            joined.append(part)
    return "\n\n".join(joined), parser.profile


# A Markdown heading the build left as text: Debian's python-black-doc was built without the MyST parser, so each
# page's "# The basics", "## Usage" is a paragraph and its only <h1> is a stray ")" (development, round 29).
UNRENDERED_HEADING = re.compile(r"(?P<level>#{1,6}) (?P<title>[^#\n]*[^\s#.:;,!])")
MAX_HEADING_WORDS = 12
# Its emphasis, left as written: "_Black_ looks for the file", "**not**" (on such a page only: elsewhere an
# underscore belongs to a name).
UNRENDERED_EMPHASIS = re.compile(
    r"(?<![\w*])(?P<mark>\*\*|\*|__|_)(?P<text>[A-Za-z][^*_\n]*?[A-Za-z.)])(?P=mark)(?![\w*])"
)


def _rendered_markdown(parts: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    """A page with no heading of its own whose paragraphs hold Markdown headings: those as headings, and the
    emphasis of its headings and prose unwrapped. A page with headings keeps a "# ..." paragraph as it is (a
    file format's first line: valgrind's "# callgrind format")."""
    headings = [_markdown_heading(raw) if raw is not None else None for _, raw in parts]
    if not any(headings):
        return parts
    return [
        (UNRENDERED_EMPHASIS.sub(r"\g<text>", heading or text) if raw is not None else text, raw)
        for (text, raw), heading in zip(parts, headings)
    ]


def _markdown_heading(paragraph: str) -> str | None:
    """A paragraph of one line that is a Markdown heading, as the heading it was meant to be; else None. A shell
    comment opens a paragraph too ("# Unit tests" over "(.venv)$ tox -e py"), on a line of its own."""
    found = UNRENDERED_HEADING.fullmatch(paragraph.strip())
    if found is None or len(found["title"].split()) > MAX_HEADING_WORDS:
        return None
    return heading_marker(len(found["level"])) + " ".join(found["title"].split())


def _empty_heading(paragraph: str) -> bool:
    """A heading with nothing after its marker, or only a stray closing bracket (")", "}": python-black-doc):
    it names no section. "-" and "--" head the sections of those command-line options (nodejs)."""
    if not paragraph.startswith(MARK_START):
        return False
    return not paragraph.rpartition(MARK_END)[2].strip(" )]}")


def _is_row(line: str) -> bool:
    return line.startswith("| ") and line.endswith(" |")


def _table_row(paragraph: str) -> str:
    """A paragraph that holds cell boundaries as ``| cell | cell |``; others as they are."""
    if "\ue002" not in paragraph:
        return paragraph
    cells = [cell.strip() for cell in paragraph.split("\ue002")]
    cells = cells[1:] if not cells[0] else cells
    return "| " + " | ".join(cells) + " |" if any(cells) else ""
