"""The shortcuts a retriever can exploit, measured without a model (evals/measures/shortcuts.py): the audit's
``shortcuts`` node, and `benchmark_shortcuts` for any benchmark."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.evals.measures import shortcuts as shortcut_measures
from benchsmith.evals.measures.lexical_overlap import lexical_overlap
from benchsmith.evals.measures.question_form import DEFAULT_MANY_DOCUMENTS, DocumentCounter, ill_formed_questions
from benchsmith.evals.measures.standard import MeasureResults, evaluate_batches, parse_measures
from benchsmith.graphs.audit.inputs import LazyCounter, benchmark_of, gold_document, job
from benchsmith.graphs.audit.state import QUERY_ONLY_MEASURES, SHORTCUT_TURNS_FILE, SHORTCUTS_FILE, AuditState
from benchsmith.graphs.contexts.audit import AuditContext
from benchsmith.graphs.contexts.evaluate import DEFAULT_DEPTH
from benchsmith.graphs.runtime.corpus_indexes import bm25_index, corpus_documents, document_text
from benchsmith.stores.formats.beir import Benchmark
from benchsmith.stores.persistence.files import write_files_atomic
from benchsmith.stores.persistence.jsonl import write_jsonl_atomic
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.query_building import HistoryMode, build_query


def shortcuts(state: AuditState, runtime: Runtime[AuditContext]) -> dict[str, Any]:
    """The shortcuts a retriever can exploit, measured without a model over every turn with a
    relevant document (not only the judged sample): ``shortcuts.json`` and, per turn,
    ``shortcut_turns.jsonl``."""
    benchmark = benchmark_of(runtime, state["benchmark"])
    documents = corpus_documents(benchmark)
    counter = LazyCounter(lambda: DocumentCounter(document_text(*documents[doc_id]) for doc_id in documents))
    summary, per_turn = benchmark_shortcuts(
        benchmark, counter, job.context(runtime).many_documents, job.workspace(runtime)
    )
    run_dir = job.run_dir(runtime, state["run_id"])
    write_files_atomic(run_dir.path, {"shortcuts": (SHORTCUTS_FILE, json.dumps(summary, indent=2) + "\n")})
    write_jsonl_atomic(run_dir.file(SHORTCUT_TURNS_FILE), per_turn)
    return {
        "shortcut_flags": summary["flags"],
        "lexical_overlap": {key: summary["lexical_overlap"][key] for key in ("mean", "median", "p90")},
    }


def benchmark_shortcuts(
    benchmark: Benchmark,
    count_documents: Callable[[str], int] | None = None,
    many_documents: int = DEFAULT_MANY_DOCUMENTS,
    workspace: Workspace | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(shortcuts.json's summary, per-turn records)`` of a benchmark (evals/measures/shortcuts.py).

    Query-only retrieval is measured as ``benchsmith evaluate --retriever bm25`` measures it:
    the same BM25 index, query texts (``--history current``, and ``oracle`` for the rewrite
    where every turn has one) and ir_measures over all the benchmark's judgments, on each
    query's top 10 with ties (what the measures at rank 10 read of the evaluation's run)."""
    documents = corpus_documents(benchmark)
    turns = [query for query in benchmark.queries if gold_document(benchmark, query.id)]
    overlaps = {
        query.id: lexical_overlap(
            query.question,
            [
                document_text(*documents[doc_id])
                for doc_id, relevance in benchmark.qrels[query.id].items()
                if relevance > 0 and doc_id in documents
            ],
        )
        for query in turns
    }
    leaks = {
        query.id: shortcut_measures.leaks_answer(query.question, query.response) for query in turns if query.response
    }
    flagged = ill_formed_questions(
        {query.id: query.question for query in turns},
        count_documents,
        many_documents,
        follow_ups={query.id for query in turns if query.history},
    )
    current = _bm25_measures(benchmark, HistoryMode("current"), (*QUERY_ONLY_MEASURES, "nDCG@10"), workspace)
    rewrite = (
        _bm25_measures(benchmark, HistoryMode("oracle"), QUERY_ONLY_MEASURES, workspace)
        if benchmark.queries and all(query.rewrite for query in benchmark.queries)
        else None
    )
    gain = None
    if benchmark.conversational:
        full = _bm25_measures(benchmark, HistoryMode("full"), ("nDCG@10",), workspace)
        gain = full.aggregate["nDCG@10"] - current.aggregate["nDCG@10"]
    summary = shortcut_measures.shortcut_summary(
        overlaps,
        {"current": _means(current), "rewrite": _means(rewrite) if rewrite else None},
        leaks,
        gain,
        flagged,
        {query.id: query.question for query in turns},
        [query.id for query in turns],
    )
    recall = current.per_query
    per_turn = [
        {
            "turn": query.id,
            "question": query.question,
            "lexical_overlap": overlaps[query.id],
            "query_only_R@10": recall.get(query.id, {}).get("R@10"),
            "answer_leak": leaks.get(query.id),
            "ill_formed": flagged.get(query.id, []),
        }
        for query in turns
    ]
    return summary, per_turn


def _bm25_measures(
    benchmark: Benchmark, mode: HistoryMode, names: tuple[str, ...], workspace: Workspace | None = None
) -> MeasureResults:
    """Measures at rank k (``R@10`` ...) of BM25's run: they read the top k, equal scores ordered
    by doc id, so each query's documents at or above its k-th score give what the evaluation's
    depth-1000 run gives, without ranking the corpus for each of every turn's queries."""
    texts = {query.id: build_query(query, mode) for query in benchmark.queries}
    cutoff = max(int(name.rpartition("@")[2]) for name in names)
    run = bm25_index(benchmark, workspace).best_with_ties(texts, min(cutoff, DEFAULT_DEPTH))
    return evaluate_batches(parse_measures(list(names)), benchmark.qrels, [run])


def _means(results: MeasureResults) -> dict[str, float]:
    return {name: results.aggregate[name] for name in QUERY_ONLY_MEASURES}
