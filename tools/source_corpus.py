"""A corpus of chunks that say where they come from: a directory or a git checkout (or the
``stdlib`` source) split into chunks whose ids are their path and byte span.

Each chunk's id is ``<path>:<start>-<end>``: the file's path relative to the corpus root and
the chunk's byte offsets in the file's UTF-8 text (for HTML pages and notebooks, in the text
extracted from them; for ``stdlib``, in the module's assembled documentation, whose path is
the module name). The same files always give the same ids, in any run, and an id leads back
to its bytes. Characters that would break a TREC file or the id's form (whitespace, ``:``,
``%``) are percent-encoded.

Every kind but BEIR goes through the ingest chunker (:func:`tools.chunking.chunk_document`):
Python is split at class and function definitions; Markdown and reStructuredText at their
headings (:func:`tools.chunking.markup_headings`: an RST title with its under- and overline),
then paragraphs, lines and sentences; other text at paragraphs, lines and sentences. A BEIR corpus (a directory holding ``corpus.jsonl``, or the file) is taken as it is:
its documents already are passages, and keep their ids.

Ingestion names chunks by content hash (:func:`tools.documents.content_id`); this module
leaves that alone and is used by the jobs that need provenance in the id (nugget benchmarks).
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from benchsmith.stores.errors import InputError
from benchsmith.stores.progress import ProgressCallback
from benchsmith.tools.chunking import DEFAULT_CHUNK_SIZE, DEFAULT_MIN_CHARS, chunk_document, hard_cut, markup_headings
from benchsmith.tools.cleaning import clean_text
from benchsmith.tools.documents import Document, SkippedFile
from benchsmith.tools.loaders import load_sources

ID_SAFE_CHARACTERS = "/._-+@~,=()[]{}!$&'*;"  # kept as they are in ids; the rest is percent-encoded
STRUCTURED_LANGUAGES = ("markdown", "rst")  # sectioned at their raw headings
EXTRACTED_KINDS = {"html"}  # chunked in the text extracted from the markup


@dataclass(frozen=True)
class SourceChunk:
    id: str
    title: str
    text: str
    path: str
    start: int  # byte offsets in the file's (or extracted) UTF-8 text; -1 for BEIR documents
    end: int

    def to_beir(self) -> dict[str, Any]:
        return {"_id": self.id, "title": self.title, "text": self.text,
                "metadata": {"path": self.path, "start": self.start, "end": self.end}}


@dataclass
class SourceCorpus:
    chunks: list[SourceChunk] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    files: int = 0


def span_id(path: str, start: int, end: int) -> str:
    """``path:start-end``; the path percent-encoded where it holds whitespace, ``:`` or ``%``."""
    return f"{quote(path, safe=ID_SAFE_CHARACTERS)}:{start}-{end}"


def build_source_corpus(sources: Sequence[str], chunk_size: int = DEFAULT_CHUNK_SIZE,
                        min_chars: int = DEFAULT_MIN_CHARS,
                        on_progress: ProgressCallback | None = None) -> SourceCorpus:
    """Every chunk of every source, in source and file order."""
    if chunk_size < 1 or min_chars < 0:
        raise InputError("--chunk-size must be positive and --min-chars non-negative")
    loaded = load_sources(list(sources), on_progress)
    corpus = SourceCorpus(skipped=list(loaded.skipped), files=loaded.files_read)
    seen: dict[str, str] = {}
    for document in loaded.documents:
        for chunk in document_chunks(document, chunk_size, min_chars):
            if chunk.id in seen:
                raise InputError(f"{document.source}: document id {chunk.id!r} repeats one of {seen[chunk.id]}")
            seen[chunk.id] = document.source
            corpus.chunks.append(chunk)
    if not corpus.chunks:
        raise InputError(f"{', '.join(sources)}: no chunk of at least {min_chars} characters")
    return corpus


def document_chunks(document: Document, chunk_size: int = DEFAULT_CHUNK_SIZE,
                    min_chars: int = DEFAULT_MIN_CHARS) -> list[SourceChunk]:
    """One document's chunks with their byte spans (a BEIR document is one chunk)."""
    if document.kind == "beir":
        return [SourceChunk(document.id, document.title, document.text, document.id, -1, -1)]
    text = clean_text(document.text, document.kind) if document.kind in EXTRACTED_KINDS else document.text
    # Markdown and RST go through the ingest chunker too, sectioned at their raw headings: an
    # RST title keeps its underline (langchain's RST separators cut between the two).
    headings = markup_headings(text, document.kind) if document.kind in STRUCTURED_LANGUAGES else []
    source = Document(document.id, document.source, document.title, document.kind, text, headings)
    spans = [(chunk.start, chunk.end) for chunk in chunk_document(source, chunk_size, min_chars)]
    path = document.id  # the path relative to the corpus root (the module name for stdlib)
    return [SourceChunk(span_id(path, byte_start, byte_end), document.title, text[start:end], path, byte_start,
                        byte_end)
            for (start, end), (byte_start, byte_end) in zip(spans, byte_spans(text, spans))]


def byte_spans(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Character spans (in order) as UTF-8 byte offsets, counting each stretch once."""
    result, char_position, byte_position = [], 0, 0
    for start, end in spans:
        if start < char_position:  # out of order: count from the top
            char_position, byte_position = 0, 0
        byte_start = byte_position + len(text[char_position:start].encode("utf-8"))
        byte_end = byte_start + len(text[start:end].encode("utf-8"))
        result.append((byte_start, byte_end))
        char_position, byte_position = end, byte_end
    return result


def git_revision(source: str) -> str | None:
    """The commit a git checkout is at, or None (not a checkout, or no git)."""
    path = Path(source)
    if not (path / ".git").exists():
        return None
    try:
        found = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True,
                               timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found.stdout.strip() or None if found.returncode == 0 else None
