"""The records that flow through ingestion, and their JSON form in the run directory.

A cleaned :class:`Document` carries its headings as ``[offset, level, title]`` into its
text (``tools.headings``); a :class:`Chunk`'s ``title`` is its heading path (page title ›
section › subsection) and its ``source`` the file it came from.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

DocumentKind = Literal["text", "markdown", "rst", "html", "python", "notebook", "beir", "stdlib"]


def content_id(text: str) -> str:
    """Chunk ids are content hashes: the same text always gets the same id, so writing a
    chunk twice stores it once (128 bits of SHA-256)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass
class Document:
    id: str
    source: str
    title: str
    kind: DocumentKind
    text: str
    # [offset into text, level (1 = page title), title], in text order; set by cleaning.
    headings: list[list[Any]] = field(default_factory=list)

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
        return metadata


@dataclass
class SkippedFile:
    path: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
