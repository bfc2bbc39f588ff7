"""How well select's offline pool judge (agents/pool_judge.py, ``PoolJudge.baseline``) agrees
with human relevance labels: the 58 hand-labelled questions of ``data/stdlib-validity.jsonl``.

The stdlib corpus is cleaned and chunked as ``benchsmith ingest stdlib`` does (no embedding,
as tests/test_validity_questions.py does); BM25 (tools/retrieval/bm25.py, title and text) pools each
question's top 10 chunks; every pooled (question, chunk) pair is judged, and a pair is gold when
the labels name its chunk. Per question: true positives (gold judged relevant), false positives
(non-gold judged relevant), false negatives (pooled gold not judged relevant). Aggregated over
all pairs (micro averages):

    precision = Σ TP / Σ (TP + FP),  recall = Σ TP / Σ (TP + FN),  F1 = 2PR / (P + R)
    gold found = share of the questions with pooled gold where at least one gold is judged relevant

The labels are incomplete (a question's unlabelled pooled chunk may answer it too), so
precision is a lower bound. Rules compared in one run:

* ``old``: the previous rule (a sentence holds half of the query's distinct stemmed content
  words, and two of them), reproduced here;
* ``new``: the current rule as designed: a question's whole pool judged together, with titles
  and the corpus's word statistics;
* ``new-batched``: the current rule in batches of select's default size, with neither titles nor
  corpus statistics (what a caller that passes neither gets).

    .venv/bin/python benchmarks/pool_judge_reference.py [--depth 10] [--per-question]

About 10 s on 2 CPU cores, offline, deterministic.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from benchsmith.agents.pool_judge import PoolJudge, query_words, stemmed_words
from benchsmith.agents.text import PassageStatistics, WordStatistics
from benchsmith.passages import sentences
from benchsmith.stores.formats.labelled_questions import LabelledQuestion, read_labelled_questions
from benchsmith.tools.corpus.chunking import chunk_document
from benchsmith.tools.corpus.cleaning import clean_documents
from benchsmith.tools.corpus.documents import Chunk
from benchsmith.tools.corpus.loaders import load_sources
from benchsmith.tools.retrieval.bm25 import BM25Index

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "data" / "stdlib-validity.jsonl"
SELECT_BATCH_SIZE = 8  # graphs/select/graph.py's DEFAULT_BATCH_SIZE (not imported: it would load the graph)
OLD_COVERAGE = 0.5

Judge = Callable[[LabelledQuestion, Sequence[Chunk]], set[str]]  # the ids judged relevant


@dataclass(frozen=True)
class QuestionResult:
    question_id: str
    true_positives: int
    false_positives: int
    false_negatives: int

    @property
    def has_pooled_gold(self) -> bool:
        return self.true_positives + self.false_negatives > 0


def stdlib_chunks() -> dict[str, Chunk]:
    """The standard library cleaned and chunked as ingest does (before deduplication), by id."""
    documents = clean_documents(list(load_sources(["stdlib"]).documents))
    chunks: dict[str, Chunk] = {}
    for document in documents:
        for chunk in chunk_document(document):
            chunks.setdefault(chunk.id, chunk)
    return chunks


def old_rule(question: LabelledQuestion, pool: Sequence[Chunk]) -> set[str]:
    """The rule this benchmark replaced: relevant when one sentence holds at least half of the
    query's distinct stemmed content words (and two of them when it has two or more)."""
    wanted = query_words([], question.question)
    needed = max(1, min(2, len(wanted)))
    relevant = set()
    for chunk in pool:
        for sentence in sentences(chunk.text):
            matched = len(wanted & set(stemmed_words(sentence)))
            if wanted and matched >= needed and matched / len(wanted) >= OLD_COVERAGE:
                relevant.add(chunk.id)
                break
    return relevant


def new_rule(statistics: WordStatistics | None, batch_size: int | None, titles: bool) -> Judge:
    def judge(question: LabelledQuestion, pool: Sequence[Chunk]) -> set[str]:
        size = batch_size or max(1, len(pool))
        relevant = set()
        for start in range(0, len(pool), size):
            batch = pool[start : start + size]
            verdicts = PoolJudge(len(batch)).baseline(
                history=[],
                question=question.question,
                passages=[chunk.text for chunk in batch],
                passage_titles=[chunk.title for chunk in batch] if titles else None,
                statistics=statistics,
            )
            relevant |= {chunk.id for chunk, verdict in zip(batch, verdicts.judgments) if verdict.relevant}
        return relevant

    return judge


def per_question(
    judge: Judge, questions: Sequence[LabelledQuestion], pools: dict[str, list[Chunk]]
) -> list[QuestionResult]:
    results = []
    for question in questions:
        pooled = {chunk.id for chunk in pools[question.id]}
        gold = {passage.chunk_id for passage in question.gold} & pooled
        relevant = judge(question, pools[question.id])
        results.append(QuestionResult(question.id, len(relevant & gold), len(relevant - gold), len(gold - relevant)))
    return results


def aggregate(results: Sequence[QuestionResult]) -> dict[str, float]:
    true_positives = sum(result.true_positives for result in results)
    judged = true_positives + sum(result.false_positives for result in results)
    pooled_gold = true_positives + sum(result.false_negatives for result in results)
    precision = true_positives / judged if judged else 0.0
    recall = true_positives / pooled_gold if pooled_gold else 0.0
    with_gold = [result for result in results if result.has_pooled_gold]
    return {
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "gold_found": sum(result.true_positives > 0 for result in with_gold) / len(with_gold) if with_gold else 0.0,
        "judged_relevant": judged,
        "pooled_gold": pooled_gold,
        "questions_with_pooled_gold": len(with_gold),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depth", type=int, default=10, help="BM25 chunks pooled per question")
    parser.add_argument("--per-question", action="store_true", help="also print each question's counts")
    arguments = parser.parse_args()
    questions = read_labelled_questions(LABELLED)
    chunks = stdlib_chunks()
    ids = list(chunks)
    index = BM25Index(ids, [f"{chunks[chunk_id].title} {chunks[chunk_id].text}" for chunk_id in ids])
    run = index.search({question.id: question.question for question in questions}, arguments.depth)
    pools = {question.id: [chunks[chunk_id] for chunk_id in run.get(question.id, {})] for question in questions}
    corpus_statistics = PassageStatistics(f"{chunk.title} {chunk.text}" for chunk in chunks.values())
    rules: dict[str, Judge] = {
        "old": old_rule,
        "new": new_rule(corpus_statistics, None, titles=True),
        "new-batched": new_rule(None, SELECT_BATCH_SIZE, titles=False),
    }
    results = {name: per_question(judge, questions, pools) for name, judge in rules.items()}
    console = Console()
    pairs = sum(len(pool) for pool in pools.values())
    table = Table(
        title=f"{len(questions)} questions, BM25 top {arguments.depth}: {pairs} pooled pairs, {len(chunks)} chunks"
    )
    for column in ("rule", "precision", "recall", "F1", "gold found", "judged relevant", "pooled gold"):
        table.add_column(column, justify="left" if column == "rule" else "right")
    for name, rows in results.items():
        summary = aggregate(rows)
        table.add_row(
            name,
            f"{summary['precision']:.2f}",
            f"{summary['recall']:.2f}",
            f"{summary['f1']:.2f}",
            f"{summary['gold_found']:.0%} of {summary['questions_with_pooled_gold']}",
            str(summary["judged_relevant"]),
            str(summary["pooled_gold"]),
        )
    console.print(table)
    if arguments.per_question:
        detail = Table("question", *(f"{name} TP/FP/FN" for name in results))
        for position, question in enumerate(questions):
            detail.add_row(
                escape(question.id),
                *(
                    f"{rows[position].true_positives}/{rows[position].false_positives}/{rows[position].false_negatives}"
                    for rows in results.values()
                ),
            )
        console.print(detail)


if __name__ == "__main__":
    main()
