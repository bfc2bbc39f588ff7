"""What the nuggets nodes read: the run's logs, questions, pools, corpus and its indexes, opened once per process."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.agents.text import PassageStatistics
from benchsmith.graphs.contexts.nuggets import NuggetsContext
from benchsmith.graphs.nuggets.state import BEIR_DIR, CORPUS_INFO_FILE, JUDGMENTS_FILE, POOLS_FILE, QUESTIONS_FILE
from benchsmith.graphs.runtime.corpus_indexes import bm25_index, corpus_documents, dense_index
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.resources import embedder_for
from benchsmith.stores.formats.beir import Benchmark
from benchsmith.stores.persistence.jsonl import RecordLog, load_jsonl, read_json, record_log
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.tools.retrieval.bm25 import BM25Index
from benchsmith.tools.retrieval.cached_embedding import cached_embedder
from benchsmith.tools.retrieval.dense_retrieval import DenseIndex
from benchsmith.tools.retrieval.embedding import Embedder

job = JobRuntime(NuggetsContext)  # the runtime's settings, workspace and run directories


def _pool_log(runtime: Runtime[NuggetsContext], run_id: str) -> RecordLog:
    return record_log(job.run_dir(runtime, run_id).file(POOLS_FILE), "question")


def _judgment_log(runtime: Runtime[NuggetsContext], run_id: str) -> RecordLog:
    return record_log(job.run_dir(runtime, run_id).file(JUDGMENTS_FILE), "batch")


def batch_id(question_id: str, batch: int) -> str:
    return f"{question_id}#{batch}"


@functools.lru_cache(maxsize=4)
def _records_in(path: Path, modified: float, size: int, key: str) -> dict[str, dict[str, Any]]:
    return {str(record[key]): record for record in load_jsonl(path)} if path.exists() else {}


def _records(path: Path, key: str) -> dict[str, dict[str, Any]]:
    """A JSONL file's records by ``key``, parsed again only when the file changed."""
    status = path.stat() if path.exists() else None
    return _records_in(path, status.st_mtime if status else 0.0, status.st_size if status else 0, key)


def _questions(runtime: Runtime[NuggetsContext], run_id: str) -> dict[str, dict[str, Any]]:
    return _records(job.run_dir(runtime, run_id).file(QUESTIONS_FILE), "id")


def _pools(runtime: Runtime[NuggetsContext], run_id: str) -> dict[str, dict[str, Any]]:
    return _records(job.run_dir(runtime, run_id).file(POOLS_FILE), "question")


def _corpus(runtime: Runtime[NuggetsContext], run_id: str) -> Benchmark:
    """The run's corpus as a benchmark without queries: what the shared index caches take."""
    run_dir = job.run_dir(runtime, run_id)
    info = _records_info(run_dir)
    return Benchmark(
        name=run_id, directory=run_dir.file(BEIR_DIR), queries=[], qrels={}, source_collection=info.get("collection")
    )


@functools.lru_cache(maxsize=2)
def _word_statistics_of(path: Path, modified: float) -> PassageStatistics:
    """Word statistics of a corpus file version (read once, whatever the number of batches)."""
    documents = corpus_documents(Benchmark(name="", directory=path.parent, queries=[], qrels={}, corpus_file=path))
    return PassageStatistics(f"{title} {text}" for title, text in documents.values())


def _records_info(run_dir: RunDirectory) -> dict[str, Any]:
    info: dict[str, Any] = read_json(run_dir.file(CORPUS_INFO_FILE))
    return info


@dataclass(frozen=True)
class Indexes:
    bm25: BM25Index
    dense: DenseIndex
    embedder: Embedder


def _indexes(runtime: Runtime[NuggetsContext], run_id: str) -> Indexes:
    """BM25 and dense indexes of the run's corpus (built once per process and corpus file)."""
    context = job.context(runtime)
    corpus = _corpus(runtime, run_id)
    embedder = embedder_for(context.embedder, job.workspace(runtime), run_id, context)
    workspace = job.workspace(runtime)
    dense = dense_index(workspace, context.chroma_host, corpus, cached_embedder(embedder, workspace))
    return Indexes(bm25_index(corpus), dense, embedder)
