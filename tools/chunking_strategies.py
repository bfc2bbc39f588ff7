"""Chunking strategies a configuration search compares (``benchsmith select``).

A strategy is a :class:`ChunkingSpec`:

* ``size``: target characters per chunk, split with the recursive splitter of
  :mod:`tools.chunking` (paragraph, line, sentence, clause, space; class and function
  boundaries for code; no word cut); ``None`` keeps every document whole;
* ``overlap``: characters consecutive chunks of a document share (0: none);
* ``merge_below``: a chunk shorter than this joins the chunk before it (the first chunk of a
  document joins the next one) instead of standing alone; 0 keeps every chunk. Unlike
  ingestion, which drops short chunks, a comparison must not lose text;
* ``split_above``: only documents longer than this are split; shorter ones stay whole
  (``None``: every document longer than ``size``).

Written ``whole`` or ``size=512,overlap=64,merge=100,split_above=4000`` (keys in any order,
defaults left out); the same text in a YAML space may be a mapping with those keys.

A chunk that is a whole document keeps the document's id, so run files of whole-document
chunkings speak the corpus's ids; any other chunk is ``<doc id>#<n>``, its position in the
document.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_text_splitters import RecursiveCharacterTextSplitter

from benchsmith.stores.errors import InputError
from benchsmith.tools.chunking import CODE_SEPARATORS, PROSE_SEPARATORS, hard_cut
from benchsmith.tools.documents import Document, content_id

WHOLE = "whole"
KEYS = {"size": "size", "overlap": "overlap", "merge": "merge_below", "merge_below": "merge_below",
        "split_above": "split_above"}


@dataclass(frozen=True)
class ChunkingSpec:
    size: int | None = None
    overlap: int = 0
    merge_below: int = 0
    split_above: int | None = None

    def __post_init__(self) -> None:
        if self.size is None:
            if self.overlap or self.merge_below or self.split_above is not None:
                raise InputError(f"chunking {self.label!r}: overlap, merge and split_above need a size")
            return
        if self.size < 1:
            raise InputError(f"chunking {self.label!r}: size must be at least 1")
        if not 0 <= self.overlap < self.size:
            raise InputError(f"chunking {self.label!r}: overlap must be at least 0 and below the size")
        if self.merge_below < 0:
            raise InputError(f"chunking {self.label!r}: merge must be at least 0")
        if self.split_above is not None and self.split_above < self.size:
            raise InputError(f"chunking {self.label!r}: split_above must be at least the size")

    @property
    def label(self) -> str:
        if self.size is None:
            return WHOLE
        parts = [f"size={self.size}"]
        if self.overlap:
            parts.append(f"overlap={self.overlap}")
        if self.merge_below:
            parts.append(f"merge={self.merge_below}")
        if self.split_above is not None:
            parts.append(f"split_above={self.split_above}")
        return ",".join(parts)


def parse_chunking(value: str | Mapping[str, Any] | int) -> ChunkingSpec:
    """A spec from its text form, a mapping of its keys, or a bare size."""
    if isinstance(value, bool):
        raise InputError(f"chunking {value!r}: use 'whole' or size=N[,overlap=N][,merge=N][,split_above=N]")
    if isinstance(value, int):
        return ChunkingSpec(size=value)
    if isinstance(value, Mapping):
        if value.get("whole") is True and len(value) == 1:
            return ChunkingSpec()
        items = list(value.items())
    else:
        text = str(value).strip()
        if text == WHOLE:
            return ChunkingSpec()
        items = []
        for part in filter(None, (piece.strip() for piece in text.split(","))):
            key, separator, number = part.partition("=")
            if not separator:
                raise InputError(f"chunking {text!r}: {part!r} is not KEY=VALUE; use 'whole' or "
                                 "size=N[,overlap=N][,merge=N][,split_above=N]")
            items.append((key.strip(), number.strip()))
    fields: dict[str, int] = {}
    for key, number in items:
        if key not in KEYS:
            raise InputError(f"chunking {dict(items)!r}: unknown key {key!r} (use size, overlap, merge, split_above)")
        try:
            fields[KEYS[key]] = int(number)
        except (TypeError, ValueError):
            raise InputError(f"chunking {dict(items)!r}: {key} must be a whole number, got {number!r}") from None
    if "size" not in fields:
        raise InputError(f"chunking {dict(items)!r}: give a size (or 'whole')")
    return ChunkingSpec(**fields)


@dataclass(frozen=True)
class SelectChunk:
    """One retrievable unit of a chunking: ``text`` is what retrievers, rerankers and judges read."""

    id: str
    doc_id: str
    title: str
    source: str
    kind: str
    position: int
    text: str

    @property
    def key(self) -> str:
        """The content hash of the text: the same text from two chunkings is one judged item."""
        return content_id(self.text)

    def metadata(self) -> dict[str, Any]:
        """What metadata filters read (tools/metadata_filters.py)."""
        return {"doc_id": self.doc_id, "title": self.title, "source": self.source, "kind": self.kind,
                "position": self.position, "chars": len(self.text)}

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "doc_id": self.doc_id, "title": self.title, "source": self.source, "kind": self.kind,
                "position": self.position, "text": self.text}


def chunk_corpus(documents: Iterable[Document], spec: ChunkingSpec) -> list[SelectChunk]:
    """Every document's chunks under ``spec``, in corpus order."""
    chunks: list[SelectChunk] = []
    for document in documents:
        pieces = split_text(document.text, document.kind, spec)
        whole = len(pieces) == 1
        for position, piece in enumerate(pieces):
            chunks.append(SelectChunk(
                id=document.id if whole else f"{document.id}#{position}", doc_id=document.id, title=document.title,
                source=document.source, kind=document.kind, position=position,
                text=f"{document.title} {piece}".strip() if document.title else piece))
    return chunks


def split_text(text: str, kind: str, spec: ChunkingSpec) -> list[str]:
    """The pieces of one document's text under ``spec`` (the text itself when kept whole)."""
    text = text.strip()
    if spec.size is None or len(text) <= (spec.split_above if spec.split_above is not None else spec.size):
        return [text] if text else []
    splitter = RecursiveCharacterTextSplitter(
        separators=CODE_SEPARATORS if kind == "python" else PROSE_SEPARATORS, is_separator_regex=True,
        keep_separator="start" if kind == "python" else "end", chunk_size=spec.size, chunk_overlap=spec.overlap,
        length_function=len)
    pieces = [piece for split in splitter.split_text(text) for piece in hard_cut(split, spec.size) if piece.strip()]
    return merge_small(pieces, spec.merge_below)


def merge_small(pieces: list[str], below: int) -> list[str]:
    """Join each piece shorter than ``below`` to the piece before it (the first to the one after)."""
    if below <= 0:
        return pieces
    merged: list[str] = []
    carry = ""  # a short first piece waiting for the next one
    for piece in pieces:
        if carry:
            piece, carry = f"{carry} {piece}", ""
        if len(piece) < below:
            if merged:
                merged[-1] = f"{merged[-1]} {piece}"
                continue
            carry = piece
            continue
        merged.append(piece)
    if carry:
        merged.append(carry)
    return merged
