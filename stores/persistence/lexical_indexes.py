"""Persisted BM25 indexes: ``<workspace>/indexes/bm25-<corpus fingerprint>.npz``.

Building BM25 over a million documents takes minutes, and an evaluation and the audit that
follows it read the same corpus: the first process builds the index (tools/retrieval/bm25.py) and keeps
its score matrix here, keyed by a hash of the corpus file's bytes and by the scoring parameters;
the next one loads it in seconds. One ``.npz`` file: the matrix's arrays (CSC: ``data``,
``indices``, ``indptr``) and a JSON header (``meta``) with the document ids and the vocabulary
in term-number order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchsmith.stores.persistence.npz_files import load_arrays, save_arrays
from benchsmith.stores.persistence.workspace import Workspace

FORMAT_VERSION = 1


@dataclass
class StoredBM25:
    doc_ids: list[str]
    vocabulary: list[str]  # term i is vocabulary[i]
    data: np.ndarray  # float32 scores, term after term
    indices: np.ndarray  # int32 document rows, ascending within each term
    indptr: np.ndarray  # int64, len(vocabulary) + 1
    k1: float
    b: float


def bm25_index_path(workspace: Workspace, corpus_fingerprint: str) -> Path:
    return workspace.root / "indexes" / f"bm25-{corpus_fingerprint}.npz"


def save_bm25(workspace: Workspace, corpus_fingerprint: str, index: StoredBM25) -> Path:
    """Written whole or not at all (a temporary file renamed over the target)."""
    meta = {
        "format": FORMAT_VERSION,
        "k1": index.k1,
        "b": index.b,
        "doc_ids": index.doc_ids,
        "vocabulary": index.vocabulary,
    }
    return save_arrays(
        bm25_index_path(workspace, corpus_fingerprint),
        meta,
        data=index.data.astype(np.float32, copy=False),
        indices=index.indices.astype(np.int32, copy=False),
        indptr=index.indptr.astype(np.int64, copy=False),
    )


def load_bm25(workspace: Workspace, corpus_fingerprint: str, k1: float, b: float) -> StoredBM25 | None:
    """The stored index of this corpus with these parameters, or None (absent, another format)."""
    stored = load_arrays(bm25_index_path(workspace, corpus_fingerprint), FORMAT_VERSION)
    if stored is None or stored[0].get("k1") != k1 or stored[0].get("b") != b:
        return None
    meta, arrays = stored
    return StoredBM25(
        doc_ids=meta["doc_ids"],
        vocabulary=meta["vocabulary"],
        data=arrays["data"],
        indices=arrays["indices"],
        indptr=arrays["indptr"],
        k1=k1,
        b=b,
    )
