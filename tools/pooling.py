"""Document pooling for nugget judgments (FreshStack, Thakur et al. 2025, section 3).

Each question is turned into several query texts, the *techniques*:

* inference setting (what a system has at question time): the question itself, sub-questions a
  model writes (joined, one per line), and a closed-book answer a model writes;
* oracle setting (what the benchmark's builder has): the accepted answer, and its nuggets
  joined one per line.

Every technique is retrieved by BM25 and by a dense retriever; the two runs are fused, and the
top ``depth`` documents of each technique's fused run go into the pool, which is their union.

Fusion first sorts each run by score and keeps its top ``depth`` documents, then fuses them
with :func:`tools.retrieval.fusion.fuse_runs` (numpy, safe in parallel pooling workers): ``combsum``
(min-max normalize each run's scores and sum them, FreshStack's "normalized sum"; Fox and
Shaw, TREC-2 1994) by default, ``rrf`` (Σ 1 / (60 + rank); Cormack, Clarke and Büttcher,
SIGIR 2009) offered, with the formulas and tie rules of :mod:`tools.retrieval.fusion`. The cut before
fusing matters: ranks and min-max bounds are those of each run's top ``depth``.
FreshStack's reference (``freshstack.util.fusion``) keeps the first ``depth`` documents of each
run in insertion order and normalizes those: for a run that is not already sorted, that is
not the top ``depth``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from benchsmith.stores.formats.trec import Run
from benchsmith.tools.defaults import MAX_POOL_BATCH_SIZE
from benchsmith.tools.retrieval.fusion import fuse_runs

Setting = Literal["inference", "oracle"]
TECHNIQUES: dict[str, Setting] = {
    "question": "inference",
    "sub_questions": "inference",
    "closed_book_answer": "inference",
    "answer": "oracle",
    "nuggets": "oracle",
}
TECHNIQUE_LABELS = {
    "question": "question",
    "sub_questions": "sub-questions",
    "closed_book_answer": "closed-book answer",
    "answer": "accepted answer",
    "nuggets": "nuggets",
}
RETRIEVERS = ("bm25", "dense")
POOL_FUSION_METHODS = ("combsum", "rrf")


def top_of(run: Run, depth: int) -> Run:
    """Each query's ``depth`` best documents, by descending score (ties by document id)."""
    return {
        query_id: dict(sorted(documents.items(), key=lambda item: (-item[1], item[0]))[:depth])
        for query_id, documents in run.items()
    }


def fuse_top(runs: Sequence[Run], method: str, depth: int) -> Run:
    """Fuse the top ``depth`` of each of two or more runs (each sorted by score first); the
    fused top ``depth`` of every query, by descending fused score, ties by document id."""
    if method not in POOL_FUSION_METHODS:
        raise ValueError(f"unknown pool fusion {method!r}: use one of {', '.join(POOL_FUSION_METHODS)}")
    return fuse_runs([top_of(run, depth) for run in runs], method, depth=depth)  # type: ignore[arg-type]


def pool_documents(fused: Mapping[str, Sequence[str]], depth: int) -> list[str]:
    """The union of each technique's top ``depth`` documents (``fused``: technique → ranked ids),
    best rank first, then in the order of the techniques, each document once."""
    best: dict[str, tuple[int, int]] = {}
    for technique_index, ranking in enumerate(fused.values()):
        for rank, doc_id in enumerate(list(ranking)[:depth]):
            best[doc_id] = min(best.get(doc_id, (rank, technique_index)), (rank, technique_index))
    return sorted(best, key=lambda doc_id: (*best[doc_id], doc_id))


def batches(pool: Sequence[str], size: int) -> list[list[str]]:
    """The pool cut into consecutive batches of at most ``size`` documents."""
    if not 1 <= size <= MAX_POOL_BATCH_SIZE:
        raise ValueError(f"batch size must be within 1..{MAX_POOL_BATCH_SIZE}, got {size}")
    return [list(pool[start : start + size]) for start in range(0, len(pool), size)]
