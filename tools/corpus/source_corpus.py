"""A corpus of chunks that say where they come from: a directory or a git checkout (or the
``stdlib`` source) split into chunks whose ids are their path and byte span.

Each chunk's id is ``<path>:<start>-<end>`` (:func:`tools.corpus.documents.chunk_ids`): the file's
path relative to the corpus root and the chunk's byte offsets in the UTF-8 text ingestion
reads from the file, cleaned (:func:`tools.corpus.cleaning.clean_documents`; for ``stdlib``, the
module's assembled documentation, whose path is the module name). The same files always give
the same ids, in any run and in every job: ``benchsmith ingest`` names its chunks the same way,
so a nugget benchmark, a configuration search and an ingested collection of one tree share
their ids (and their embeddings). Characters that would break a TREC file or the id's form
(whitespace, ``:``, ``%``) are percent-encoded.

Every kind but BEIR is cleaned and split by the ingest chunker
(:func:`tools.corpus.chunking.chunk_document`): Python at class and function definitions; Markdown,
reStructuredText, HTML and notebooks at their headings, then paragraphs, lines and sentences;
other text at paragraphs, lines and sentences. A BEIR corpus (a directory holding
``corpus.jsonl``, or the file) is taken as it is: its documents already are passages, and
keep their ids.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.stores.errors import InputError
from benchsmith.stores.progress import ProgressCallback
from benchsmith.tools.corpus.chunking import chunk_document
from benchsmith.tools.corpus.cleaning import clean_documents
from benchsmith.tools.corpus.documents import Document, SkippedFile, byte_spans
from benchsmith.tools.corpus.loaders import load_sources
from benchsmith.tools.defaults import DEFAULT_CHUNK_SIZE, DEFAULT_MIN_CHARS


@dataclass(frozen=True)
class SourceChunk:
    id: str
    title: str
    text: str
    path: str
    start: int  # byte offsets in the file's cleaned UTF-8 text; -1 for BEIR documents
    end: int
    page_kind: str | None = None  # tools/text/page_kinds.py; None for BEIR documents

    def to_beir(self) -> dict[str, Any]:
        metadata: dict[str, Any] = {"path": self.path, "start": self.start, "end": self.end}
        if self.page_kind is not None:
            metadata["page_kind"] = self.page_kind
        return {"_id": self.id, "title": self.title, "text": self.text, "metadata": metadata}


@dataclass
class SourceCorpus:
    chunks: list[SourceChunk] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    files: int = 0


def build_source_corpus(
    sources: Sequence[str],
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    min_chars: int = DEFAULT_MIN_CHARS,
    on_progress: ProgressCallback | None = None,
) -> SourceCorpus:
    """Every chunk of every source, in source and file order."""
    if chunk_size < 1 or min_chars < 0:
        raise InputError("--chunk-size must be positive and --min-chars non-negative")
    loaded = load_sources(list(sources), on_progress)
    corpus = SourceCorpus(skipped=list(loaded.skipped), files=loaded.files_read)
    seen: dict[str, str] = {}
    for document in prepared_documents(loaded.documents):
        for chunk in document_chunks(document, chunk_size, min_chars):
            if chunk.id in seen:
                raise InputError(f"{document.source}: document id {chunk.id!r} repeats one of {seen[chunk.id]}")
            seen[chunk.id] = document.source
            corpus.chunks.append(chunk)
    if not corpus.chunks:
        raise InputError(f"{', '.join(sources)}: no chunk of at least {min_chars} characters")
    return corpus


def prepared_documents(documents: Sequence[Document]) -> list[Document]:
    """The documents as every job chunks them: cleaned as ingestion cleans them (boilerplate is
    judged across the corpus; a document left empty goes), BEIR passages as they are; in their order."""
    cleaned = {
        (document.id, document.source): document
        for document in clean_documents([document for document in documents if document.kind != "beir"])
    }
    return [
        document if document.kind == "beir" else cleaned[document.id, document.source]
        for document in documents
        if document.kind == "beir" or (document.id, document.source) in cleaned
    ]


def document_chunks(
    document: Document, chunk_size: int = DEFAULT_CHUNK_SIZE, min_chars: int = DEFAULT_MIN_CHARS
) -> list[SourceChunk]:
    """One prepared document's chunks (:func:`prepared_documents`) with their byte spans; a BEIR
    document is one chunk, with its id."""
    if document.kind == "beir":
        return [SourceChunk(document.id, document.title, document.text, document.id, -1, -1)]
    chunks = chunk_document(document, chunk_size, min_chars)
    spans = byte_spans(document.text, [(chunk.start, chunk.end) for chunk in chunks])
    return [
        SourceChunk(chunk.id, chunk.title, chunk.text, document.id, byte_start, byte_end, document.page_kind)
        for chunk, (byte_start, byte_end) in zip(chunks, spans)
    ]


def git_revision(source: str) -> str | None:
    """The commit a git checkout is at, or None (not a checkout, or no git)."""
    path = Path(source)
    if not (path / ".git").exists():
        return None
    try:
        found = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found.stdout.strip() or None if found.returncode == 0 else None
