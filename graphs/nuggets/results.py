"""What ``export`` writes besides the benchmark: the nugget records, the techniques' TREC runs and the results the report is built from."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from benchsmith.evals.measures.nugget_measures import nugget_measures
from benchsmith.graphs.contexts.nuggets import NuggetsContext
from benchsmith.graphs.nuggets.inputs import _corpus, _pools, _questions, _records_info, job
from benchsmith.graphs.nuggets.state import (
    BEIR_DIR,
    FUSED,
    MEASURE_DEPTH,
    NUGGET_QRELS_FILE,
    NUGGETS_FILE,
    POOL_RUNS_DIR,
    TABLE_MEASURES,
    NuggetsState,
)
from benchsmith.graphs.runtime.corpus_indexes import corpus_documents
from benchsmith.stores.formats.trec import Run, write_trec_run
from benchsmith.stores.persistence.jsonl import read_json
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.tools.benchmark.nugget_support import (
    QuestionSupport,
)
from benchsmith.tools.retrieval.pooling import RETRIEVERS, TECHNIQUES, batches, fuse_top


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
