"""Fusion of retrieval runs with ranx (Bassani, 2022).

Methods, for a document d and runs r = 1..n (a document absent from a run contributes 0):

* ``rrf``: Σ_r 1 / (k + rank_r(d)), k = 60 (Cormack, Clarke and Büttcher, SIGIR 2009);
* ``combsum``: Σ_r minmax_r(s_r(d)), minmax_r(s) = (s − min_r) / (max_r − min_r) per query
  (Fox and Shaw, TREC-2 1994);
* ``wsum``: Σ_r w_r · minmax_r(s_r(d)), weights given per run.

Ties: ranx sorts each query's documents by score with an unstable sort, so tied documents
would get arbitrary ranks. Every run is therefore sorted first (descending score, ties by
document id), and RRF, which uses ranks only, is given each document's rank as its score, so
no two documents of a run tie. A run that retrieved nothing at all adds nothing (ranx
cannot hold one).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Literal

from numba.core.errors import NumbaTypeSafetyWarning
from ranx import Run as RanxRun
from ranx import fuse

from benchsmith.stores.trec import Run

FusionMethod = Literal["rrf", "combsum", "wsum"]
FUSION_METHODS: tuple[str, ...] = ("rrf", "combsum", "wsum")
RRF_K = 60


def sort_run(run: Run) -> Run:
    """Each query's documents by descending score, ties by document id."""
    return {query_id: dict(sorted(documents.items(), key=lambda item: (-item[1], item[0])))
            for query_id, documents in run.items()}


def fuse_runs(runs: Sequence[Run], method: FusionMethod, weights: Sequence[float] | None = None,
              depth: int | None = None) -> Run:
    """One run fused from ``runs``, each query's top ``depth`` documents (all if None)."""
    if len(runs) < 2:
        raise ValueError("fusion needs at least two runs")
    query_ids = sorted(set().union(*runs))
    if method == "wsum" and (weights is None or len(weights) != len(runs)):
        raise ValueError(f"wsum needs one weight per run ({len(runs)}), got {weights}")
    kept = [index for index, run in enumerate(runs) if any(run.values())]
    if method == "rrf":  # ranks as scores: no ties left for ranx to order arbitrarily
        runs = [_rank_scores(run) for run in runs]
    # ranx wants the same queries in every run; a query a retriever found nothing for is empty.
    aligned = [RanxRun(sort_run({query_id: runs[index].get(query_id, {}) for query_id in query_ids}))
               for index in kept]
    kept_weights = [weights[index] for index in kept] if weights is not None else None
    if len(aligned) < 2:
        return _single(aligned, query_ids, method, kept_weights, depth)
    with warnings.catch_warnings():
        # ranx's compiled RRF casts its rank counter from uint64 to int64: harmless for any run size.
        warnings.simplefilter("ignore", NumbaTypeSafetyWarning)
        fused = _ranx_fuse(aligned, method, kept_weights)
    return _finish(fused.to_dict(), query_ids, depth)


def _finish(fused: dict[str, dict[str, float]], query_ids: list[str], depth: int | None) -> Run:
    result = sort_run({query_id: dict(fused.get(query_id, {})) for query_id in query_ids})
    if depth is not None:
        result = {query_id: dict(list(documents.items())[:depth]) for query_id, documents in result.items()}
    return result


def _rank_scores(run: Run) -> Run:
    """Each document's score replaced by (documents of its query − its 0-based rank)."""
    return {query_id: {doc_id: float(len(ranked) - rank) for rank, doc_id in enumerate(ranked)}
            for query_id, ranked in sort_run(run).items()}


def _single(aligned: list[RanxRun], query_ids: list[str], method: FusionMethod, weights: list[float] | None,
            depth: int | None) -> Run:
    """Fusion when at most one run retrieved anything: the formulas applied to that run alone."""
    if not aligned:
        return {query_id: {} for query_id in query_ids}
    fused: dict[str, dict[str, float]] = {}
    for query_id, documents in aligned[0].to_dict().items():
        ranked = sorted(documents.items(), key=lambda item: (-item[1], item[0]))
        if method == "rrf":
            fused[query_id] = {doc_id: 1 / (RRF_K + rank) for rank, (doc_id, _) in enumerate(ranked, start=1)}
        else:  # min-max, as ranx normalizes: a single document (max = min) gets 0
            low, high = (ranked[-1][1], ranked[0][1]) if ranked else (0.0, 0.0)
            weight = weights[0] if method == "wsum" and weights else 1.0
            fused[query_id] = {doc_id: weight * ((score - low) / (high - low) if high > low else 0.0)
                               for doc_id, score in ranked}
    return _finish(fused, query_ids, depth)


def _ranx_fuse(aligned: list[RanxRun], method: FusionMethod, weights: Sequence[float] | None) -> RanxRun:
    if method == "rrf":
        fused = fuse(aligned, norm=None, method="rrf", params={"k": RRF_K})
    elif method == "combsum":
        fused = fuse(aligned, norm="min-max", method="sum")
    elif method == "wsum":
        fused = fuse(aligned, norm="min-max", method="wsum", params={"weights": list(weights)})
    else:
        raise ValueError(f"unknown fusion method {method!r}: use one of {', '.join(FUSION_METHODS)}")
    return fused
