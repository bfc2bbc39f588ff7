"""Fusion of retrieval runs, vectorized with numpy; the same results as ranx (Bassani, 2022),
which the tests compare against on worked examples.

Methods, for a document d and runs r = 1..n (a document absent from a run contributes 0):

* ``rrf``: Σ_r 1 / (k + rank_r(d)), k = 60 (Cormack, Clarke and Büttcher, SIGIR 2009);
* ``combsum``: Σ_r minmax_r(s_r(d)), minmax_r(s) = (s − min_r) / max(max_r − min_r, 10⁻⁹) per
  query, as ranx normalizes (a query's single document, or all-equal scores, gets 0)
  (Fox and Shaw, TREC-2 1994);
* ``wsum``: Σ_r w_r · minmax_r(s_r(d)), weights given per run.

Each run is sorted first (descending score, ties by document id), so ranks never depend on
the order of a dict; the fused run is sorted the same way, and sums run over the runs in the
order given, as ranx adds them. A run that retrieved nothing for a query (or at all) adds
nothing to it.

Why not ranx itself: its compiled fusion (numba, workqueue threading layer) aborts the whole
process when two threads fuse at once, and converting its result back to Python dicts took
8× as long as BM25 retrieval of the same queries. This module holds no state and calls only
numpy, so any number of threads may fuse at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain, islice, pairwise
from typing import Literal, TypeGuard, get_args

import numpy as np

from benchsmith.stores.formats.trec import Run

FusionMethod = Literal["rrf", "combsum", "wsum"]
FUSION_METHODS: tuple[FusionMethod, ...] = get_args(FusionMethod)
RRF_K = 60
MIN_MAX_FLOOR = 1e-9  # ranx's smallest min-max denominator


def is_fusion_method(name: str | None) -> TypeGuard[FusionMethod]:
    """``name`` is one of FUSION_METHODS."""
    return name in FUSION_METHODS


def sort_run(run: Run) -> Run:
    """Each query's documents by descending score, ties by document id."""
    return {
        query_id: dict(sorted(documents.items(), key=lambda item: (-item[1], item[0])))
        for query_id, documents in run.items()
    }


def fuse_runs(
    runs: Sequence[Mapping[str, Mapping[str, float]]],
    method: FusionMethod,
    weights: Sequence[float] | None = None,
    depth: int | None = None,
) -> Run:
    """One run fused from ``runs``, each query's top ``depth`` documents (all if None).

    Every query of any run is in the result (empty when no run retrieved anything for it)."""
    if len(runs) < 2:
        raise ValueError("fusion needs at least two runs")
    if method not in FUSION_METHODS:
        raise ValueError(f"unknown fusion method {method!r}: use one of {', '.join(FUSION_METHODS)}")
    if method == "wsum" and (weights is None or len(weights) != len(runs)):
        raise ValueError(f"wsum needs one weight per run ({len(runs)}), got {weights}")
    query_ids = sorted(set().union(*runs))
    flat = [_FlatRun(run, query_ids) for run in runs]
    vocabulary, codes_per_run = _document_codes([entries.doc_ids for entries in flat])
    queries, codes, contributions = [], [], []
    for index, (entries, entry_codes) in enumerate(zip(flat, codes_per_run)):
        if not entries.doc_ids:
            continue
        entries.sort(entry_codes, len(vocabulary))
        if method == "rrf":
            values = 1.0 / (RRF_K + entries.ranks())
        else:
            values = entries.min_max()
            if method == "wsum":
                values = float(weights[index]) * values  # type: ignore[index]
        queries.append(entries.query_index)
        codes.append(entries.codes)
        contributions.append(values)
    if not queries:
        return {query_id: {} for query_id in query_ids}
    fused_query, fused_code, fused_score = _sum_by_document(
        np.concatenate(queries), np.concatenate(codes), np.concatenate(contributions), len(vocabulary)
    )
    return _as_run(query_ids, vocabulary, fused_query, fused_code, fused_score, depth)


def _document_codes(id_lists: list[list[str]]) -> tuple[list[str], list[np.ndarray]]:
    """The sorted vocabulary of the ids, and each list's ids as positions in it (so that integer
    order is document id order).

    Ids are told apart by their cached string hashes, sorted as integers: one pass over the
    strings instead of a dict lookup per id. Exact: when two distinct ids share a hash (the set
    of ids is larger than the set of hashes), ids are looked up by value instead."""
    all_ids = list(chain.from_iterable(id_lists))
    bounds = np.cumsum([0, *map(len, id_lists)]).tolist()
    if not all_ids:
        return [], [np.empty(0, dtype=np.int64) for _ in id_lists]
    hashes = np.fromiter(map(hash, all_ids), dtype=np.int64, count=len(all_ids))
    unique_hashes, inverse = np.unique(hashes, return_inverse=True)
    inverse = inverse.reshape(-1)
    if len(unique_hashes) == len(set(all_ids)):
        holder = np.empty(len(unique_hashes), dtype=np.int64)
        holder[inverse] = np.arange(len(all_ids), dtype=np.int64)  # an entry of each distinct id
        representatives = [all_ids[position] for position in holder.tolist()]
        order = sorted(range(len(representatives)), key=representatives.__getitem__)
        vocabulary = [representatives[position] for position in order]
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order), dtype=np.int64)
        codes = rank[inverse]
    else:
        vocabulary = sorted(set(all_ids))
        code_of = {doc_id: code for code, doc_id in enumerate(vocabulary)}
        codes = np.fromiter(map(code_of.__getitem__, all_ids), dtype=np.int64, count=len(all_ids))
    return vocabulary, [codes[start:end] for start, end in pairwise(bounds)]


class _FlatRun:
    """One run's entries for the queries, in flat arrays: query index, document code, score."""

    def __init__(self, run: Mapping[str, Mapping[str, float]], query_ids: list[str]):
        rankings = [run.get(query_id) or {} for query_id in query_ids]
        self.counts = np.fromiter(map(len, rankings), dtype=np.int64, count=len(rankings))
        total = int(self.counts.sum())
        self.doc_ids: list[str] = list(chain.from_iterable(rankings))
        self.scores = np.fromiter(
            chain.from_iterable(ranking.values() for ranking in rankings), dtype=np.float64, count=total
        )
        self.query_index = np.repeat(np.arange(len(query_ids), dtype=np.int64), self.counts)
        self.starts = np.cumsum(self.counts) - self.counts
        self.codes = np.empty(0, dtype=np.int64)

    def sort(self, codes: np.ndarray, vocabulary_size: int) -> None:
        """The entries sorted per query: descending score, ties by document id."""
        self.codes = codes
        order = _ranking_order(self.query_index, self.scores, codes, vocabulary_size)
        if order is not None:
            self.codes, self.scores = self.codes[order], self.scores[order]

    def ranks(self) -> np.ndarray:
        """1-based rank of each (sorted) entry within its query."""
        return (np.arange(len(self.codes), dtype=np.int64) - np.repeat(self.starts, self.counts) + 1).astype(np.float64)

    def min_max(self) -> np.ndarray:
        """Each score min-max normalized within its query, as ranx does."""
        present = self.counts > 0
        low = np.minimum.reduceat(self.scores, self.starts[present])
        high = np.maximum.reduceat(self.scores, self.starts[present])
        denominator = np.maximum(high - low, MIN_MAX_FLOOR)
        counts = self.counts[present]
        result: np.ndarray = (self.scores - np.repeat(low, counts)) / np.repeat(denominator, counts)
        return result


def _ranking_order(
    queries: np.ndarray, scores: np.ndarray, codes: np.ndarray, vocabulary_size: int
) -> np.ndarray | None:
    """The permutation that sorts entries grouped by query by descending score, ties by
    document code; None when they are in that order already.

    Retrievers return their documents by descending score, so usually only runs of tied scores
    need reordering: then one integer sort of (tie group, code) does it."""
    if len(scores) < 2:
        return None
    same_query = queries[1:] == queries[:-1]
    if not np.all((scores[:-1] >= scores[1:]) | ~same_query):
        return _order_by_query_score_code(queries, scores, codes, vocabulary_size)
    tied = same_query & (scores[:-1] == scores[1:])
    if not np.any(tied & (codes[:-1] > codes[1:])):
        return None
    tie_group = np.concatenate(([0], np.cumsum(~tied)))  # entries of one query with one score share a group
    # Keys already ascend but within tie groups: a stable (merging) sort takes linear time.
    return np.argsort(tie_group * vocabulary_size + codes, kind="stable")


def _order_by_query_score_code(
    queries: np.ndarray, scores: np.ndarray, codes: np.ndarray, vocabulary_size: int
) -> np.ndarray:
    """The permutation that sorts entries by query, descending score, then code."""
    _, score_rank = np.unique(-scores, return_inverse=True)  # equal scores share a rank
    key = _packed(queries, score_rank.reshape(-1), int(score_rank.max()) + 1, codes, vocabulary_size)
    return np.lexsort((codes, -scores, queries)) if key is None else _stable_argsort(key)


def _packed(
    high: np.ndarray, middle: np.ndarray, middle_size: int, low: np.ndarray, low_size: int
) -> np.ndarray | None:
    """(high, middle, low) as one int64 whose order is their lexicographic order; None when it
    would not fit in 62 bits."""
    if len(high) == 0 or (int(high.max()) + 1) * middle_size * low_size >= 2**62:
        return None
    result: np.ndarray | None = (high * middle_size + middle) * low_size + low
    return result


def _stable_argsort(keys: np.ndarray) -> np.ndarray:
    """A stable argsort of int64 keys: sorting the keys with their
    positions packed below them is several times faster than an indirect sort."""
    size = len(keys)
    low = int(keys.min()) if size else 0
    if size and (int(keys.max()) - low + 1) * size < 2**62:
        return np.sort((keys - low) * size + np.arange(size, dtype=np.int64)) % size
    return np.argsort(keys, kind="stable")


def _sum_by_document(
    queries: np.ndarray, codes: np.ndarray, values: np.ndarray, vocabulary_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per (query, document): the sum of its values, added in the order the runs were given,
    as ranx adds them."""
    keys = queries * vocabulary_size + codes
    order = _stable_argsort(keys)  # stable: a pair's values stay in run order
    keys = keys[order]
    new_pair = np.empty(len(keys), dtype=bool)
    new_pair[0] = True
    np.not_equal(keys[1:], keys[:-1], out=new_pair[1:])
    pair = np.cumsum(new_pair) - 1
    sums = np.bincount(pair, weights=values[order])  # sequential: 0 + v_1 + v_2 + ..., as ranx sums
    unique_keys = keys[new_pair]
    return unique_keys // vocabulary_size, unique_keys % vocabulary_size, sums


def _as_run(
    query_ids: list[str],
    vocabulary: list[str],
    queries: np.ndarray,
    codes: np.ndarray,
    scores: np.ndarray,
    depth: int | None,
) -> Run:
    order = _order_by_query_score_code(queries, scores, codes, len(vocabulary))
    queries, codes, scores = queries[order], codes[order], scores[order]
    counts = np.bincount(queries, minlength=len(query_ids))
    if depth is not None:
        starts = np.cumsum(counts) - counts
        keep = (np.arange(len(queries)) - np.repeat(starts, counts)) < depth
        codes, scores = codes[keep], scores[keep]
        counts = np.minimum(counts, depth)
    doc_ids = iter(np.asarray(vocabulary, dtype=object)[codes].tolist())
    values = iter(scores.tolist())
    return {
        query_id: dict(zip(islice(doc_ids, count), islice(values, count)))
        for query_id, count in zip(query_ids, counts.tolist())
    }
