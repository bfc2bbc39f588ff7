"""The user's own retriever as a hard-negative scorer (issue 34).

The reference scores each query against its own candidates only; an outside retriever cannot be
told which candidates those are, so it searches its own index of the dataset's documents (the
build's BEIR exports, ids ``ROW#P``, ``ROW#MissK``, ``ROW#HNJ``; a LangChain retriever may return
the documents' text instead) for each distinct query, asked for its top :data:`OUTSIDE_DEPTH`
with no history. Each candidate is scored by its rank in that answer, the ones it did not rank
tied last (tools/retrieval/multicondition_scoring.rank_scores). The calls are the evaluation's:
concurrent, rate-limited, retried, each finished query logged in the run directory
(``outside/<scorer>.jsonl``) so a killed scoring run never asks a finished query again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchsmith.graphs.runtime.corpus_indexes import document_text
from benchsmith.stores.formats.multiconir import DatasetRow
from benchsmith.stores.progress import ProgressCallback
from benchsmith.tools.retrieval.multicondition_scoring import Group, ScorerSpec, rank_scores
from benchsmith.tools.retrieval.outside_retrieval import OutsideCall, outside_run_batches, unmapped_warning
from benchsmith.tools.retrieval.outside_retrievers import CorpusIds, resolve_retriever

OUTSIDE_DIR = "outside"  # each outside scorer's log of finished queries, in the run directory
OUTSIDE_DEPTH = 100  # results asked per query: deep enough that a candidate missing from them ranks last for a reason
BATCH = 64  # queries per batch of the log (progress is reported per batch)


@dataclass(frozen=True)
class OutsideCalls:
    """How an outside scorer's calls run: where they are logged, and the call settings."""

    log_dir: Path
    timeout_s: float
    concurrency: int
    max_attempts: int
    rate_limit: float | None


def dataset_documents(rows: Sequence[DatasetRow]) -> dict[str, tuple[str, str]]:
    """``{doc id: (title, text)}`` of every document of the dataset, under its BEIR export's id."""
    documents: dict[str, tuple[str, str]] = {}
    for row in rows:
        documents[f"{row.id}#P"] = (row.title, row.positive)
        for k, text in enumerate(row.single_miss, start=1):
            if text is not None:
                documents[f"{row.id}#Miss{k}"] = (row.title, text)
        for j, text in enumerate(row.ladder, start=1):
            if text is not None:
                documents[f"{row.id}#HN{j}"] = (row.title, text)
    return documents


def outside_log(spec: ScorerSpec, log_dir: Path) -> Path:
    return log_dir / f"{spec.file_stem}.jsonl"


def query_id(text: str) -> str:
    """A query's id in the log: its text's hash (groups share queries: Task 2 and 3 documents, Task 1's k)."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def outside_group_scorer(
    spec: ScorerSpec, rows: Sequence[DatasetRow], calls: OutsideCalls, on_progress: ProgressCallback | None = None
) -> Callable[[list[Group]], list[list[float]]]:
    """The function that scores groups by the outside retriever's ranks."""
    documents = dataset_documents(rows)

    def score_groups(groups: list[Group]) -> list[list[float]]:
        asked = {query_id(query): OutsideCall(query, []) for query, _ in groups}
        ranked_texts: dict[str, list[str]] = {}
        query_ids = list(asked)
        for done, batch in outside_run_batches(
            resolve_retriever(str(spec.model), calls.timeout_s),
            asked,
            query_ids,
            OUTSIDE_DEPTH,
            CorpusIds(documents, document_text),
            outside_log(spec, calls.log_dir),
            batch_size=BATCH,
            concurrency=calls.concurrency,
            max_attempts=calls.max_attempts,
            rate_limit=calls.rate_limit,
        ):
            for key, ranking in batch.items():
                # By its scores; a stable sort keeps the retriever's own order among ties.
                ordered = sorted(ranking.items(), key=lambda item: -item[1])
                ranked_texts[key] = [documents[doc_id][1] for doc_id, _ in ordered]
            if on_progress is not None:
                on_progress(done, len(query_ids))
        return [rank_scores(candidates, ranked_texts[query_id(query)]) for query, candidates in groups]

    return score_groups


def outside_scorer_warning(spec: ScorerSpec, log_dir: Path) -> str | None:
    """What the report says when the retriever returned documents the dataset does not hold."""
    return unmapped_warning(spec.label, outside_log(spec, log_dir))
