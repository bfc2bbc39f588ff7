"""The hand-written standard-library questions' file and the chunks they are labelled against."""

import functools
from pathlib import Path

from benchsmith.tools.corpus.chunking import chunk_document
from benchsmith.tools.corpus.cleaning import clean_documents
from benchsmith.tools.corpus.documents import Chunk
from tests.stdlib_corpus import stdlib_documents

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "stdlib-validity.jsonl"


@functools.lru_cache(maxsize=1)
def stdlib_chunks() -> dict[str, Chunk]:
    """The standard library cleaned and chunked as ``benchsmith ingest stdlib`` does (before
    deduplication and the quality filter), by chunk id."""
    documents = clean_documents(list(stdlib_documents()))
    return {chunk.id: chunk for document in documents for chunk in chunk_document(document)}
