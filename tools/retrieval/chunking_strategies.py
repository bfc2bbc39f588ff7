"""Chunking strategies a configuration search compares (``benchsmith select``).

A strategy is a :class:`ChunkingSpec`:

* ``size``: target characters per chunk, split by the one chunker,
  :func:`tools.corpus.chunking.chunk_document` (paragraph, line, sentence, clause, space; class and
  function boundaries for code; headings of marked-up pages; no word cut); ``None`` keeps
  every document whole;
* ``overlap``: characters consecutive chunks of a document share (0: none);
* ``merge_below``: a chunk shorter than this joins the chunk before it (the first chunk of a
  document joins the next one) instead of standing alone; 0 keeps every chunk. Unlike
  ingestion, which drops chunks shorter than its ``min_chars``, a comparison must not lose
  text: short chunks are kept (sections are still formed as ingestion forms them);
* ``split_above``: only documents longer than this are split; shorter ones stay whole
  (``None``: every document is chunked).

Written ``whole`` or ``size=512,overlap=64,merge=100,split_above=4000`` (keys in any order,
defaults left out); the same text in a YAML space may be a mapping with those keys.

Chunk ids are those of every job (:func:`tools.corpus.documents.chunk_ids`): ``<path>:<start>-<end>``
in bytes of the cleaned file, so ``size=1024`` (ingestion's chunk size) gives the chunks and
ids of ``benchsmith ingest`` (and its short chunks besides) and reuses their embeddings; a
BEIR passage kept whole keeps its id, so run files of whole-document chunkings of a BEIR
corpus speak the corpus's ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from benchsmith.stores.errors import InputError
from benchsmith.tools.corpus.chunking import check_document_ids, chunk_document
from benchsmith.tools.corpus.documents import Document, content_id
from benchsmith.tools.defaults import DEFAULT_MIN_CHARS

WHOLE = "whole"
KEYS = {
    "size": "size",
    "overlap": "overlap",
    "merge": "merge_below",
    "merge_below": "merge_below",
    "split_above": "split_above",
}


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
                raise InputError(
                    f"chunking {text!r}: {part!r} is not KEY=VALUE; use 'whole' or "
                    "size=N[,overlap=N][,merge=N][,split_above=N]"
                )
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
        """What metadata filters read (tools/retrieval/metadata_filters.py)."""
        return {
            "doc_id": self.doc_id,
            "title": self.title,
            "source": self.source,
            "kind": self.kind,
            "position": self.position,
            "chars": len(self.text),
        }

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def chunk_corpus(documents: Iterable[Document], spec: ChunkingSpec) -> list[SelectChunk]:
    """Every (cleaned) document's chunks under ``spec``, in corpus order. What retrievers read
    is the chunk's text, as ingestion embeds it; a BEIR passage's title goes first, as
    benchmark evaluation reads passages."""
    documents = list(documents)
    check_document_ids(documents)
    chunks: list[SelectChunk] = []
    for document in documents:
        text = document.text.strip()
        whole = spec.size is None or (spec.split_above is not None and len(text) <= spec.split_above)
        pieces = (
            chunk_document(document, None)
            if whole
            else chunk_document(
                document,
                spec.size,
                DEFAULT_MIN_CHARS,
                overlap=spec.overlap,
                keep_short=True,
                merge_below=spec.merge_below,
            )
        )
        for piece in pieces:
            chunks.append(
                SelectChunk(
                    id=piece.id,
                    doc_id=document.id,
                    title=piece.title,
                    source=document.source,
                    kind=document.kind,
                    position=piece.position,
                    text=f"{document.title} {piece.text}".strip() if document.kind == "beir" else piece.text,
                )
            )
    return chunks
