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

import itertools
import math
import re
from collections.abc import Collection, Iterable, Sequence

import bm25s
import numpy as np
from bm25s.stopwords import STOPWORDS_EN

from benchsmith.stores.formats.trec import Run
from benchsmith.stores.persistence.lexical_indexes import StoredBM25
from benchsmith.stores.progress import ProgressCallback
from benchsmith.words import english_stemmer

DEFAULT_K1, DEFAULT_B = 1.5, 0.75
QUERY_BATCH = 512
INDEX_BATCH = 4096  # documents tokenized at once while indexing
RARE_POSTINGS_SHARE = 0.05  # query terms whose postings together stay under this share of the corpus are "rare"
DENSE_COLUMN_DIVISOR = 16  # a term in at least 1/16 of the documents is scored as a dense column
SCORE_BLOCK = 1 << 22  # (document, term) scores computed at once while indexing
TOKEN_PATTERN = re.compile(r"(?u)\b\w\w+\b")  # bm25s.tokenize's default pattern


class BM25Index:
    def __init__(self, doc_ids: Sequence[str], texts: Sequence[str], k1: float = DEFAULT_K1, b: float = DEFAULT_B):
        self._index(zip(doc_ids, texts), k1, b)

    @classmethod
    def from_stream(
        cls,
        documents: Iterable[tuple[str, str]],
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        on_progress: ProgressCallback | None = None,
    ) -> BM25Index:
        """The index of ``(doc id, text)`` pairs read once, a batch at a time: no text is held."""
        index = cls.__new__(cls)
        index._index(documents, k1, b, on_progress)
        return index

    def _index(
        self, documents: Iterable[tuple[str, str]], k1: float, b: float, on_progress: ProgressCallback | None = None
    ) -> None:
        """bm25s's index (the same scores, bit for bit) built from batches of texts.

        bm25s indexes a list of every document's token list (Python objects of about 1 KB a
        document) and rebuilds its vocabulary per call; here each batch is tokenized as
        bm25s.tokenize does (:class:`_Terms`, each word stemmed once for the whole stream) into
        (document, term, tf) arrays, and the scores are bm25s's formulas evaluated in the same
        order and precision: idf in Python floats, tf normalization in float64, products stored
        as float32."""
        self.k1, self.b = k1, b
        self.model = bm25s.BM25(k1=k1, b=b, method="lucene", backend="numpy")
        ids: list[str] = []
        terms_of = _Terms()
        docs, terms, frequencies, lengths = [], [], [], []
        iterator = iter(documents)
        while batch := list(itertools.islice(iterator, INDEX_BATCH)):
            batch_ids, batch_texts = zip(*batch)
            flat, counts = terms_of.numbers(batch_texts)
            vocabulary_size = max(1, len(terms_of.terms))
            # (document, term) pairs sorted by document then term, with their counts
            pairs, tf = np.unique(np.repeat(np.arange(len(batch)), counts) * vocabulary_size + flat, return_counts=True)
            docs.append((pairs // vocabulary_size + len(ids)).astype(np.int32))
            terms.append((pairs % vocabulary_size).astype(np.int32))
            frequencies.append(tf.astype(np.float32))
            lengths.append(counts)
            ids.extend(batch_ids)
            if on_progress is not None:
                on_progress(len(ids), None)
        if not ids:
            raise ValueError("a BM25 index needs at least one document")
        self.doc_ids = np.asarray(ids, dtype=object)
        doc, term, tf = np.concatenate(docs), np.concatenate(terms), np.concatenate(frequencies)
        del docs, terms, frequencies
        doc_lengths = np.concatenate(lengths)
        document_frequencies = np.bincount(term, minlength=len(terms_of.terms))
        count = len(ids)
        idf = np.array(
            [math.log(1 + (count - df + 0.5) / (df + 0.5)) for df in document_frequencies.tolist()], dtype=np.float32
        )
        normalization = k1 * ((1 - b) + b * doc_lengths / doc_lengths.mean())
        order = np.argsort(term, kind="stable")  # columns by term, documents in order within each
        data, indices = np.empty(len(order), dtype=np.float32), np.empty(len(order), dtype=np.int32)
        for start in range(0, len(order), SCORE_BLOCK):  # float64 temporaries a block at a time
            rows = order[start : start + SCORE_BLOCK]
            frequency, document = tf[rows].astype(np.float64), doc[rows]
            data[start : start + len(rows)] = idf[term[rows]] * (frequency / (normalization[document] + frequency))
            indices[start : start + len(rows)] = document
        indptr = np.zeros(len(terms_of.terms) + 1, dtype=np.int64)
        np.cumsum(document_frequencies, out=indptr[1:])
        self._set_matrix(data, indices, indptr, terms_of.terms)

    def _set_matrix(
        self, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, vocabulary: dict[str, int]
    ) -> None:
        """What bm25s.BM25.index sets: the score matrix (CSC), the vocabulary with its empty token."""
        self.model.scores = {"data": data, "indices": indices, "indptr": indptr, "num_docs": len(self.doc_ids)}
        self.model.vocab_dict = {**vocabulary, "": len(vocabulary)} if "" not in vocabulary else vocabulary
        self.model.unique_token_ids_set = set(self.model.vocab_dict.values())
        self.model.nonoccurrence_array = None
        # bm25s lets the scoring function be replaced (its numba backend does): ours adds the
        # common terms' columns as dense vectors.
        self._dense_columns: dict[int, np.ndarray] | None = None
        self.model._compute_relevance_from_scores = self._relevance

    def _relevance(
        self,
        data: np.ndarray,
        indptr: np.ndarray,
        indices: np.ndarray,
        num_docs: int,
        query_tokens_ids: np.ndarray,
        dtype: np.dtype,
    ) -> np.ndarray:
        """bm25s's query scores, the same float32 sums in the same order: each query token's
        column added in turn. A common term's column (in at least 1/16 of the documents) is added
        as a dense vector, zeros elsewhere (adding 0 changes no sum): one vectorized pass instead
        of np.add.at over its postings, a third of the corpus for a word such as "system"."""
        dense = self._common_columns()
        scores = np.zeros(num_docs, dtype=dtype)
        for term in query_tokens_ids.tolist():
            if (column := dense.get(term)) is not None:
                scores += column
            else:
                np.add.at(scores, indices[indptr[term] : indptr[term + 1]], data[indptr[term] : indptr[term + 1]])
        return scores

    def _common_columns(self) -> dict[int, np.ndarray]:
        if self._dense_columns is None:
            indptr, indices, data = (self.model.scores[key] for key in ("indptr", "indices", "data"))
            count = len(self.doc_ids)
            dense: dict[int, np.ndarray] = {}
            for term in np.flatnonzero(indptr[1:] - indptr[:-1] >= max(1, count // DENSE_COLUMN_DIVISOR)).tolist():
                column = np.zeros(count, dtype=data.dtype)
                column[indices[indptr[term] : indptr[term + 1]]] = data[indptr[term] : indptr[term + 1]]
                dense[term] = column
            self._dense_columns = dense
        return self._dense_columns

    def stored(self) -> StoredBM25:
        """The index as stores.persistence.lexical_indexes keeps it."""
        columns = len(self.model.scores["indptr"]) - 1  # the empty token bm25s adds has no column
        vocabulary = [
            term for term, number in sorted(self.model.vocab_dict.items(), key=lambda item: item[1]) if number < columns
        ]
        return StoredBM25(
            doc_ids=self.doc_ids.tolist(),
            vocabulary=vocabulary,
            data=self.model.scores["data"],
            indices=self.model.scores["indices"],
            indptr=self.model.scores["indptr"],
            k1=self.k1,
            b=self.b,
        )

    @classmethod
    def from_stored(cls, stored: StoredBM25) -> BM25Index:
        index = cls.__new__(cls)
        index.k1, index.b = stored.k1, stored.b
        index.model = bm25s.BM25(k1=stored.k1, b=stored.b, method="lucene", backend="numpy")
        index.doc_ids = np.asarray(stored.doc_ids, dtype=object)
        index._set_matrix(
            stored.data, stored.indices, stored.indptr, {term: number for number, term in enumerate(stored.vocabulary)}
        )
        return index

    def scores(self, query: str) -> np.ndarray:
        """The score of every indexed document for ``query``, in index order (0.0 for a document
        sharing no term with it): for comparing given documents rather than ranking them."""
        tokens = bm25s.tokenize(
            [query], lower=True, stopwords="en", stemmer=english_stemmer(), return_ids=False, show_progress=False
        )[0]
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
            tokens = bm25s.tokenize(
                [queries[q] for q in batch],
                lower=True,
                stopwords="en",
                stemmer=english_stemmer(),
                return_ids=False,
                show_progress=False,
            )
            documents, scores = self.model.retrieve(tokens, k=k, show_progress=False, n_threads=1)
            for query_id, rows, row_scores in zip(batch, documents, scores):
                keep = row_scores > 0
                run[query_id] = dict(zip(self.doc_ids[rows[keep]].tolist(), row_scores[keep].astype(float).tolist()))
            if on_progress is not None:
                on_progress(min(start + QUERY_BATCH, len(query_ids)), len(query_ids))
        return run

    def best_with_ties(self, queries: dict[str, str], cutoff: int) -> Run:
        """Per query, the documents scoring at least its ``cutoff``-th best positive score (all of
        them when fewer score above 0), with :meth:`search`'s scores: every document a measure at
        rank ``cutoff`` reads of a deeper run, since measures order equal scores by doc id.

        Exact and mostly without scoring the corpus (MaxScore, Turtle and Flood 1995): the
        documents holding a rare query term are scored (bm25s's float32 sums, in query order);
        when even the best a document of common terms alone could score, the sum of those terms'
        highest scores, stays below the cut among them, no other document can reach it.
        Otherwise the whole corpus is scored, as :meth:`search` does."""
        tokenized = bm25s.tokenize(
            list(queries.values()),
            lower=True,
            stopwords="en",
            stemmer=english_stemmer(),
            return_ids=False,
            show_progress=False,
        )
        run: Run = {}
        for query_id, tokens in zip(queries, tokenized):
            term_ids = self.model.get_tokens_ids(list(tokens))
            rows, scores = self._pruned_scores(term_ids, cutoff) if term_ids else (np.empty(0, np.int64), np.empty(0))
            if rows is None:
                scores = self.model.get_scores_from_ids(term_ids)
                rows = np.flatnonzero(scores > 0)
                scores = scores[rows]
            if len(rows) > cutoff:
                keep = scores >= np.partition(scores, len(scores) - cutoff)[len(scores) - cutoff]
                rows, scores = rows[keep], scores[keep]
            run[query_id] = dict(zip(self.doc_ids[rows].tolist(), scores.astype(float).tolist()))
        return run

    def _pruned_scores(self, term_ids: list[int], cutoff: int) -> tuple[np.ndarray | None, np.ndarray]:
        """(rows, exact scores) of the documents holding the query's rare terms, when they hold
        its ``cutoff`` best; (None, ...) when the whole corpus must be scored."""
        matrix = self.model.scores
        indptr, indices, data = matrix["indptr"], matrix["indices"], matrix["data"]
        frequency = {term: int(indptr[term + 1] - indptr[term]) for term in set(term_ids)}
        rare, postings = set(), 0
        for term in sorted(frequency, key=frequency.__getitem__):
            if postings + frequency[term] > RARE_POSTINGS_SHARE * len(self.doc_ids):
                break
            rare.add(term)
            postings += frequency[term]
        if not rare:
            return None, np.empty(0)
        rows = np.unique(np.concatenate([indices[indptr[term] : indptr[term + 1]] for term in rare]))
        scores = np.zeros(len(rows), dtype=np.float32)
        for term in term_ids:  # bm25s's order: query token after token, a repeated token twice
            column = indices[indptr[term] : indptr[term + 1]]  # documents in ascending order
            at = np.minimum(np.searchsorted(column, rows), len(column) - 1)
            scores += np.where(column[at] == rows, data[indptr[term] + at], np.float32(0))
        positive = scores > 0
        rows, scores = rows[positive], scores[positive]
        if len(rows) < cutoff:
            return None, scores
        cut = np.partition(scores, len(scores) - cutoff)[len(scores) - cutoff]
        common_best = sum(float(self._term_maxima()[term]) for term in term_ids if term not in rare)
        if common_best * (1 + 1e-5) >= cut:  # a document without a rare term might tie or pass the cut
            return None, scores
        return rows, scores

    def _term_maxima(self) -> np.ndarray:
        """Each term's highest score in any document (computed once)."""
        if getattr(self, "_maxima", None) is None:
            matrix = self.model.scores
            indptr, data = matrix["indptr"], matrix["data"]
            starts = np.minimum(indptr[:-1], max(0, len(data) - 1))
            maxima = np.maximum.reduceat(data, starts) if len(data) else np.zeros(len(starts), np.float32)
            self._maxima = np.where(indptr[1:] > indptr[:-1], maxima, 0)
        return self._maxima


class _Terms:
    """bm25s.tokenize's tokens (lower-cased, split on its pattern, English stopwords out, Snowball
    stems) as term numbers, for batch after batch: each distinct word is stemmed once for the
    whole stream, where bm25s.tokenize rebuilds and stems the vocabulary of every call."""

    def __init__(self) -> None:
        self.terms: dict[str, int] = {}  # stem → term number, in order of first appearance
        self.word_terms: dict[str, int] = dict.fromkeys(STOPWORDS_EN, -1)  # word → term number; -1: a stopword

    def numbers(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The texts' term numbers, text after text, and each text's count of them."""
        words = [TOKEN_PATTERN.findall(text.lower()) for text in texts]
        if new := set(itertools.chain.from_iterable(words)).difference(self.word_terms):
            new_words = sorted(new)
            for word, stem in zip(new_words, english_stemmer().stemWords(new_words)):
                self.word_terms[word] = self.terms.setdefault(stem, len(self.terms))
        flat = np.fromiter(
            map(self.word_terms.__getitem__, itertools.chain.from_iterable(words)),
            dtype=np.int64,
            count=sum(map(len, words)),
        )
        kept = flat >= 0
        text_of = np.repeat(np.arange(len(texts)), [len(text_words) for text_words in words])
        return flat[kept], np.bincount(text_of[kept], minlength=len(texts))


def top_scored(
    doc_ids: Sequence[str] | np.ndarray, scores: np.ndarray, depth: int, leave_out: Collection[str] = ()
) -> list[str]:
    """The ``depth`` documents of highest positive score, ties by id, ``leave_out`` skipped:
    what sorting every document by ``(-score, id)`` gives, without sorting a million of them."""
    candidates = np.flatnonzero(scores > 0)
    wanted = depth + len(leave_out)  # each left-out document can push one more in
    if len(candidates) > wanted:
        values = scores[candidates]
        cutoff = np.partition(values, len(values) - wanted)[len(values) - wanted]
        candidates = candidates[values >= cutoff]  # ties at the cut stay: their ids decide
    ranked = sorted(candidates.tolist(), key=lambda i: (-float(scores[i]), doc_ids[i]))
    return [doc_ids[i] for i in ranked if doc_ids[i] not in leave_out][:depth]
