"""Ingestion's per-batch work: a batch of a stage file's JSON lines in, the batch's results out, the
same functions whether the stage maps its file in one process or on a Ray cluster
(graphs/runtime/ray_data.py). Each returns one result per line, in line order; the stage's own
process (graphs/ingest.py) writes the files and keeps what spans batches (repeated lines, document
ids, the near-duplicate decisions; the rows sharing a key are grouped apart: graphs/runtime/ray_key_groups.py)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from benchsmith.tools.corpus.chunking import chunk_document
from benchsmith.tools.corpus.cleaning import finished_document, marked_document, prose_line_digests
from benchsmith.tools.corpus.dedup import row_keys
from benchsmith.tools.corpus.documents import Chunk, Document
from benchsmith.tools.corpus.quality import QualityScorer


def marked_batch(lines: list[str], _: None) -> list[tuple[dict[str, Any], set[bytes]]]:
    """Each document marked up, with the digests of its prose lines (counted across the corpus)."""
    marked = [marked_document(Document(**json.loads(line))) for line in lines]
    return [(document.to_json(), prose_line_digests(document)) for document in marked]


def finished_batch(lines: list[str], boilerplate: frozenset[bytes]) -> list[dict[str, Any] | None]:
    """Each marked document without the corpus's boilerplate lines (None: nothing of it is left)."""
    finished = (finished_document(Document(**json.loads(line)), boilerplate) for line in lines)
    return [None if document is None else document.to_json() for document in finished]


def chunk_batch(lines: list[str], sizes: tuple[int, int]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """Each document's id, source and chunks (``sizes``: chunk size, least characters)."""
    chunk_size, min_chars = sizes
    documents = [Document(**json.loads(line)) for line in lines]
    return [
        (document.id, document.source, [chunk.to_json() for chunk in chunk_document(document, chunk_size, min_chars)])
        for document in documents
    ]


def row_key_batch(lines: list[str], banding: tuple[list[tuple[int, int]], int, int]) -> list[np.ndarray]:
    """The batch's chunks' keys, their LSH band keys and their ids' (``banding``: bands, permutations,
    seed; tools/corpus/dedup.row_keys), as one result."""
    bands, num_perm, seed = banding
    records = [json.loads(line) for line in lines]
    return [
        row_keys([record["id"] for record in records], [record["text"] for record in records], bands, num_perm, seed)
    ]


def scored_batch(lines: list[str], scorer: QualityScorer) -> list[dict[str, Any]]:
    """Each chunk with its quality score (rounded as the files keep it)."""
    chunks = [Chunk(**json.loads(line)) for line in lines]
    for chunk, score in zip(chunks, scorer.score([chunk.text for chunk in chunks])):
        chunk.quality = round(float(score), 4)
    return [chunk.to_json() for chunk in chunks]
