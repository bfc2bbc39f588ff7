"""BM25 retrieval with bm25s (Lù, 2024), scored as Lucene (8 and later) does.

score(q, d) = Σ_{t ∈ q} IDF(t) · tf(t, d) / (tf(t, d) + k1 · (1 − b + b · |d| / avgdl)),
IDF(t) = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))            (Robertson and Zaragoza, 2009)

Lucene drops the classic (k1 + 1) factor of the numerator: it scales every score alike and
changes no ranking.

Tokenization (documents and queries alike): lower-cased, split on the regex
``(?u)\\b\\w\\w+\\b`` (words of two or more characters), English stopwords removed, each word
reduced by the Snowball English stemmer (PyStemmer, benchsmith/words.py: one per thread), as
Lucene's English analyzer does.
Defaults k1 = 1.5, b = 0.75. A document is its title and text joined by a space. Documents
sharing no term with the query (score 0) are not returned, as in Lucene.
"""

from __future__ import annotations

from collections.abc import Sequence

import bm25s
import numpy as np

from benchsmith.stores.progress import ProgressCallback
from benchsmith.stores.trec import Run
from benchsmith.words import english_stemmer

DEFAULT_K1, DEFAULT_B = 1.5, 0.75
QUERY_BATCH = 512


class BM25Index:
    def __init__(self, doc_ids: Sequence[str], texts: Sequence[str], k1: float = DEFAULT_K1, b: float = DEFAULT_B):
        self.doc_ids = np.asarray(list(doc_ids), dtype=object)
        self.k1, self.b = k1, b
        # The numpy backend: "auto" picks numba and compiles for seconds in every process.
        self.model = bm25s.BM25(k1=k1, b=b, method="lucene", backend="numpy")
        tokens = bm25s.tokenize(list(texts), lower=True, stopwords="en", stemmer=english_stemmer(), show_progress=False)
        self.model.index(tokens, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """The score of every indexed document for ``query``, in index order (0.0 for a document
        sharing no term with it): for comparing given documents rather than ranking them."""
        tokens = bm25s.tokenize([query], lower=True, stopwords="en", stemmer=english_stemmer(), return_ids=False,
                                show_progress=False)[0]
        ids = self.model.get_tokens_ids(list(tokens))  # terms outside the index's vocabulary score nothing
        if not ids:
            return np.zeros(len(self.doc_ids), dtype=float)
        return np.asarray(self.model.get_scores_from_ids(ids), dtype=float)

    def search(self, queries: dict[str, str], depth: int, on_progress: ProgressCallback | None = None) -> Run:
        """Top ``depth`` documents per query, by descending BM25 score."""
        query_ids = list(queries)
        k = min(depth, len(self.doc_ids))
        run: Run = {}
        for start in range(0, len(query_ids), QUERY_BATCH):
            batch = query_ids[start : start + QUERY_BATCH]
            # Strings, not vocabulary ids: query ids from a separate tokenize call would not
            # match the index's vocabulary.
            tokens = bm25s.tokenize([queries[q] for q in batch], lower=True, stopwords="en", stemmer=english_stemmer(),
                                    return_ids=False, show_progress=False)
            documents, scores = self.model.retrieve(tokens, k=k, show_progress=False, n_threads=1)
            for query_id, rows, row_scores in zip(batch, documents, scores):
                keep = row_scores > 0
                run[query_id] = dict(zip(self.doc_ids[rows[keep]].tolist(), row_scores[keep].astype(float).tolist()))
            if on_progress is not None:
                on_progress(min(start + QUERY_BATCH, len(query_ids)), len(query_ids))
        return run
