"""Strip markup and boilerplate so chunks hold the words a reader of the built page sees,
and record the headings each part of the text sits under.

Per kind:

* Markdown, MyST and notebooks (``tools.text.markdown_text``), reStructuredText with Sphinx
  roles and directives (``tools.text.rst_text``), HTML (``tools.text.html_text``): roles keep their
  readable text, links their text, code blocks their code (fenced, with its language);
  directive syntax, toctrees, comments, targets, file-level field lists, front matter
  and lists made only of links go.
* Python files lose a license header; standard-library docstring documents keep theirs.

Across a corpus, prose lines repeated in many documents (site footers, navigation) are
removed. Whitespace is collapsed in prose; code (Python files, fenced blocks) keeps its
indentation.

Headings (Markdown ``#`` and setext, RST adornments, HTML ``<hN>``; for Python the module
and its classes and functions) are carried through as markers and end up in
``Document.headings`` as ``[offset, level, title]`` into the cleaned text; the chunker
turns them into each chunk's title. A document's title becomes its first heading.

:func:`redirect_notice` recognizes a page that only says it has moved or is now covered
elsewhere (the loader skips such a page and lists it with the reason).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import replace

from benchsmith.tools.corpus.documents import Document
from benchsmith.tools.text.headings import (
    MARK_END,
    MARK_START,
    mark_docstring_sections,
    mark_python_structure,
    split_headings,
)
from benchsmith.tools.text.html_text import html_page
from benchsmith.tools.text.markdown_text import markdown_to_text
from benchsmith.tools.text.page_kinds import PageProfile, page_kind, source_profile
from benchsmith.tools.text.rst_text import rst_to_text
from benchsmith.words import WORD

CODE_KINDS = {"python"}
MARKUP_KINDS = {"markdown", "notebook", "rst", "html"}
# A line repeated in at least this share of documents (and this many) is boilerplate.
BOILERPLATE_MIN_SHARE = 0.5
BOILERPLATE_MIN_DOCUMENTS = 5
BOILERPLATE_MIN_LINE_CHARS = 12

# A redirect stub: says the page moved, points somewhere, and says little else.
REDIRECT_HINT = re.compile(
    r"moved|relocated|migrated|redirect|now\s+lives|now\s+be\s+found"
    r"|now\s+(?:covered|documented)|http-equiv",
    re.I,
)
REDIRECT_NOTICE = re.compile(
    r"\b(?:ha(?:s|ve)\s+(?:been\s+)?(?:moved|relocated|migrated)|(?:was|were)\s+(?:moved|relocated|migrated)"
    r"|moved\s+(?:permanently\s+)?to|^moved\s*:|redirect(?:s|ed|ing)?\b|(?:is|are)\s+now\s+(?:located|hosted|"
    r"maintained|available)\s+(?:at|on|in)|can\s+now\s+be\s+found|now\s+lives?\s+(?:at|in|on)"
    r"|(?:is|are)\s+now\s+(?:covered|documented|described|explained)\s+(?:in|at|on|by))",
    re.I,
)
REDIRECT_POINTER_LINE = re.compile(
    r"^(?:see|go\s+to|visit|please\s+(?:see|visit|go\s+to)|refer\s+to|read)\b.{0,100}$", re.I
)
REDIRECT_OTHER_WORDS = 15  # a title, a "please update your bookmarks"
POINTER = re.compile(
    r"\]\(|<https?://|https?://|`_|:(?:doc|ref|any):|\{(?:doc|ref|any)\}|href=|url=|\.html\b|"
    r"\.md\b|\.rst\b",
    re.I,
)
META_REFRESH = re.compile(r"<meta[^>]+http-equiv\s*=\s*[\"']?refresh|:http-equiv=refresh:", re.I)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def clean_documents(documents: list[Document]) -> list[Document]:
    """Clean each document, drop corpus-level boilerplate lines, record headings; empty
    results go. (A stream of any length: :func:`marked_document`, :class:`RepeatedLines` over
    all of them, then :func:`finished_document` of each.)"""
    marked = [marked_document(document) for document in documents]
    lines = RepeatedLines()
    for document in marked:
        lines.add(document)
    boilerplate = lines.boilerplate()
    return [cleaned for document in marked if (cleaned := finished_document(document, boilerplate)) is not None]


def marked_document(document: Document) -> Document:
    """The document's cleaned text with heading markers, before the corpus-level step, and its page kind."""
    text, profile = _marked_text_and_profile(document)
    kind = page_kind(document.id, document.kind, document.title, split_headings(text)[1], profile)
    return replace(document, text=text, page_kind=kind)


def finished_document(marked: Document, boilerplate: frozenset[bytes]) -> Document | None:
    """A :func:`marked_document` without the corpus's boilerplate lines, with its headings;
    None when nothing is left."""
    cleaned = _with_headings(without_lines(marked, boilerplate))
    return cleaned if cleaned.text.strip() else None


def clean_document(document: Document) -> Document:
    """One document cleaned, with its headings and page kind (no corpus-level boilerplate step)."""
    return _with_headings(marked_document(document))


def clean_text(text: str, kind: str) -> str:
    """The cleaned text alone (headings as plain lines)."""
    return split_headings(_marked_text(Document("", "", "", kind, text)))[0]  # type: ignore[arg-type]


def _marked_text(document: Document) -> str:
    """Cleaned text with heading markers (see ``tools.text.headings``)."""
    return _marked_text_and_profile(document, profiled=False)[0]


def _marked_text_and_profile(document: Document, profiled: bool = True) -> tuple[str, PageProfile | None]:
    """:func:`_marked_text`, and the measures of the page its page kind is judged on (``tools.text.page_kinds``)."""
    kind = document.kind
    text = document.text.replace("\r\n", "\n").replace("\r", "\n")
    text = unicodedata.normalize("NFC", text.replace(MARK_START, "").replace(MARK_END, ""))
    profile = source_profile(text, kind) if profiled else None
    if kind == "html":
        text, profile = html_page(text)
    elif kind in ("markdown", "notebook"):
        text = markdown_to_text(text)
    elif kind == "rst":
        text = rst_to_text(text)
    elif kind == "python":
        text = strip_license_header(text)
    text = normalize_whitespace(text, keep_indentation=kind in CODE_KINDS)
    if kind == "python" and document.title:
        text = mark_python_structure(text, document.title)
    elif kind == "stdlib" and document.title:
        text = mark_docstring_sections(text, document.title)
    return text, profile


def _with_headings(document: Document) -> Document:
    text, headings = split_headings(document.text)
    title = headings[0][2] if headings and headings[0][2] else document.title
    return replace(document, text=text, title=title, headings=headings)


def normalize_whitespace(text: str, keep_indentation: bool = False) -> str:
    """Trailing spaces go everywhere; in prose runs of spaces collapse and lines are
    stripped, while fenced code blocks (and all text when ``keep_indentation``) keep
    their indentation. More than one blank line becomes one."""
    lines = []
    for line, in_code in _lines_with_code_flags(text):
        line = line.rstrip()
        lines.append(line if keep_indentation or in_code else re.sub(r"[ \t\u00a0]+", " ", line).strip())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def _lines_with_code_flags(text: str) -> Iterator[tuple[str, bool]]:
    """Each line, and whether it is inside a fenced code block (not the fence lines)."""
    fence = ""
    for line in text.split("\n"):
        if fence:
            if re.match(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$", line):
                fence = ""
                yield line, False
            else:
                yield line, True
        else:
            if opening := _FENCE.match(line):
                fence = opening.group(1)
            yield line, False


def strip_license_header(code: str) -> str:
    """Drop a leading comment block that is a license or copyright notice (and a shebang)."""
    lines = code.split("\n")
    end = 0
    while end < len(lines) and (lines[end].startswith("#") or not lines[end].strip()):
        end += 1
    header = "\n".join(lines[:end]).lower()
    if "license" in header or "copyright" in header:
        return "\n".join(lines[end:])
    return code


def redirect_notice(text: str, kind: str) -> str | None:
    """The reason to skip a page that only says it moved: an HTML meta refresh, or
    sentences that are all moved/redirect notices or short "see ..." pointers, besides
    at most a title's worth of words, on a page that links somewhere."""
    if kind not in MARKUP_KINDS | {"text"} or not REDIRECT_HINT.search(text) or not POINTER.search(text):
        return None
    lines = [line.strip() for line in re.split(r"\n|(?<=[.!?])\s+", clean_text(text, kind)) if line.strip()]
    notices = [line for line in lines if REDIRECT_NOTICE.search(line)]
    other_words = sum(
        len(WORD.findall(line)) for line in lines if line not in notices and not REDIRECT_POINTER_LINE.match(line)
    )
    if META_REFRESH.search(text) and other_words <= 4 * REDIRECT_OTHER_WORDS:
        return "redirect page (meta refresh)"
    if not notices or other_words > REDIRECT_OTHER_WORDS:
        return None
    return f"redirect page: {' '.join(notices[0].split())[:100]}"


def remove_repeated_lines(documents: list[Document]) -> list[Document]:
    """Drop prose lines that recur across many documents: navigation, footers, banners.
    Code (Python files, fenced blocks) is never touched: shared imports are not boilerplate."""
    lines = RepeatedLines()
    for document in documents:
        lines.add(document)
    boilerplate = lines.boilerplate()
    return [without_lines(document, boilerplate) for document in documents]


class RepeatedLines:
    """Counts in how many documents each prose line appears, one document at a time, then names
    the boilerplate (:func:`remove_repeated_lines`). Lines are counted by a 128-bit digest, so a
    million documents' lines are not held."""

    def __init__(self) -> None:
        self.documents = 0
        self.line_documents: Counter[bytes] = Counter()

    def add(self, document: Document) -> Document:
        self.count(prose_line_digests(document))
        return document

    def count(self, digests: Iterable[bytes]) -> None:
        """One document whose distinct prose lines have these digests (:func:`prose_line_digests`,
        computed wherever the document was marked up: a Ray node, graphs/ingest_batches.py)."""
        self.documents += 1
        self.line_documents.update(digests)

    def boilerplate(self) -> frozenset[bytes]:
        """Digests of the lines found in at least half of the documents (and at least five)."""
        if self.documents < BOILERPLATE_MIN_DOCUMENTS:
            return frozenset()
        limit = max(BOILERPLATE_MIN_DOCUMENTS, BOILERPLATE_MIN_SHARE * self.documents)
        return frozenset(line for line, count in self.line_documents.items() if count >= limit)


def prose_line_digests(document: Document) -> set[bytes]:
    """Digests of the document's distinct prose lines that may be boilerplate (none in code)."""
    if document.kind in CODE_KINDS:
        return set()
    return {
        _line_digest(line)
        for line, in_code in _lines_with_code_flags(document.text)
        if not in_code and len(line) >= BOILERPLATE_MIN_LINE_CHARS and MARK_START not in line
    }  # headings are structure, even "Parameters"


def without_lines(document: Document, boilerplate: frozenset[bytes]) -> Document:
    """The document without the boilerplate lines (digests from :meth:`RepeatedLines.boilerplate`);
    code documents and code blocks are left as they are."""
    if not boilerplate or document.kind in CODE_KINDS:
        return document
    return replace(
        document,
        text=normalize_whitespace(
            "\n".join(
                line
                for line, in_code in _lines_with_code_flags(document.text)
                if in_code or _line_digest(line) not in boilerplate
            )
        ),
    )


def _line_digest(line: str) -> bytes:
    return hashlib.blake2b(line.encode("utf-8"), digest_size=16).digest()
