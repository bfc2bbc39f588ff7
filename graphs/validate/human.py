"""The human set: its labels checked against the synthetic corpus (held-out chunks dropped) and written as a BEIR directory over it."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.graphs.runtime.corpus_indexes import (
    cached_benchmark,
    corpus_documents,
)
from benchsmith.graphs.validate.state import IDS_SHOWN
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import Benchmark
from benchsmith.stores.formats.benchmark_files import write_beir_qrels
from benchsmith.stores.formats.labelled_questions import read_labelled_questions
from benchsmith.stores.persistence.files import atomic_writer
from benchsmith.stores.persistence.jsonl import read_jsonl, write_jsonl_atomic
from benchsmith.tools.corpus.held_out import HeldOutLabels, check_judged_ids, drop_held_out


def default_histories(synthetic: Benchmark) -> list[str]:
    """``oracle`` (the self-contained rewrite, comparable to a standalone question) when every
    synthetic query carries one, else ``full``."""
    return ["oracle"] if synthetic.queries and all(query.rewrite for query in synthetic.queries) else ["full"]


def _shown(ids: Sequence[str]) -> str:
    listed = ", ".join(repr(item) for item in ids[:IDS_SHOWN])
    return f"{len(ids)}: {listed}{', …' if len(ids) > IDS_SHOWN else ''}"


def check_same_corpus(synthetic: Benchmark, human: str, workspace: Any, split: str) -> HumanLabels:
    """The human set is over the synthetic benchmark's corpus, or over the collection it was
    synthesized from: every chunk it judges is a document of the corpus or a chunk the benchmark
    holds out (``Benchmark.held_out``: held-out chunks and their near-duplicates), and a BEIR
    directory's corpus is the benchmark's, held-out chunks at most added. Returns the judgments
    without the held-out chunks (tools/corpus/held_out.drop_held_out) and what they lost; anything else
    stops with an InputError naming the file, the line or question and the ids (the first few
    and the count)."""
    documents, held_out = corpus_documents(synthetic), synthetic.held_out
    path = Path(human)
    if path.is_file():
        questions = read_labelled_questions(path)
        check_judged_ids(
            path,
            [(f"line {q.line}, question {q.id!r}", chunk_id) for q in questions for chunk_id in q.gold_ids],
            documents,
            held_out,
            synthetic.corpus_path,
        )
        qrels, dropped = drop_held_out({q.id: {chunk_id: 1 for chunk_id in q.gold_ids} for q in questions}, held_out)
        return HumanLabels(
            qrels,
            dropped,
            [{"_id": q.id, "text": q.question} for q in questions if q.id not in dropped.questions_left_out],
        )
    if not path.is_dir():
        raise InputError(f"--human {human}: not a BEIR directory or a labelled JSONL file")
    human_set = cached_benchmark(str(path.resolve()), workspace, split)
    human_documents = corpus_documents(human_set)
    _check_corpus_ids(human, synthetic, human_documents, documents, held_out)
    check_judged_ids(
        human_set.qrels_file or path,
        [(f"question {query_id!r}", doc_id) for query_id, judged in human_set.qrels.items() for doc_id in judged],
        documents,
        held_out,
        synthetic.corpus_path,
    )
    qrels, dropped = drop_held_out(
        human_set.qrels, held_out, documents=sum(1 for doc_id in held_out if doc_id in human_documents)
    )
    queries = []
    if dropped:
        assert human_set.queries_file is not None  # every reader of a labelled set records its queries' file
        queries = [record for _, record in read_jsonl(human_set.queries_file)]
    return HumanLabels(
        qrels, dropped, [record for record in queries if str(record.get("_id")) not in dropped.questions_left_out]
    )


@dataclass(frozen=True)
class HumanLabels:
    """The human set over the synthetic benchmark's corpus: its judgments without held-out chunks,
    what they lost, and the queries to write (with a labelled JSONL, or when anything was dropped)."""

    qrels: dict[str, dict[str, int]]
    dropped: HeldOutLabels
    queries: list[dict[str, Any]]


def _check_corpus_ids(
    human: str,
    synthetic: Benchmark,
    human_documents: Mapping[str, Any],
    documents: Mapping[str, Any],
    held_out: Mapping[str, str],
) -> None:
    """A human BEIR corpus holds every document of the synthetic one, and otherwise held-out chunks only."""
    only_human = [doc_id for doc_id in human_documents if doc_id not in documents and doc_id not in held_out]
    only_synthetic = [doc_id for doc_id in documents if doc_id not in human_documents]
    if only_human or only_synthetic:
        parts = ([f"in {human} only, {_shown(only_human)}"] if only_human else []) + (
            [f"in {synthetic.corpus_path} only, {_shown(only_synthetic)}"] if only_synthetic else []
        )
        raise InputError(
            f"--human {human}: the two sets have different corpora (document ids {'; '.join(parts)}); "
            "both must be over the same collection"
        )


def write_human_benchmark(directory: Path, labels: HumanLabels, corpus_file: Path, split: str) -> None:
    """The human set as a BEIR directory whose ``corpus.jsonl`` is the synthetic benchmark's,
    copied byte for byte (the same corpus fingerprint, so both sets share one dense index), its
    judgments without held-out chunks."""
    directory.mkdir(parents=True, exist_ok=True)
    with (
        corpus_file.open(encoding="utf-8", newline="") as reader,
        atomic_writer(directory / "corpus.jsonl", newline="") as writer,
    ):
        shutil.copyfileobj(reader, writer)
    write_jsonl_atomic(directory / "queries.jsonl", labels.queries)
    write_beir_qrels(
        directory / "qrels" / f"{split}.tsv",
        [
            (query_id, doc_id, relevance)
            for query_id, judged in labels.qrels.items()
            for doc_id, relevance in judged.items()
        ],
    )
