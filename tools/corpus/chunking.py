"""Recursive chunking with langchain-text-splitters.

Prose splits at the coarsest boundary that fits: paragraph, line, sentence end (Latin and
CJK full stops), clause punctuation (semicolons, commas, CJK enumeration commas), then
spaces, never inside a word. Python code splits on class and function boundaries first.
A single token longer than the limit (a URL, a base64 blob) is the one thing cut hard,
so no chunk ever exceeds the limit. Chunks shorter than ``min_chars`` are dropped: they
rarely answer a question on their own. No overlap by default: overlapping chunks would share
the evidence for a question and blur which one is the gold document (a configuration search
may still ask for overlap, or keep short chunks, or merge them into their neighbours).

On marked-up pages (Markdown, RST, HTML, notebooks) no chunk crosses a heading: each
section is split on its own (a section with nothing but its heading, or shorter than
``min_chars``, joins the next), so a table or option list never rides along with the
prose of the section before it, and no chunk ends on a dangling heading.

A chunk's title is its heading path: the nearest headings above its first line that is
not itself a heading, outermost first (``Guide › Installation › From source``; for
Python, ``json.decoder › JSONDecoder.decode``), from the headings cleaning recorded. Its
id is its document's path and its byte span (:func:`tools.corpus.documents.chunk_ids`), the one id
scheme of every job: :func:`chunk_document` is the one function that splits a document.

An RST title is its overline (if any), its text and its underline together, so no chunk ever
starts at an underline nor ends at a title whose underline went to the next chunk.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TypedDict, Unpack

from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

from benchsmith.stores.progress import ProgressCallback
from benchsmith.tools.corpus.documents import Chunk, Document, chunk_ids, note_document_id
from benchsmith.tools.defaults import DEFAULT_CHUNK_SIZE, DEFAULT_MIN_CHARS
from benchsmith.tools.text.headings import PATH_SEPARATOR, heading_path

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


# An RST section adornment: one punctuation character repeated (at least three times).
RST_ADORNMENT = re.compile(r"""^([!-/:-@\[-`{-~])\1{2,}\s*$""")
# A link target line that names the heading below it: RST ".. _label:", MyST "(label)=".
TARGET_LINE = re.compile(r"^\s*(\.\. _[^:]+:|\([^()]+\)=)\s*$")


def is_adornment(line: str) -> bool:
    """An RST underline or overline (or a Markdown setext underline, a rule): never body."""
    return bool(RST_ADORNMENT.match(line))


def _heading_lines(text: str, start: int, end: int, heading_offsets: set[int]) -> set[int]:
    """Offsets of the lines of ``text[start:end]`` that belong to a heading: from its offset,
    the link targets above its title (``.. _label:``, ``(label)=``), its overline, its title
    line and its underline; and any other adornment line (a transition is not body either)."""
    lines = _lines(text, start, end)
    found = {offset for offset, line in lines if is_adornment(line)}
    for index, (offset, _) in enumerate(lines):
        if offset not in heading_offsets:
            continue
        position = index
        while position < len(lines) and (TARGET_LINE.match(lines[position][1]) or not lines[position][1].strip()):
            found.add(lines[position][0])
            position += 1
        title_lines = 3 if position < len(lines) and is_adornment(lines[position][1]) else 2
        for line_offset, line in lines[position : position + title_lines]:
            if line_offset == lines[position][0] or is_adornment(line):
                found.add(line_offset)
        if title_lines == 3 and position + 1 < len(lines):
            found.add(lines[position + 1][0])  # the title under an overline
    return found


def make_splitter(kind: str, chunk_size: int, overlap: int = 0) -> RecursiveCharacterTextSplitter:
    is_code = kind == "python"
    return RecursiveCharacterTextSplitter(
        separators=CODE_SEPARATORS if is_code else PROSE_SEPARATORS,
        is_separator_regex=True,
        # Punctuation ends the sentence before it; "def" and "class" start the block after.
        keep_separator="start" if is_code else "end",
        chunk_size=chunk_size,
        chunk_overlap=overlap,
        length_function=len,
    )


class ChunkOptions(TypedDict, total=False):
    """:func:`chunk_document`'s keyword settings, passed on by the functions that chunk many documents."""

    overlap: int
    keep_short: bool
    merge_below: int


def chunk_document(
    document: Document,
    chunk_size: int | None = DEFAULT_CHUNK_SIZE,
    min_chars: int = DEFAULT_MIN_CHARS,
    *,
    overlap: int = 0,
    keep_short: bool = False,
    merge_below: int = 0,
) -> list[Chunk]:
    """Chunks of one document with their ids, positions and character offsets in its text.

    ``chunk_size=None`` keeps the document whole (one chunk, surrounding whitespace left out).
    ``min_chars`` joins shorter sections to the next and drops shorter chunks, unless
    ``keep_short``; ``overlap`` characters repeat from the end of a chunk at the start of the
    next; a chunk shorter than ``merge_below`` joins the chunk before it (the first the one after)."""
    if chunk_size is None:
        return _chunks(document, [whole_span(document.text)] if document.text.strip() else [])
    if chunk_size < 1 or min_chars < 0 or not 0 <= overlap < chunk_size:
        raise ValueError("chunk_size must be positive, min_chars non-negative and overlap in [0, chunk_size)")
    splitter = make_splitter(document.kind, chunk_size, overlap)
    heading_offsets = {offset for offset, _, _ in document.headings}
    spans: list[tuple[int, int]] = []
    for section_start, section_end in sections(document, min_chars):
        section = document.text[section_start:section_end]
        placed, cursor = [], 0
        for piece in (piece for split in splitter.split_text(section) for piece in hard_cut(split, chunk_size)):
            start = section.find(piece, cursor)
            if start < 0:  # the splitter stripped whitespace differently; search from the top
                start = max(0, section.find(piece))
            cursor = start + (1 if overlap else len(piece))  # an overlapping piece starts inside the last one
            placed.append((start, piece))
        for start, piece in _headings_joined(document.text, section_start, placed, heading_offsets, chunk_size):
            if len(piece) >= min_chars or keep_short:
                spans.append((section_start + start, section_start + start + len(piece)))
    return _chunks(document, merge_short(spans, merge_below))


def whole_span(text: str) -> tuple[int, int]:
    """The span of ``text`` without its leading and trailing whitespace."""
    return len(text) - len(text.lstrip()), len(text.rstrip())


def merge_short(spans: Sequence[tuple[int, int]], below: int) -> list[tuple[int, int]]:
    """Each span shorter than ``below`` joined to the span before it (the first to the one after)."""
    if below <= 0:
        return list(spans)
    merged: list[tuple[int, int]] = []
    carry: int | None = None  # the start of a short first span waiting for the next one
    for start, end in spans:
        if carry is not None:
            start, carry = carry, None
        if end - start < below:
            if merged:
                merged[-1] = (merged[-1][0], end)
                continue
            carry = start
            continue
        merged.append((start, end))
    if carry is not None:
        merged.append((carry, spans[-1][1]))
    return merged


def _chunks(document: Document, spans: Sequence[tuple[int, int]]) -> list[Chunk]:
    return [
        Chunk(
            id=chunk_id,
            text=document.text[start:end],
            doc_id=document.id,
            source=document.source,
            title=chunk_title(document, start, document.text[start:end]),
            position=position,
            start=start,
            end=end,
            page_kind=document.page_kind,
        )
        for position, ((start, end), chunk_id) in enumerate(zip(spans, chunk_ids(document, spans)))
    ]


def chunk_documents(
    documents: Sequence[Document],
    chunk_size: int | None = DEFAULT_CHUNK_SIZE,
    min_chars: int = DEFAULT_MIN_CHARS,
    on_progress: ProgressCallback | None = None,
    **options: Unpack[ChunkOptions],
) -> list[Chunk]:
    """Every document's chunks (:func:`chunk_document`), in corpus order. Ids name the document,
    so two documents of one id (one relative path in two sources) are an InputError."""
    return list(iter_chunks(documents, chunk_size, min_chars, on_progress, total=len(documents), **options))


def iter_chunks(
    documents: Iterable[Document],
    chunk_size: int | None = DEFAULT_CHUNK_SIZE,
    min_chars: int = DEFAULT_MIN_CHARS,
    on_progress: ProgressCallback | None = None,
    total: int | None = None,
    **options: Unpack[ChunkOptions],
) -> Iterator[Chunk]:
    """:func:`chunk_documents` as a stream: a document whose id an earlier one has stops it
    with the same InputError when it comes (only ids are held)."""
    sources: dict[str, str] = {}
    for done, document in enumerate(documents, start=1):
        note_document_id(document, sources)
        yield from chunk_document(document, chunk_size, min_chars, **options)
        if on_progress is not None:
            on_progress(done, total)


def _headings_joined(
    text: str, section_start: int, placed: list[tuple[int, str]], heading_offsets: set[int], chunk_size: int
) -> list[tuple[int, str]]:
    """The section's pieces, a piece of nothing but headings (the splitter left it alone when
    the paragraph after it was too long to join) joined to the piece after it where the two
    fit in ``chunk_size``: a title stays with the text it names."""
    section = text[section_start : section_start + max((start + len(piece) for start, piece in placed), default=0)]
    joined: list[tuple[int, str]] = []
    for start, piece in placed:
        if joined:
            head_start, head = joined[-1]
            head_lines = _heading_lines(
                text, section_start + head_start, section_start + head_start + len(head), heading_offsets
            )
            only_headings = all(
                not line.strip() or offset in head_lines
                for offset, line in _lines(text, section_start + head_start, section_start + head_start + len(head))
            )
            if only_headings and start + len(piece) - head_start <= chunk_size:
                joined[-1] = (head_start, section[head_start : start + len(piece)])
                continue
        joined.append((start, piece))
    return joined


def sections(document: Document, min_chars: int = 0) -> list[tuple[int, int]]:
    """Spans of the text that no chunk crosses: on a marked-up page (Markdown, RST, HTML,
    notebook), each heading starts one, so a table or an option list is never glued to
    the prose of the section before it. A section with only its heading, or shorter than
    ``min_chars``, joins the next one (a page title and its first section go together), and
    so does the text before the first heading. Other kinds are one span: code and docstrings
    keep packing definitions together."""
    text = document.text
    if document.kind not in SECTIONED_KINDS or not document.headings:
        return [(0, len(text))]
    heading_offsets = {offset for offset, _, _ in document.headings}
    bounds = [*sorted(offset for offset in heading_offsets if 0 < offset < len(text)), len(text)]
    # What precedes the first heading (":orphan:", a ".. _label:" or "(label)=" target, badges)
    # belongs to the section it opens.
    if bounds[0] < len(text) and min(heading_offsets) > 0:
        bounds = bounds[1:]
    spans, start = [], 0
    for end in bounds:
        heading_lines = _heading_lines(text, start, end, heading_offsets)
        body = any(line.strip() and offset not in heading_lines for offset, line in _lines(text, start, end))
        if (body and len(text[start:end].strip()) >= min_chars) or end == len(text):
            spans.append((start, end))
            start = end
    return spans


def chunk_title(document: Document, start: int, text: str = "") -> str:
    """The heading path in force at the chunk's first line that is not a heading (page
    title › section › subsection), or the document's title when no heading comes before."""
    heading_offsets = {offset for offset, _, _ in document.headings}
    heading_lines = _heading_lines(document.text, start, start + len(text), heading_offsets)
    first_content = next(
        (
            offset
            for offset, line in _lines(document.text, start, start + len(text))
            if line.strip() and offset not in heading_lines
        ),
        start,
    )
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


def check_document_ids(documents: Sequence[Document]) -> None:
    """Chunk ids name their document: two documents of one id (one relative path in two
    sources) are an InputError."""
    sources: dict[str, str] = {}
    for document in documents:
        note_document_id(document, sources)
