"""The records that flow through ingestion, and their JSON form in the run directory.

A cleaned :class:`Document` carries its page kind (``tools.text.page_kinds``), which each of its chunks
keeps (``page_kind`` in Chroma's metadata), and its headings as ``[offset, level, title]`` into its
text (``tools.text.headings``); a :class:`Chunk`'s ``title`` is its heading path (page title ›
section › subsection) and its ``source`` the file it came from.

Every job names a chunk of a file the same way (:func:`chunk_ids`): ``<path>:<start>-<end>``,
the file's path relative to the corpus root (the module name for ``stdlib``) and the chunk's
UTF-8 byte offsets in the document's cleaned text (the text every job chunks). The same files
give the same ids in any run and any job, so ingest, nuggets and select runs speak one
vocabulary and share embeddings. A BEIR passage kept whole keeps its corpus id.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal
from urllib.parse import quote, unquote

from benchsmith.stores.errors import InputError

DocumentKind = Literal["text", "markdown", "rst", "html", "python", "notebook", "beir", "stdlib"]


ID_SAFE_CHARACTERS = "/._-+@~,=()[]{}!$&'*;"  # kept as they are in ids; the rest is percent-encoded


def content_id(text: str) -> str:
    """A text's content hash (128 bits of SHA-256): the same text from two chunkings is one item."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def span_id(path: str, start: int, end: int) -> str:
    """``path:start-end``; the path percent-encoded where it holds whitespace, ``:`` or ``%``
    (characters that would break a TREC file or the id's form)."""
    return f"{quote(path, safe=ID_SAFE_CHARACTERS)}:{start}-{end}"


def page_of(chunk_id: str) -> str:
    """The page (file path) a chunk id names: the path of a ``path:start-end`` span id, decoded; an
    id of another form (a BEIR passage kept whole) is its own page."""
    path, separator, span = chunk_id.rpartition(":")
    start, dash, end = span.partition("-")
    return unquote(path) if separator and dash and start.isdigit() and end.isdigit() else chunk_id


def byte_spans(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Character spans (in order of their starts) as UTF-8 byte offsets, counting each stretch once."""
    result, char_position, byte_position = [], 0, 0
    for start, end in spans:
        if start < char_position:  # out of order: count from the top
            char_position, byte_position = 0, 0
        byte_start = byte_position + len(text[char_position:start].encode("utf-8"))
        result.append((byte_start, byte_start + len(text[start:end].encode("utf-8"))))
        char_position, byte_position = start, byte_start  # from the start: overlapping spans count once too
    return result


@dataclass
class Document:
    id: str
    source: str
    title: str
    kind: DocumentKind
    text: str
    # [offset into text, level (1 = page title), title], in text order; set by cleaning.
    headings: list[list[Any]] = field(default_factory=list)
    # narrative, api, changelog or index (tools/text/page_kinds.py); set by cleaning.
    page_kind: str | None = None
    # the files its MkDocs include lines name that the tree does not hold (tools/corpus/includes.py)
    missing_includes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Chunk:
    id: str
    text: str
    doc_id: str
    source: str
    title: str
    position: int
    start: int
    end: int
    quality: float | None = None
    page_kind: str | None = None  # its document's (tools/text/page_kinds.py)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def metadata(self) -> dict[str, Any]:
        """What Chroma stores beside the text (Chroma metadata values must not be None)."""
        metadata = {
            "doc_id": self.doc_id,
            "source": self.source,
            "title": self.title,
            "position": self.position,
            "start": self.start,
            "end": self.end,
        }
        if self.quality is not None:
            metadata["quality"] = self.quality
        if self.page_kind is not None:
            metadata["page_kind"] = self.page_kind
        return metadata


def chunk_ids(document: Document, spans: Sequence[tuple[int, int]]) -> list[str]:
    """The ids of the chunks of ``document`` at these character spans of its text: ``<path>:<start>-<end>``
    in bytes; a BEIR passage that is one chunk spanning all its text keeps the passage's id."""
    if (
        document.kind == "beir"
        and len(spans) == 1
        and document.text[spans[0][0] : spans[0][1]] == document.text.strip()
    ):
        return [document.id]
    return [span_id(document.id, start, end) for start, end in byte_spans(document.text, spans)]


def note_document_id(document: Document, sources: dict[str, str]) -> None:
    """Note the document's id (``sources``: id → source so far); an InputError if it is there."""
    note_id(document.id, document.source, sources)


def note_id(document_id: str, source: str, sources: dict[str, str]) -> None:
    """:func:`note_document_id` from the document's id and source alone."""
    if document_id in sources:
        raise InputError(
            f"{source}: document id {document_id!r} repeats that of {sources[document_id]} "
            "(chunk ids are <path>:<start>-<end>; give the folders as one source, or rename one)"
        )
    sources[document_id] = source


@dataclass
class SkippedFile:
    path: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# The part of a skip reason that names one file (a byte offset, an OS error, a redirect's words) is left
# out of its group: "not UTF-8 (invalid byte at offset 12)" is in "not UTF-8".
_REASON_DETAIL = re.compile(r": .*$|\s*\(invalid byte at offset \d+\)$", re.S)


@dataclass
class SkippedGroup:
    reason: str
    count: int
    paths: list[str]  # the first few, in the order they were skipped


def skipped_groups(skipped: Iterable[SkippedFile | dict[str, str]], examples: int = 3) -> list[SkippedGroup]:
    """Skipped files grouped by reason (its per-file detail left out), the largest group first, each
    with its count and first ``examples`` paths."""
    groups: dict[str, SkippedGroup] = {}
    for item in skipped:
        path, reason = (item.path, item.reason) if isinstance(item, SkippedFile) else (item["path"], item["reason"])
        group = groups.setdefault(_REASON_DETAIL.sub("", reason), SkippedGroup(_REASON_DETAIL.sub("", reason), 0, []))
        group.count += 1
        if len(group.paths) < examples:
            group.paths.append(path)
    return sorted(groups.values(), key=lambda group: -group.count)
