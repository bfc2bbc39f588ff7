"""Dense retrieval: exact inner-product search over the vectors of a Chroma collection.

The vectors live in Chroma (one collection per embedder, filled on demand, see
:mod:`tools.retrieval.indexing`); the search reads them once into a matrix and ranks every document
for each query (cosine similarity of L2-normalized vectors). Exact on purpose: an evaluation
should measure the embedder, not an index's approximation. Measured by
``benchmarks/evaluate.py`` on 50,000 vectors, Chroma's HNSW query at depth 1,000 returned 81%
of the exact top 1,000 and took 6-11× longer than this search.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from benchsmith.stores.formats.trec import Run
from benchsmith.stores.persistence.vectors import VectorStore
from benchsmith.stores.progress import ProgressCallback

QUERY_BATCH = 256
DOCUMENT_BLOCK = 1 << 16  # matrix rows scored at once: 64 MB of scores for a batch of queries


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

    def search(
        self,
        query_ids: Sequence[str],
        query_vectors: np.ndarray,
        depth: int,
        on_progress: ProgressCallback | None = None,
    ) -> Run:
        """Top ``depth`` documents per query by inner product, best first (equal scores in index order)."""
        k = min(depth, len(self.doc_ids))
        run: Run = {}
        for start in range(0, len(query_ids), QUERY_BATCH):
            rows, scores = self._top(query_vectors[start : start + QUERY_BATCH], k)
            for offset, (top, top_scores) in enumerate(zip(rows, scores)):
                run[query_ids[start + offset]] = dict(
                    zip(self.doc_ids[top].tolist(), top_scores.astype(float).tolist())
                )
            if on_progress is not None:
                on_progress(min(start + QUERY_BATCH, len(query_ids)), len(query_ids))
        return run

    def _top(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows and scores of each query's ``k`` best documents by (score descending, row), a block
        of the matrix at a time: the scores held are (queries × block), not (queries × corpus),
        and the result is the same whatever the block size."""
        best_rows = np.empty((len(queries), 0), dtype=np.int64)
        best_scores = np.empty((len(queries), 0), dtype=np.float32)
        for block in range(0, len(self.vectors), DOCUMENT_BLOCK):
            scores = queries @ self.vectors[block : block + DOCUMENT_BLOCK].T
            rows = np.broadcast_to(np.arange(block, block + scores.shape[1]), scores.shape)
            # The kept rows come before the block's and stay in row order, so ties go to the lower row.
            rows, scores = np.concatenate([best_rows, rows], axis=1), np.concatenate([best_scores, scores], axis=1)
            if scores.shape[1] > k:
                keep = _first_k_best(scores, k)
                rows, scores = rows[keep].reshape(len(queries), k), scores[keep].reshape(len(queries), k)
            best_rows, best_scores = rows, scores
        order = np.lexsort((best_rows, -best_scores), axis=1)
        return np.take_along_axis(best_rows, order, axis=1), np.take_along_axis(best_scores, order, axis=1)


def _first_k_best(scores: np.ndarray, k: int) -> np.ndarray:
    """A mask of exactly ``k`` entries per row: those above the row's k-th largest score, then
    the first (leftmost) of those equal to it. O(columns) per row: a partition, not a sort."""
    columns = scores.shape[1]
    kth = np.partition(scores, columns - k, axis=1)[:, columns - k, None]
    above = scores > kth
    ties = scores == kth
    wanted = k - above.sum(axis=1, keepdims=True)
    result: np.ndarray = above | (ties & (np.cumsum(ties, axis=1, dtype=np.int32) <= wanted))
    return result
