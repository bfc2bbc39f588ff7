"""Fusion of retrieval runs with ranx (Bassani, 2022).

Methods, for a document d and runs r = 1..n (a document absent from a run contributes 0):

* ``rrf``: Σ_r 1 / (k + rank_r(d)), k = 60 (Cormack, Clarke and Büttcher, SIGIR 2009);
* ``combsum``: Σ_r minmax_r(s_r(d)), minmax_r(s) = (s − min_r) / (max_r − min_r) per query
  (Fox and Shaw, TREC-2 1994);
* ``wsum``: Σ_r w_r · minmax_r(s_r(d)), weights given per run.

ranx ranks a query's documents in the order its dict holds them, so every run is sorted by
descending score first: an unsorted run (a TREC file in rank order of another system, a
dict built in id order) would otherwise be fused by the wrong ranks.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Literal

from numba.core.errors import NumbaTypeSafetyWarning
from ranx import Run as RanxRun
from ranx import fuse

from stores.trec import Run

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
    # ranx wants the same queries in every run; a query a retriever found nothing for is empty.
    aligned = [RanxRun(sort_run({query_id: run.get(query_id, {}) for query_id in query_ids})) for run in runs]
    with warnings.catch_warnings():
        # ranx's compiled RRF casts its rank counter from uint64 to int64: harmless for any run size.
        warnings.simplefilter("ignore", NumbaTypeSafetyWarning)
        fused = _ranx_fuse(aligned, method, weights)
    result = sort_run({query_id: dict(documents) for query_id, documents in fused.to_dict().items()})
    for query_id in query_ids:
        result.setdefault(query_id, {})
    if depth is not None:
        result = {query_id: dict(list(documents.items())[:depth]) for query_id, documents in result.items()}
    return result


def _ranx_fuse(aligned: list[RanxRun], method: FusionMethod, weights: Sequence[float] | None) -> RanxRun:
    if method == "rrf":
        fused = fuse(aligned, norm=None, method="rrf", params={"k": RRF_K})
    elif method == "combsum":
        fused = fuse(aligned, norm="min-max", method="sum")
    elif method == "wsum":
        if weights is None or len(weights) != len(aligned):
            raise ValueError(f"wsum needs one weight per run ({len(aligned)}), got {weights}")
        fused = fuse(aligned, norm="min-max", method="wsum", params={"weights": list(weights)})
    else:
        raise ValueError(f"unknown fusion method {method!r}: use one of {', '.join(FUSION_METHODS)}")
    return fused
