"""Recursive chunking with langchain-text-splitters.

Prose splits at the coarsest boundary that fits: paragraph, line, sentence end (Latin and
CJK full stops), clause punctuation (semicolons, commas, CJK enumeration commas), then
spaces, never inside a word. Python code splits on class and function boundaries first.
A single token longer than the limit (a URL, a base64 blob) is the one thing cut hard,
so no chunk ever exceeds the limit. Chunks shorter than ``min_chars`` are dropped: they
rarely answer a question on their own. No overlap: overlapping chunks would share the
evidence for a question and blur which one is the gold document.

On marked-up pages (Markdown, RST, HTML, notebooks) no chunk crosses a heading: each
section is split on its own (a section with nothing but its heading, or shorter than
``min_chars``, joins the next), so a table or option list never rides along with the
prose of the section before it, and no chunk ends on a dangling heading.

A chunk's title is its heading path: the nearest headings above its first line that is
not itself a heading, outermost first (``Guide › Installation › From source``; for
Python, ``json.decoder › JSONDecoder.decode``), from the headings cleaning recorded. Its
id is the hash of its text.
"""

from __future__ import annotations

import re

from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

from benchsmith.tools.documents import Chunk, Document, content_id
from benchsmith.tools.headings import PATH_SEPARATOR, heading_path

DEFAULT_CHUNK_SIZE = 1024
DEFAULT_MIN_CHARS = 100
SECTIONED_KINDS = {"markdown", "notebook", "rst", "html"}

# Regular expressions, tried in order. Lookbehinds keep punctuation on the sentence it ends.
PROSE_SEPARATORS = [
    r"\n\n",
    r"\n",
    r"(?<=[.!?])\s+",
    r"(?<=[。！？])",
    r"(?<=[;；])\s*",
    r"(?<=[,，、])\s*",
    r" ",
]
CODE_SEPARATORS = [
    re.escape(separator)
    for separator in RecursiveCharacterTextSplitter.get_separators_for_language(Language.PYTHON)
    if separator  # drop "": cutting inside identifiers is left to the hard-cut fallback
]


def make_splitter(kind: str, chunk_size: int) -> RecursiveCharacterTextSplitter:
    is_code = kind == "python"
    return RecursiveCharacterTextSplitter(
        separators=CODE_SEPARATORS if is_code else PROSE_SEPARATORS,
        is_separator_regex=True,
        # Punctuation ends the sentence before it; "def" and "class" start the block after.
        keep_separator="start" if is_code else "end",
        chunk_size=chunk_size,
        chunk_overlap=0,
        length_function=len,
    )


def chunk_document(document: Document, chunk_size: int = DEFAULT_CHUNK_SIZE, min_chars: int = DEFAULT_MIN_CHARS) -> list[Chunk]:
    """Chunks of one document with their positions and character offsets in its text."""
    if chunk_size < 1 or min_chars < 0:
        raise ValueError("chunk_size must be positive and min_chars non-negative")
    splitter = make_splitter(document.kind, chunk_size)
    chunks: list[Chunk] = []
    for section_start, section_end in sections(document, min_chars):
        section = document.text[section_start:section_end]
        cursor = 0
        for piece in (piece for split in splitter.split_text(section) for piece in hard_cut(split, chunk_size)):
            start = section.find(piece, cursor)
            if start < 0:  # the splitter stripped whitespace differently; search from the top
                start = max(0, section.find(piece))
            cursor = start + len(piece)
            if len(piece) < min_chars:
                continue
            start += section_start
            chunks.append(Chunk(
                id=content_id(piece), text=piece, doc_id=document.id, source=document.source,
                title=chunk_title(document, start, piece), position=len(chunks), start=start, end=start + len(piece),
            ))
    return chunks


def sections(document: Document, min_chars: int = 0) -> list[tuple[int, int]]:
    """Spans of the text that no chunk crosses: on a marked-up page (Markdown, RST, HTML,
    notebook), each heading starts one, so a table or an option list is never glued to
    the prose of the section before it. A section with only its heading, or shorter than
    ``min_chars``, joins the next one (a page title and its first section go together).
    Other kinds are one span: code and docstrings keep packing definitions together."""
    text = document.text
    if document.kind not in SECTIONED_KINDS or not document.headings:
        return [(0, len(text))]
    heading_offsets = {offset for offset, _, _ in document.headings}
    bounds = sorted(offset for offset in heading_offsets if 0 < offset < len(text)) + [len(text)]
    spans, start = [], 0
    for end in bounds:
        body = any(line.strip() and offset not in heading_offsets for offset, line in _lines(text, start, end))
        if body and len(text[start:end].strip()) >= min_chars or end == len(text):
            spans.append((start, end))
            start = end
    return spans


def chunk_title(document: Document, start: int, text: str = "") -> str:
    """The heading path in force at the chunk's first line that is not a heading (page
    title › section › subsection), or the document's title when no heading comes before."""
    heading_offsets = {offset for offset, _, _ in document.headings}
    first_content = next((offset for offset, line in _lines(document.text, start, start + len(text))
                          if line.strip() and offset not in heading_offsets), start)
    return PATH_SEPARATOR.join(heading_path(document.headings, first_content)) or document.title


def _lines(text: str, start: int, end: int) -> list[tuple[int, str]]:
    """``(offset, line)`` for each line of ``text[start:end]``."""
    lines, offset = [], start
    for line in text[start:end].split("\n"):
        lines.append((offset, line))
        offset += len(line) + 1
    return lines


def hard_cut(text: str, limit: int) -> list[str]:
    """Cut an over-long piece, preferring the last space before the limit."""
    pieces = []
    while len(text) > limit:
        cut = text.rfind(" ", 0, limit + 1)
        cut = cut if cut > 0 else limit
        pieces.append(text[:cut].strip())
        text = text[cut:].strip()
    if text:
        pieces.append(text)
    return pieces
