"""The nuggets graph's nodes and routes: prepare, pool, gather, judge, export."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np
from langgraph.runtime import Runtime
from langgraph.types import Send

from benchsmith.agents.nuggets import ClosedBookAnswerWriter, NuggetWriter, SubQuestionWriter, SupportJudge
from benchsmith.evals.measures.nugget_measures import nugget_measures
from benchsmith.evals.reports.nugget_report import nugget_report_files
from benchsmith.graphs.contexts.nuggets import NuggetsContext
from benchsmith.graphs.nuggets.inputs import (
    Indexes,
    _corpus,
    _indexes,
    _judgment_log,
    _pool_log,
    _pools,
    _questions,
    _word_statistics_of,
    batch_id,
    job,
)
from benchsmith.graphs.nuggets.results import _nugget_record, _results, _technique_run_files
from benchsmith.graphs.nuggets.state import (
    BEIR_DIR,
    CORPUS_INFO_FILE,
    FUSED,
    JUDGMENTS_FILE,
    MEASURE_DEPTH,
    NUGGET_QRELS_FILE,
    NUGGETS_FILE,
    QUESTIONS_FILE,
    TABLE_MEASURES,
    JudgeTask,
    NuggetsOutput,
    NuggetsState,
    PoolTask,
)
from benchsmith.graphs.runtime.corpus_indexes import corpus_documents
from benchsmith.graphs.runtime.fanout import sends_for_missing
from benchsmith.graphs.runtime.progress import progress_reporter, report_advance, report_reused
from benchsmith.graphs.runtime.resources import chroma_client, run_seam
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.benchmark_files import write_beir_qrels
from benchsmith.stores.formats.nugget_qrels import nugget_rows, write_nugget_qrels
from benchsmith.stores.persistence.files import write_json_atomic
from benchsmith.stores.persistence.jsonl import load_jsonl, write_jsonl_atomic
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.vectors import VectorStore
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.benchmark.nugget_support import (
    collect_support,
    filter_questions,
    nugget_qrels,
    query_qrel_rows,
)
from benchsmith.tools.corpus.source_corpus import build_source_corpus, git_revision
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction
from benchsmith.tools.retrieval.pooling import TECHNIQUES, batches, fuse_top, pool_documents
from benchsmith.tools.text.qa_text import load_qa_pairs, pairs_to_use


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
    return sends_for_missing("pool", state["run_id"], "question", questions, pooled) or "gather"


def pool(task: PoolTask, runtime: Runtime[NuggetsContext]) -> dict[str, Any]:
    """Nuggets, query variants, retrieval and the pool of one question, appended to pools.jsonl once."""
    context = job.context(runtime)
    run_id, question_id = task["run_id"], task["question"]
    log = _pool_log(runtime, run_id)
    if question_id in log:  # finished before a crash
        return {"pooled": 1}
    pair = _questions(runtime, run_id)[question_id]
    nuggets, sub_questions, closed_book = job.run_item(
        runtime, run_id, written_texts, {"run_id": run_id, "question": pair["question"], "answer": pair["answer"]}
    )
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


def written_texts(task: dict[str, Any], context: NuggetsContext) -> tuple[list[str], list[str], str]:
    """A question's nuggets, sub-questions and closed-book answer: the model calls of one pooling
    item, here or on a Ray node (the retrieval that follows stays with the run's indexes)."""
    seam = run_seam(Workspace.resolve(context.workspace), task["run_id"], context.llm, context)
    nuggets = seam.run(NuggetWriter(context.max_nuggets), question=task["question"], answer=task["answer"]).nuggets
    sub_questions = seam.run(SubQuestionWriter(), question=task["question"]).sub_questions
    closed_book = seam.run(ClosedBookAnswerWriter(), question=task["question"]).answer
    return list(nuggets), list(sub_questions), closed_book


def technique_runs(
    indexes: Indexes, query_id: str, texts: dict[str, str], depth: int, fusion: str
) -> dict[str, dict[str, dict[str, float]]]:
    """``{technique: {"bm25" | "dense" | "fused": {doc id: score}}}``, each the top ``depth``."""
    retrievable = {technique: text for technique, text in texts.items() if text.strip()}
    lexical = {
        technique: indexes.bm25.search({query_id: text}, depth).get(query_id, {})
        for technique, text in retrievable.items()
    }
    vectors = indexes.embedder.encode(list(retrievable.values())) if retrievable else np.zeros((0, 0), dtype=np.float32)
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
    support = job.run_item(
        runtime,
        run_id,
        batch_support,
        {
            "run_id": run_id,
            "question": _questions(runtime, run_id)[question_id]["question"],
            "nuggets": record["nuggets"],
            "chunk_ids": chunk_ids,
            "chunks": [{"title": documents[doc_id][0], "text": documents[doc_id][1]} for doc_id in chunk_ids],
            "corpus": str(_corpus(runtime, run_id).corpus_path),
        },
    )
    job.run_dir(runtime, run_id).usage.sync()
    log.append_once({"batch": key, "question": question_id, "chunks": chunk_ids, "support": support})
    report_advance("judge")
    return {"judged": 1}


def batch_support(task: dict[str, Any], context: NuggetsContext) -> dict[str, dict[str, Any]]:
    """``{chunk id: {"nuggets", "reason"}}`` of one support call, here or on a Ray node: the task
    carries the texts; only the offline judge reads the run's corpus file (its word statistics)."""
    seam = run_seam(Workspace.resolve(context.workspace), task["run_id"], context.llm, context)
    nuggets, chunk_ids = task["nuggets"], task["chunk_ids"]
    # The offline judge weighs a nugget's words by their rarity in the whole corpus.
    corpus = Path(task["corpus"])
    statistics = _word_statistics_of(corpus, corpus.stat().st_mtime) if seam.is_baseline else None
    verdicts = seam.run(
        SupportJudge(len(chunk_ids), len(nuggets)),
        question=task["question"],
        nuggets=[nugget["text"] for nugget in nuggets],
        chunks=task["chunks"],
        statistics=statistics,
    )
    by_chunk = {judgment.chunk: judgment for judgment in verdicts.judgments}
    return {
        doc_id: {
            "nuggets": [nuggets[n - 1]["id"] for n in sorted(set(by_chunk[number].supported_nuggets))],
            "reason": by_chunk[number].reason,
        }
        for number, doc_id in enumerate(chunk_ids, start=1)
    }


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
    report_paths = run_dir.write_report(nugget_report_files(results))
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
        "report": report_paths,
        "table": table,
    }
