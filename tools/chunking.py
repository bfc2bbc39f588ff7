"""Recursive chunking with langchain-text-splitters.

Prose splits at the coarsest boundary that fits: paragraph, line, sentence end (Latin and
CJK full stops), clause punctuation (semicolons, commas, CJK enumeration commas), then
spaces, never inside a word. Python code splits on class and function boundaries first.
A single token longer than the limit (a URL, a base64 blob) is the one thing cut hard,
so no chunk ever exceeds the limit. Chunks shorter than ``min_chars`` are dropped: they
rarely answer a question on their own. No overlap: overlapping chunks would share the
evidence for a question and blur which one is the gold document.

A chunk's title is its heading path: the nearest headings above its start, outermost
first (``Guide › Installation › From source``; for Python, ``json.decoder ›
JSONDecoder.decode``), from the headings cleaning recorded; its id is the hash of its text.
"""

from __future__ import annotations

import re

from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

from benchsmith.tools.documents import Chunk, Document, content_id
from benchsmith.tools.headings import PATH_SEPARATOR, heading_path

DEFAULT_CHUNK_SIZE = 1024
DEFAULT_MIN_CHARS = 100

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
    pieces = [piece for split in make_splitter(document.kind, chunk_size).split_text(document.text)
              for piece in hard_cut(split, chunk_size)]
    chunks: list[Chunk] = []
    cursor = 0
    for piece in pieces:
        start = document.text.find(piece, cursor)
        if start < 0:  # the splitter stripped whitespace differently; search from the top
            start = max(0, document.text.find(piece))
        cursor = start + len(piece)
        if len(piece) < min_chars:
            continue
        chunks.append(Chunk(
            id=content_id(piece), text=piece, doc_id=document.id, source=document.source,
            title=chunk_title(document, start), position=len(chunks), start=start, end=start + len(piece),
        ))
    return chunks


def chunk_title(document: Document, start: int) -> str:
    """The heading path in force where the chunk starts (page title › section ›
    subsection), or the document's title when no heading comes before it."""
    return PATH_SEPARATOR.join(heading_path(document.headings, start)) or document.title


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
