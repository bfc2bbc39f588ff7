"""Dense retrieval: exact inner-product search over the vectors of a Chroma collection.

The vectors live in Chroma (one collection per embedder, filled on demand, see
:mod:`tools.indexing`); the search reads them once into a matrix and ranks every document
for each query (cosine similarity of L2-normalized vectors). Exact on purpose: an evaluation
should measure the embedder, not an index's approximation. Measured by
``benchmarks/evaluate.py`` on 50,000 vectors, Chroma's HNSW query at depth 1,000 returned 81%
of the exact top 1,000 and took 6-11× longer than this search.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from benchsmith.stores.progress import ProgressCallback
from benchsmith.stores.trec import Run
from benchsmith.stores.vectors import VectorStore

QUERY_BATCH = 256


class DenseIndex:
    def __init__(self, doc_ids: Sequence[str], vectors: np.ndarray):
        if len(doc_ids) != len(vectors):
            raise ValueError(f"{len(doc_ids)} ids for {len(vectors)} vectors")
        self.doc_ids = np.asarray(list(doc_ids), dtype=object)
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)

    @classmethod
    def from_store(cls, store: VectorStore) -> DenseIndex:
        ids: list[str] = []
        blocks: list[np.ndarray] = []
        for page in store.iter_all(include=("embeddings",)):
            ids.extend(page["ids"])
            blocks.append(np.asarray(page["embeddings"], dtype=np.float32))
        dimension = blocks[0].shape[1] if blocks else 0
        return cls(ids, np.vstack(blocks) if blocks else np.zeros((0, dimension), np.float32))

    def restricted_to(self, doc_ids: Collection[str]) -> DenseIndex:
        """The index of ``doc_ids`` alone (a benchmark's corpus within a larger collection)."""
        keep = np.fromiter((doc_id in doc_ids for doc_id in self.doc_ids), dtype=bool, count=len(self.doc_ids))
        return DenseIndex(self.doc_ids[keep].tolist(), self.vectors[keep])

    def search(self, query_ids: Sequence[str], query_vectors: np.ndarray, depth: int,
               on_progress: ProgressCallback | None = None) -> Run:
        """Top ``depth`` documents per query by inner product, best first."""
        k = min(depth, len(self.doc_ids))
        run: Run = {}
        for start in range(0, len(query_ids), QUERY_BATCH):
            scores = query_vectors[start : start + QUERY_BATCH] @ self.vectors.T
            # argpartition then sort only the top k: O(n + k log k) per query instead of O(n log n).
            top = np.argpartition(-scores, k - 1, axis=1)[:, :k] if k < scores.shape[1] else \
                np.tile(np.arange(scores.shape[1]), (len(scores), 1))
            top_scores = np.take_along_axis(scores, top, axis=1)
            order = np.argsort(-top_scores, axis=1, kind="stable")
            top, top_scores = np.take_along_axis(top, order, axis=1), np.take_along_axis(top_scores, order, axis=1)
            for offset, (rows, row_scores) in enumerate(zip(top, top_scores)):
                run[query_ids[start + offset]] = dict(zip(self.doc_ids[rows].tolist(), row_scores.astype(float).tolist()))
            if on_progress is not None:
                on_progress(min(start + QUERY_BATCH, len(query_ids)), len(query_ids))
        return run
