"""Nugget-judged benchmarks from real questions and accepted answers (FreshStack, Thakur et
al. 2025).

    prepare ─┬→ Send × questions not pooled ─→ pool ─→ gather ─┬→ Send × batches not judged ─→ judge ─→ export ─→ END
             └────────────── (all pooled) ───────────→ gather  └──────────── (all judged) ─────────────→ export

``prepare`` reads the question-answer pairs (JSONL or a Stack Exchange ``Posts.xml``) and
builds the corpus once: chunks whose ids are their path and byte span
(tools/corpus/source_corpus.py), written as the BEIR corpus of the run, and its BM25 and dense
indexes. Per question, ``pool`` has the model write the nuggets (grading notes), sub-questions
and a closed-book answer, retrieves every technique with BM25 and the dense retriever, fuses
them and pools the top ``pool_depth`` of each technique (tools/retrieval/pooling.py); each pooled
question is appended to ``pools.jsonl`` once. ``judge`` makes one support call per question and
batch of at most 20 pooled chunks, judging every nugget against every chunk, and appends it to
``judgments.jsonl`` once (keyed ``<question>#<batch>``): a killed run resumes at the first
question not pooled and the first batch not judged, and the response cache makes a call cut
off in flight free the second time. ``export`` applies the filters and writes the benchmark
(BEIR directory with query-level qrels, ``nuggets.jsonl``, nugget qrels in TREC form), the
techniques' runs, and the report with the pooling results in the layout of FreshStack's Table 4.

State holds ids and counters; pairs, corpus, pools and judgments live in run-directory files.
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from benchsmith.agents.nuggets import ClosedBookAnswerWriter, NuggetWriter, SubQuestionWriter, SupportJudge
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.agents.text import PassageStatistics
from benchsmith.evals.measures.nugget_measures import nugget_measures
from benchsmith.evals.reports.nugget_report import nugget_report_files
from benchsmith.graphs.contexts.nuggets import NuggetsContext
from benchsmith.graphs.runtime.corpus_indexes import bm25_index, corpus_documents, dense_index
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.progress import progress_reporter, report_advance, report_reused
from benchsmith.graphs.runtime.resources import chroma_client, concurrency_slot, embedder_for, run_seam
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import Benchmark
from benchsmith.stores.formats.benchmark_files import write_beir_qrels
from benchsmith.stores.formats.nugget_qrels import nugget_rows, write_nugget_qrels
from benchsmith.stores.formats.trec import Run, write_trec_run
from benchsmith.stores.persistence.files import write_files_atomic, write_json_atomic
from benchsmith.stores.persistence.jsonl import RecordLog, load_jsonl, read_json, record_log, write_jsonl_atomic
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.vectors import VectorStore
from benchsmith.tools.benchmark.nugget_support import (
    QuestionSupport,
    collect_support,
    filter_questions,
    nugget_qrels,
    query_qrel_rows,
)
from benchsmith.tools.corpus.source_corpus import build_source_corpus, git_revision
from benchsmith.tools.retrieval.bm25 import BM25Index
from benchsmith.tools.retrieval.cached_embedding import cached_embedder
from benchsmith.tools.retrieval.dense_retrieval import DenseIndex
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction, Embedder
from benchsmith.tools.retrieval.pooling import RETRIEVERS, TECHNIQUES, batches, fuse_top, pool_documents
from benchsmith.tools.text.qa_text import load_qa_pairs, pairs_to_use

QUESTIONS_FILE, CORPUS_INFO_FILE, POOLS_FILE, JUDGMENTS_FILE = (
    "questions.jsonl",
    "corpus-info.json",
    "pools.jsonl",
    "judgments.jsonl",
)
BEIR_DIR, NUGGETS_FILE, NUGGET_QRELS_FILE, POOL_RUNS_DIR = "beir", "nuggets.jsonl", "nugget-qrels.trec", "pooling-runs"
MEASURE_DEPTH = 50  # the deepest cutoff of the pooling table (Recall@50)
TABLE_MEASURES = ("alpha_nDCG@10", "Coverage@20", "R@50")  # FreshStack's Table 4
FUSED = "fused"


class NuggetsInput(TypedDict):
    run_id: str
    questions: str  # a JSONL file of {id, question, answer} or a Stack Exchange Posts.xml
    corpus: list[str]  # directories, git checkouts, files, BEIR corpora or "stdlib"; empty with collection
    collection: NotRequired[str | None]  # an ingested Chroma collection instead of corpus


class NuggetsOutput(TypedDict, total=False):
    run_id: str
    questions_read: int
    kept: int
    dropped: dict[str, int]  # {reason: questions}
    nuggets: int  # of the kept questions
    support_rate: float  # share of the kept questions' nuggets supported by a pooled chunk
    benchmark: str  # the BEIR directory
    report: dict[str, str]  # {"markdown", "html", "results"}: paths
    table: dict[str, dict[str, dict[str, float]]]  # {technique: {retriever: {measure: mean}}}


class NuggetsState(NuggetsInput, NuggetsOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    pooled: Annotated[int, operator.add]
    judged: Annotated[int, operator.add]


class PoolTask(TypedDict):
    run_id: str
    question: str


class JudgeTask(TypedDict):
    run_id: str
    question: str
    batch: int


# ---------------------------------------------------------------------------------------
# Inputs, opened once per process.

job = JobRuntime(NuggetsContext)  # the runtime's settings, workspace and run directories


def _seam(runtime: Runtime[NuggetsContext], run_id: str) -> ModelSeam:
    context = job.context(runtime)
    return run_seam(job.workspace(runtime), run_id, context.llm, context)


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


def _word_statistics(corpus: Benchmark) -> PassageStatistics:
    path = corpus.corpus_path
    return _word_statistics_of(path, path.stat().st_mtime)


@functools.lru_cache(maxsize=2)
def _word_statistics_of(path: Path, modified: float) -> PassageStatistics:
    """Word statistics of a corpus file version (read once, whatever the number of batches)."""
    documents = corpus_documents(Benchmark(name="", directory=path.parent, queries=[], qrels={}, corpus_file=path))
    return PassageStatistics(f"{title} {text}" for title, text in documents.values())


def _records_info(run_dir: RunDirectory) -> dict[str, Any]:
    return read_json(run_dir.file(CORPUS_INFO_FILE))


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


# ---------------------------------------------------------------------------------------
# Nodes.


def prepare(state: NuggetsState, runtime: Runtime[NuggetsContext]) -> dict[str, Any]:
    """Read the pairs and build the corpus once per run; build its indexes once per process."""
    context = job.context(runtime)
    run_dir = job.run_dir(runtime, state["run_id"])
    questions_path = run_dir.file(QUESTIONS_FILE)
    if questions_path.exists():
        report_reused("questions")
    else:
        loaded = load_qa_pairs(state["questions"], context.tags)
        pairs = pairs_to_use(loaded, state["questions"], context.tags, context.limit)
        write_json_atomic(
            run_dir.file("questions-info.json"),
            {
                "path": state["questions"],
                "format": loaded.source_format,
                "questions_read": loaded.questions_read,
                "skipped": [{"id": pair_id, "reason": reason} for pair_id, reason in loaded.skipped],
                "tags": list(context.tags),
                "limit": context.limit,
            },
        )
        write_jsonl_atomic(questions_path, (pair.to_json() for pair in pairs))
    if run_dir.file(CORPUS_INFO_FILE).exists():
        report_reused("corpus")
    else:
        _build_corpus(runtime, run_dir, state)
    indexes = _indexes(runtime, state["run_id"])  # the corpus is embedded here, once, before any fan-out
    if indexes.dense.doc_ids.size == 0:
        raise InputError("the corpus has no documents to retrieve")
    questions = _questions(runtime, state["run_id"])
    progress_reporter("pool")(len(_pool_log(runtime, state["run_id"]).ids() & questions.keys()), len(questions))
    return {"questions_read": len(questions)}


def _build_corpus(runtime: Runtime[NuggetsContext], run_dir: RunDirectory, state: NuggetsState) -> None:
    context = job.context(runtime)
    corpus_path = run_dir.file(BEIR_DIR) / "corpus.jsonl"
    collection = state.get("collection")
    if collection:
        client = chroma_client(job.workspace(runtime), context.chroma_host)
        store = VectorStore.open_existing(client, collection, lambda spec: ChromaEmbeddingFunction(spec=spec))
        records = [
            {
                "_id": chunk_id,
                "title": str((metadata or {}).get("title") or (metadata or {}).get("doc_id", "")),
                "text": text,
                "metadata": {
                    key: value
                    for key, value in (metadata or {}).items()
                    if key in ("doc_id", "source", "start", "end", "page_kind")
                },
            }
            for page in store.iter_all()
            for chunk_id, text, metadata in zip(page["ids"], page["documents"], page["metadatas"])
        ]
        if not records:
            raise InputError(f"collection {collection!r} is empty")
        info = {
            "collection": collection,
            "sources": [],
            "chunks": len(records),
            "files": None,
            "skipped": [],
            "revisions": {},
        }
    else:
        report = progress_reporter("corpus")
        built = build_source_corpus(state["corpus"], context.chunk_size, context.min_chars, report)
        report(built.files + len(built.skipped), built.files + len(built.skipped))  # files read: the total now known
        records = [chunk.to_beir() for chunk in built.chunks]
        info = {
            "collection": None,
            "sources": list(state["corpus"]),
            "chunks": len(records),
            "files": built.files,
            "skipped": [item.to_json() for item in built.skipped],
            "revisions": {
                source: revision for source in state["corpus"] if (revision := git_revision(source)) is not None
            },
        }
    write_jsonl_atomic(corpus_path, sorted(records, key=lambda record: record["_id"]))
    write_json_atomic(run_dir.file(CORPUS_INFO_FILE), info)  # last: its presence says the corpus is complete


def route_questions(state: NuggetsState, runtime: Runtime[NuggetsContext]) -> list[Send] | Literal["gather"]:
    """One pooling task per question not yet in pools.jsonl."""
    pooled = _pool_log(runtime, state["run_id"]).ids()
    questions = _questions(runtime, state["run_id"])
    sends = [
        Send("pool", {"run_id": state["run_id"], "question": question_id})
        for question_id in questions
        if question_id not in pooled
    ]
    return sends or "gather"


def pool(task: PoolTask, runtime: Runtime[NuggetsContext]) -> dict[str, Any]:
    """Nuggets, query variants, retrieval and the pool of one question, appended to pools.jsonl once."""
    context = job.context(runtime)
    run_id, question_id = task["run_id"], task["question"]
    log = _pool_log(runtime, run_id)
    if question_id in log:  # finished before a crash
        return {"pooled": 1}
    pair = _questions(runtime, run_id)[question_id]
    seam = _seam(runtime, run_id)
    with concurrency_slot(run_id, context.concurrency):
        nuggets = seam.run(NuggetWriter(context.max_nuggets), question=pair["question"], answer=pair["answer"]).nuggets
        sub_questions = seam.run(SubQuestionWriter(), question=pair["question"]).sub_questions
        closed_book = seam.run(ClosedBookAnswerWriter(), question=pair["question"]).answer
    texts = {
        "question": pair["question"],
        "sub_questions": "\n".join(sub_questions),
        "closed_book_answer": closed_book,
        "answer": pair["answer"],
        "nuggets": "\n".join(nuggets),
    }
    runs = technique_runs(
        _indexes(runtime, run_id), question_id, texts, max(context.pool_depth, MEASURE_DEPTH), context.fusion
    )
    pooled = pool_documents(
        {technique: list(by_retriever[FUSED]) for technique, by_retriever in runs.items()}, context.pool_depth
    )
    job.run_dir(runtime, run_id).usage.sync()  # the calls durable before the question's record
    log.append_once(
        {
            "question": question_id,
            "nuggets": [
                {"id": f"{question_id}_{number}", "text": text} for number, text in enumerate(nuggets, start=1)
            ],
            "sub_questions": list(sub_questions),
            "closed_book_answer": closed_book,
            "pool": pooled,
            "runs": runs,
        }
    )
    report_advance("pool")
    return {"pooled": 1}


def technique_runs(
    indexes: Indexes, query_id: str, texts: dict[str, str], depth: int, fusion: str
) -> dict[str, dict[str, dict[str, float]]]:
    """``{technique: {"bm25" | "dense" | "fused": {doc id: score}}}``, each the top ``depth``."""
    retrievable = {technique: text for technique, text in texts.items() if text.strip()}
    lexical = {
        technique: indexes.bm25.search({query_id: text}, depth).get(query_id, {})
        for technique, text in retrievable.items()
    }
    vectors = indexes.embedder.encode(list(retrievable.values())) if retrievable else []
    semantic = {
        technique: indexes.dense.search([query_id], vectors[row : row + 1], depth).get(query_id, {})
        for row, technique in enumerate(retrievable)
    }
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for technique in TECHNIQUES:
        bm25_run, dense_run = lexical.get(technique, {}), semantic.get(technique, {})
        fused = fuse_top([{query_id: bm25_run}, {query_id: dense_run}], fusion, depth).get(query_id, {})
        runs[technique] = {"bm25": bm25_run, "dense": dense_run, FUSED: fused}
    return runs


def gather(state: NuggetsState, runtime: Runtime[NuggetsContext]) -> dict[str, Any]:
    """Joins the pooling tasks before the support judgments are dispatched."""
    judged = _judgment_log(runtime, state["run_id"]).ids()
    wanted = _batches(runtime, state["run_id"])
    progress_reporter("judge")(sum(batch_id(*item) in judged for item in wanted), len(wanted))
    return {}


def _batches(runtime: Runtime[NuggetsContext], run_id: str) -> list[tuple[str, int]]:
    """(question, batch number) of every support call the pools need."""
    size = job.context(runtime).batch_size
    return [
        (question_id, index)
        for question_id, record in _pools(runtime, run_id).items()
        for index in range(len(batches(record["pool"], size)))
    ]


def route_batches(state: NuggetsState, runtime: Runtime[NuggetsContext]) -> list[Send] | Literal["export"]:
    """One support call per question and batch not yet in judgments.jsonl."""
    judged = _judgment_log(runtime, state["run_id"]).ids()
    sends = [
        Send("judge", {"run_id": state["run_id"], "question": question_id, "batch": index})
        for question_id, index in _batches(runtime, state["run_id"])
        if batch_id(question_id, index) not in judged
    ]
    return sends or "export"


def judge(task: JudgeTask, runtime: Runtime[NuggetsContext]) -> dict[str, Any]:
    """One support call: every nugget of the question against every chunk of the batch."""
    context = job.context(runtime)
    run_id, question_id = task["run_id"], task["question"]
    key = batch_id(question_id, task["batch"])
    log = _judgment_log(runtime, run_id)
    if key in log:  # finished before a crash
        return {"judged": 1}
    record = _pools(runtime, run_id)[question_id]
    chunk_ids = batches(record["pool"], context.batch_size)[task["batch"]]
    documents = corpus_documents(_corpus(runtime, run_id))
    chunks = [{"title": documents[doc_id][0], "text": documents[doc_id][1]} for doc_id in chunk_ids]
    nuggets = record["nuggets"]
    seam = _seam(runtime, run_id)
    # The offline judge weighs a nugget's words by their rarity in the whole corpus.
    statistics = _word_statistics(_corpus(runtime, run_id)) if seam.is_baseline else None
    with concurrency_slot(run_id, context.concurrency):
        verdicts = seam.run(
            SupportJudge(len(chunks), len(nuggets)),
            question=_questions(runtime, run_id)[question_id]["question"],
            nuggets=[nugget["text"] for nugget in nuggets],
            chunks=chunks,
            statistics=statistics,
        )
    by_chunk = {judgment.chunk: judgment for judgment in verdicts.judgments}
    support = {
        doc_id: {
            "nuggets": [nuggets[n - 1]["id"] for n in sorted(set(by_chunk[number].supported_nuggets))],
            "reason": by_chunk[number].reason,
        }
        for number, doc_id in enumerate(chunk_ids, start=1)
    }
    job.run_dir(runtime, run_id).usage.sync()
    log.append_once({"batch": key, "question": question_id, "chunks": chunk_ids, "support": support})
    report_advance("judge")
    return {"judged": 1}


# ---------------------------------------------------------------------------------------
# Export.


def export(state: NuggetsState, runtime: Runtime[NuggetsContext]) -> NuggetsOutput:
    """Filter the questions; write the benchmark, the techniques' runs and the report."""
    context = job.context(runtime)
    run_id = state["run_id"]
    run_dir = job.run_dir(runtime, run_id)
    questions, pools = _questions(runtime, run_id), _pools(runtime, run_id)
    judgments: dict[str, list[dict[str, Any]]] = {}
    for record in load_jsonl(run_dir.file(JUDGMENTS_FILE)) if run_dir.file(JUDGMENTS_FILE).exists() else []:
        judgments.setdefault(record["question"], []).append(record)
    supports = [
        collect_support(
            question_id,
            [n["id"] for n in pools[question_id]["nuggets"]],
            pools[question_id]["pool"],
            judgments.get(question_id, []),
        )
        for question_id in questions
    ]
    kept, dropped = filter_questions(supports, context.all_nuggets_supported)
    beir = run_dir.file(BEIR_DIR)
    write_jsonl_atomic(
        beir / "queries.jsonl",
        (
            {
                "_id": s.question_id,
                "text": questions[s.question_id]["question"],
                "metadata": {"answer": questions[s.question_id]["answer"], "tags": questions[s.question_id]["tags"]},
            }
            for s in kept
        ),
    )
    write_beir_qrels(beir / "qrels" / "test.tsv", query_qrel_rows(kept))
    judged_qrels = nugget_qrels(kept)
    write_nugget_qrels(run_dir.file(NUGGET_QRELS_FILE), nugget_rows(judged_qrels))
    write_jsonl_atomic(run_dir.file(NUGGETS_FILE), (_nugget_record(support, questions, pools) for support in kept))
    runs = _technique_run_files(run_dir, pools, context.fusion)
    table = {
        technique: {
            retriever: nugget_measures(run, judged_qrels, TABLE_MEASURES).aggregate
            for retriever, run in by_retriever.items()
        }
        for technique, by_retriever in runs.items()
    }
    results = _results(runtime, state, supports, kept, dropped, table, runs, judged_qrels)
    paths = write_files_atomic(run_dir.path, nugget_report_files(results))
    reasons: dict[str, int] = {}
    for _, reason in dropped:
        reasons[reason] = reasons.get(reason, 0) + 1
    nugget_count = sum(len(support.nugget_ids) for support in kept)
    return {
        "questions_read": len(questions),
        "kept": len(kept),
        "dropped": reasons,
        "nuggets": nugget_count,
        "support_rate": results["nuggets"]["support_rate"],
        "benchmark": str(beir),
        "report": {kind: str(path) for kind, path in paths.items()},
        "table": table,
    }


def _nugget_record(
    support: QuestionSupport, questions: dict[str, dict[str, Any]], pools: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """One line of nuggets.jsonl, in the form of FreshStack's released queries."""
    pair = questions[support.question_id]
    return {
        "query_id": support.question_id,
        "question": pair["question"],
        "answer": pair["answer"],
        "nuggets": [
            {
                "_id": nugget["id"],
                "text": nugget["text"],
                "relevant_corpus_ids": support.supporters.get(nugget["id"], []),
                "non_relevant_corpus_ids": [
                    doc_id for doc_id in support.pool if not support.label(nugget["id"], doc_id)
                ],
            }
            for nugget in pools[support.question_id]["nuggets"]
        ],
    }


def _technique_run_files(
    run_dir: RunDirectory, pools: dict[str, dict[str, Any]], fusion: str
) -> dict[str, dict[str, Run]]:
    """Every technique's runs over all questions, and the fusion of each setting's techniques;
    written as TREC run files for `benchsmith evaluate --run`."""
    runs: dict[str, dict[str, Run]] = {
        technique: {retriever: {} for retriever in (*RETRIEVERS, FUSED)} for technique in TECHNIQUES
    }
    for question_id, record in pools.items():
        for technique, by_retriever in record["runs"].items():
            for retriever, ranking in by_retriever.items():
                runs[technique][retriever][question_id] = ranking
    for setting in ("inference", "oracle", "all"):
        members = [t for t, s in TECHNIQUES.items() if setting in (s, "all")]
        runs[f"fusion:{setting}"] = {
            retriever: fuse_top([runs[t][retriever] for t in members], fusion, MEASURE_DEPTH)
            for retriever in RETRIEVERS
        }
        runs[f"fusion:{setting}"][FUSED] = fuse_top(
            [runs[t][r] for t in members for r in RETRIEVERS], fusion, MEASURE_DEPTH
        )
    for technique, by_retriever in runs.items():
        for retriever, run in by_retriever.items():
            write_trec_run(
                run_dir.file(POOL_RUNS_DIR) / f"{technique.replace(':', '-')}.{retriever}.trec",
                run,
                tag=f"{technique}.{retriever}",
            )
    return runs


def _results(
    runtime: Runtime[NuggetsContext],
    state: NuggetsState,
    supports: list[QuestionSupport],
    kept: list[QuestionSupport],
    dropped: list[tuple[str, str]],
    table: dict[str, Any],
    runs: dict[str, dict[str, Run]],
    judged_qrels: dict[str, Any],
) -> dict[str, Any]:
    context = job.context(runtime)
    run_dir = job.run_dir(runtime, state["run_id"])
    questions, pools = _questions(runtime, state["run_id"]), _pools(runtime, state["run_id"])
    questions_info = read_json(run_dir.file("questions-info.json"))
    corpus_info = _records_info(run_dir)
    nugget_counts = [len(support.nugget_ids) for support in kept]
    all_nuggets = sum(nugget_counts)
    supported = sum(len(support.supported_nuggets) for support in kept)
    supporters = [len(support.supporters[n]) for support in kept for n in support.supported_nuggets]
    pool_sizes = [len(support.pool) for support in supports]
    batches_judged = sum(len(batches(pools[s.question_id]["pool"], context.batch_size)) for s in supports)
    question_runs = {retriever: runs["question"][retriever] for retriever in (*RETRIEVERS, FUSED)}
    per_query = {
        retriever: nugget_measures(run, judged_qrels, TABLE_MEASURES).per_query
        for retriever, run in question_runs.items()
    }
    every = {s.question_id: s for s in supports}
    return {
        "benchmark": {
            "name": state["run_id"],
            "path": str(run_dir.file(BEIR_DIR)),
            "questions_file": questions_info["path"],
            "questions_format": questions_info["format"],
            "corpus": corpus_info,
            "documents": len(corpus_documents(_corpus(runtime, state["run_id"]))),
        },
        "settings": {
            "llm": context.llm,
            "embedder": context.embedder,
            "tags": list(context.tags),
            "limit": context.limit,
            "max_nuggets": context.max_nuggets,
            "pool_depth": context.pool_depth,
            "batch_size": context.batch_size,
            "fusion": context.fusion,
            "all_nuggets_supported": context.all_nuggets_supported,
            "chunk_size": context.chunk_size,
            "min_chars": context.min_chars,
        },
        "questions": {
            "read": questions_info["questions_read"],
            "imported": len(questions),
            "kept": len(kept),
            "skipped_at_import": questions_info["skipped"],
        },
        "nuggets": {
            "total": all_nuggets,
            "supported": supported,
            "support_rate": supported / all_nuggets if all_nuggets else 0.0,
            "per_question_mean": all_nuggets / len(kept) if kept else 0.0,
            "per_question_min": min(nugget_counts, default=0),
            "per_question_max": max(nugget_counts, default=0),
            "supporting_chunks_mean": sum(supporters) / len(supporters) if supporters else 0.0,
            "pool_size_mean": sum(pool_sizes) / len(pool_sizes) if pool_sizes else 0.0,
            "judged_pairs": sum(len(s.pool) * len(s.nugget_ids) for s in supports),
            "support_calls": batches_judged,
        },
        "pooling": {"measures": list(TABLE_MEASURES), "table": table},
        "retriever_comparison": {"technique": "question", "per_query": per_query},
        "filtered": [
            {
                "id": question_id,
                "reason": reason,
                "question": questions[question_id]["question"],
                "nuggets": [n["text"] for n in pools[question_id]["nuggets"]],
                "supported": len(every[question_id].supported_nuggets),
            }
            for question_id, reason in dropped
        ],
        "examples": [
            {
                "id": s.question_id,
                "question": questions[s.question_id]["question"],
                "nuggets": [
                    {"id": n["id"], "text": n["text"], "supported_by": s.supporters[n["id"]]}
                    for n in pools[s.question_id]["nuggets"]
                ],
            }
            for s in kept[:5]
        ],
        "files": {
            "beir": str(run_dir.file(BEIR_DIR)),
            "nuggets": str(run_dir.file(NUGGETS_FILE)),
            "nugget_qrels": str(run_dir.file(NUGGET_QRELS_FILE)),
            "pooling_runs": str(run_dir.file(POOL_RUNS_DIR)),
        },
    }


builder = StateGraph(
    NuggetsState, context_schema=NuggetsContext, input_schema=NuggetsInput, output_schema=NuggetsOutput
)
for node in (prepare, pool, gather, judge, export):
    builder.add_node(node)
builder.add_edge(START, "prepare")
builder.add_conditional_edges("prepare", route_questions, ["pool", "gather"])
builder.add_edge("pool", "gather")
builder.add_conditional_edges("gather", route_batches, ["judge", "export"])
builder.add_edge("judge", "export")
builder.add_edge("export", END)

graph = builder.compile(name="nuggets")  # the Studio copy: no checkpointer (the server brings its own)
