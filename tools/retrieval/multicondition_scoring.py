"""Scoring every (query, candidate) pair of a multi-condition dataset, as the MultiConIR
reference scripts do (github.com/EIT-NLP/MultiConIR, evaluation/models/): no retrieval over a
corpus, each query is scored against its own candidates only.

A *group* is one query and the candidates scored together:

* Task 1: Query_k with [Positive, Miss_k], for each row and k;
* Task 2: the instruction-style Query_N with [Positive, HN_1..HN_N];
* Task 3: the descriptive-style Query_N with the same documents.

Scorers (``--retriever`` / ``--rerank``):

* ``dense[:MODEL]``: cosine similarity of L2-normalized embeddings;
* ``rerank:MODEL``: a cross-encoder's score of each pair;
* ``bm25-corpus``: BM25 (tools/retrieval/bm25.py: Lucene's formula, stemmed) with IDF over the whole
  dataset corpus, every distinct document of every row;
* ``bm25-row``: BM25 with IDF over the group's own candidates only, as the reference's BM25.py
  builds one index per group (there with rank_bm25's BM25Okapi on whitespace tokens);
* the user's own retriever (``http://…``, ``py:module:object``, a registered name): it searches
  its own index of the dataset's documents, and each candidate is scored by its rank there
  (:func:`rank_scores`; graphs/hardneg/outside.py asks it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.multiconir import DatasetRow, LadderScores, Task1Scores
from benchsmith.stores.progress import ProgressCallback
from benchsmith.tools.retrieval.bm25 import BM25Index
from benchsmith.tools.retrieval.embedding import Embedder
from benchsmith.tools.retrieval.rerank import PairScorer
from benchsmith.tools.retrieval.retriever_specs import parse_retriever

Group = tuple[str, Sequence[str]]  # a query and its candidates
BM25_VARIANTS = {
    "bm25-corpus": "IDF over the whole dataset corpus",
    "bm25-row": "IDF over each query's own candidates (as the reference scripts)",
}
PAIR_BATCH = 256
FILE_UNSAFE = re.compile(r"[^A-Za-z0-9._=-]+")


@dataclass(frozen=True)
class ScorerSpec:
    kind: str  # dense, rerank, bm25-corpus, bm25-row, outside
    model: str | None = None  # dense, rerank: the model; outside: the retriever's spec

    @property
    def label(self) -> str:
        if self.kind == "outside":
            return str(self.model)
        if self.kind == "dense":
            return f"dense:{self.model}" if self.model else "dense"
        return f"rerank:{self.model}" if self.kind == "rerank" else self.kind

    @property
    def file_stem(self) -> str:
        return FILE_UNSAFE.sub("_", self.label)


def parse_scorers(retrievers: Sequence[str], rerankers: Sequence[str] = ()) -> list[ScorerSpec]:
    """``bm25`` (both IDF variants), ``bm25:corpus``, ``bm25:row``, ``dense[:MODEL]``; each
    reranker a cross-encoder name or path. Duplicates are dropped, the order kept."""
    specs: list[ScorerSpec] = []
    for text in retrievers:
        text = text.strip()
        if text == "bm25":
            specs += [ScorerSpec("bm25-corpus"), ScorerSpec("bm25-row")]
        elif text in ("bm25:corpus", "bm25-corpus"):
            specs.append(ScorerSpec("bm25-corpus"))
        elif text in ("bm25:row", "bm25-row"):
            specs.append(ScorerSpec("bm25-row"))
        else:
            parsed = parse_retriever(text)
            if parsed.kind not in ("dense", "outside"):
                raise InputError(
                    f"--retriever {text!r}: pairs are scored one by one here, so use bm25, bm25:corpus, "
                    "bm25:row, dense[:MODEL] or your own retriever (fusing the ranks of two or twelve candidates "
                    "means little)"
                )
            specs.append(ScorerSpec(parsed.kind, parsed.model))
    for model in rerankers:
        if not model.strip():
            raise InputError("--rerank needs a model name or path")
        specs.append(ScorerSpec("rerank", model.strip()))
    if not specs:
        raise InputError("give at least one --retriever or --rerank")
    return list(dict.fromkeys(specs))


# ---------------------------------------------------------------------------------------
# Scorers of groups.


def dense_group_scores(groups: Sequence[Group], embedder: Embedder) -> list[list[float]]:
    """Cosine similarity (dot product of the L2-normalized embeddings); each distinct text is embedded once."""
    texts = list(dict.fromkeys(text for query, candidates in groups for text in (query, *candidates)))
    position = {text: index for index, text in enumerate(texts)}
    vectors: np.ndarray = np.asarray(embedder.encode(texts), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1, norms)
    return [
        [float(vectors[position[query]] @ vectors[position[text]]) for text in candidates]
        for query, candidates in groups
    ]


def cross_encoder_group_scores(
    groups: Sequence[Group], scorer: PairScorer, on_progress: ProgressCallback | None = None
) -> list[list[float]]:
    """The cross-encoder's score of each (query, candidate) pair, scored in batches."""
    pairs = [(query, text) for query, candidates in groups for text in candidates]
    scores: list[float] = []
    for start in range(0, len(pairs), PAIR_BATCH):
        scores += [float(score) for score in scorer(pairs[start : start + PAIR_BATCH])]
        if on_progress is not None:
            on_progress(min(start + PAIR_BATCH, len(pairs)), len(pairs))
    grouped, position = [], 0
    for _, candidates in groups:
        grouped.append(scores[position : position + len(candidates)])
        position += len(candidates)
    return grouped


def bm25_corpus_group_scores(groups: Sequence[Group], corpus: Sequence[str]) -> list[list[float]]:
    """BM25 with document frequencies over ``corpus`` (which holds every candidate)."""
    texts = list(dict.fromkeys(corpus))
    position = {text: index for index, text in enumerate(texts)}
    index = BM25Index([str(i) for i in range(len(texts))], texts)
    cache: dict[str, np.ndarray] = {}
    result = []
    for query, candidates in groups:
        if query not in cache:
            cache[query] = index.scores(query)
        result.append([float(cache[query][position[text]]) for text in candidates])
    return result


def bm25_row_group_scores(groups: Sequence[Group]) -> list[list[float]]:
    """BM25 with document frequencies over the group's own candidates: one small index per group."""
    return [
        [float(score) for score in BM25Index([str(i) for i in range(len(candidates))], list(candidates)).scores(query)]
        for query, candidates in groups
    ]


def rank_scores(candidates: Sequence[str], ranked: Sequence[str]) -> list[float]:
    """Each candidate's score from its first place in ``ranked`` (texts, best first): ``len(ranked) -
    rank``, so a higher place scores higher; a candidate not ranked scores 0, tied last with every
    other one not ranked (and a tie loses, as everywhere in these measures)."""
    place: dict[str, int] = {}
    for rank, text in enumerate(ranked):
        place.setdefault(text, rank)
    return [float(len(ranked) - place[text]) if text in place else 0.0 for text in candidates]


# ---------------------------------------------------------------------------------------
# Tables.


def task1_groups(rows: Sequence[DatasetRow]) -> list[Group]:
    return [
        (row.instruction[k], [row.positive, *_written([row.single_miss[k]])]) for row in rows for k in range(row.count)
    ]


def ladder_groups(rows: Sequence[DatasetRow], descriptive: bool) -> list[Group]:
    return [
        ((row.descriptive if descriptive else row.instruction)[-1], [row.positive, *_written(row.ladder)])
        for row in rows
    ]


def _written(texts: Sequence[str | None]) -> list[str]:
    """A row's negatives, each written: a task scores only the rows that have all of its own (has_task1, has_ladder)."""
    written = [text for text in texts if text is not None]
    if len(written) < len(texts):
        raise ValueError("a row is scored on a task only with every negative of the task written")
    return written


@dataclass
class ScoreTables:
    task1: Task1Scores | None  # None when no row has a complete single-miss set
    task2: LadderScores | None  # None when no row has a complete ladder
    task3: LadderScores | None


def score_tables(rows: Sequence[DatasetRow], score_groups: Callable[[list[Group]], list[list[float]]]) -> ScoreTables:
    """The three score tables of ``rows`` (Index: the row's position in ``rows``), every group
    scored in one call of ``score_groups``."""
    task1_rows = [(index, row) for index, row in enumerate(rows) if row.has_task1]
    ladder_rows = [(index, row) for index, row in enumerate(rows) if row.has_ladder]
    groups = (
        task1_groups([row for _, row in task1_rows])
        + ladder_groups([row for _, row in ladder_rows], False)
        + ladder_groups([row for _, row in ladder_rows], True)
    )
    scores = score_groups(groups) if groups else []
    count = rows[0].count if rows else 0
    task1_part, rest = scores[: len(task1_rows) * count], scores[len(task1_rows) * count :]
    task1 = None
    if task1_rows:
        cells = np.asarray(task1_part, dtype=float).reshape(len(task1_rows), count, 2)
        task1 = Task1Scores([str(index) for index, _ in task1_rows], cells[:, :, 0], cells[:, :, 1])
    task2 = task3 = None
    if ladder_rows:
        index = [str(position) for position, _ in ladder_rows]
        task2 = LadderScores(index, np.asarray(rest[: len(ladder_rows)], dtype=float))
        task3 = LadderScores(list(index), np.asarray(rest[len(ladder_rows) :], dtype=float))
    return ScoreTables(task1, task2, task3)


def dataset_corpus(rows: Sequence[DatasetRow]) -> list[str]:
    """Every distinct document of the dataset: positives, ladders and single-miss sets."""
    return list(
        dict.fromkeys(
            text for row in rows for text in (row.positive, *row.ladder, *row.single_miss) if text is not None
        )
    )
