"""Reranking the top k of a run with a cross-encoder.

The scorer is any callable from (query, document) pairs to relevance scores: a
sentence-transformers ``CrossEncoder`` by name or path (:func:`cross_encoder_scorer`), or a
scripted function in tests. The top ``k`` documents of each query are re-scored and put
first, in the scorer's order; the rest keep their order below them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from benchsmith.stores.formats.trec import Run
from benchsmith.stores.progress import ProgressCallback
from benchsmith.tools.offline import offline_environment

DEFAULT_RERANK_DEPTH = 100
PairScorer = Callable[[Sequence[tuple[str, str]]], Sequence[float]]


def cross_encoder_scorer(model: str, batch_size: int = 32) -> PairScorer:
    """A sentence-transformers CrossEncoder, loaded offline unless HF_HUB_OFFLINE=0."""
    offline_environment()
    # Deferred, after the offline environment is set: sentence_transformers loads torch (~4 s).
    from sentence_transformers import CrossEncoder

    encoder = CrossEncoder(model, device="cpu")

    def score(pairs: Sequence[tuple[str, str]]) -> Sequence[float]:
        result: Sequence[float] = encoder.predict(list(pairs), batch_size=batch_size, show_progress_bar=False).tolist()
        return result

    return score


def rerank_run(
    run: Run,
    queries: Mapping[str, str],
    documents: Mapping[str, str],
    scorer: PairScorer,
    k: int = DEFAULT_RERANK_DEPTH,
    on_progress: ProgressCallback | None = None,
) -> Run:
    """Rerank each query's top ``k``. Reranked documents score above every document below
    them: the first stage's scores are kept for those, shifted under the reranked block."""
    reranked: Run = {}
    for done, (query_id, ranked) in enumerate(run.items(), start=1):
        ordered = sorted(ranked.items(), key=lambda item: (-item[1], item[0]))
        head, tail = ordered[:k], ordered[k:]
        scores = list(scorer([(queries[query_id], documents[doc_id]) for doc_id, _ in head])) if head else []
        new_order = sorted(zip((doc_id for doc_id, _ in head), scores), key=lambda item: (-item[1], item[0]))
        result = {doc_id: float(score) for doc_id, score in new_order}
        if tail:
            floor = min(scores) if scores else 0.0
            # Keep the tail's order strictly below the reranked block.
            for position, (doc_id, _) in enumerate(tail, start=1):
                result[doc_id] = floor - position
        reranked[query_id] = result
        if on_progress is not None:
            on_progress(done, len(run))
    return reranked
