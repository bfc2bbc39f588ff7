"""The checks of each turn beside the judges' grades: the offline quality gate
(evals/quality_gate/) and the turn labels' checks (evals/measures/label_checks.py, agents/label_check_judges.py)."""

from __future__ import annotations

import contextvars
import functools
import json
import random
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.agents import label_check_judges
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.agents.text import WordStatistics
from benchsmith.evals.measures import label_checks
from benchsmith.evals.quality_gate import judge_turn
from benchsmith.evals.quality_gate.evidence import TurnEvidence
from benchsmith.evals.quality_gate.summary import gate_summary
from benchsmith.graphs.audit.inputs import (
    asked_golds,
    benchmark_of,
    job,
    judge_seam,
    retriever_rankings,
    turn_candidates,
    turn_golds,
    turn_values,
)
from benchsmith.graphs.audit.state import GATE_FILE, GATE_POOL_DEPTH, GATE_TURNS_FILE, LABEL_CHECKS_FILE, AuditState
from benchsmith.graphs.contexts.audit import AuditContext
from benchsmith.graphs.runtime.corpus_indexes import corpus_documents, corpus_statistics, document_text
from benchsmith.graphs.runtime.progress import report_advance
from benchsmith.stores.formats.beir import Benchmark, BenchmarkQuery
from benchsmith.stores.persistence.files import write_files_atomic
from benchsmith.stores.persistence.jsonl import write_jsonl_atomic
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.tools.retrieval.query_building import HistoryMode, build_query


def gate(state: AuditState, runtime: Runtime[AuditContext]) -> dict[str, Any]:
    """The offline quality gate (evals/quality_gate/) on every turn, whatever wrote the benchmark
    (with its reading model where benchsmith synthesized it):
    the reading rubric's broken classes per turn (``quality_gate_turns.jsonl``) and their rates with
    examples (``quality_gate.json``); an unanswerable or partial turn's answer is looked for in BM25's
    and the dense retriever's top chunks for it. A resumed run keeps the files."""
    run_dir = job.run_dir(runtime, state["run_id"])
    if run_dir.file(GATE_FILE).exists():
        return {}
    benchmark = benchmark_of(runtime, state["benchmark"])
    documents = corpus_documents(benchmark)
    kinds, candidates = turn_values(benchmark, "turn_type"), turn_candidates(benchmark)
    pooled = [query for query in benchmark.queries if query.answerability in ("unanswerable", "partial")]
    pools = (
        {
            query_id: pooled_chunks(rankings)
            for query_id, rankings in retriever_rankings(
                runtime, state["run_id"], benchmark, pooled, GATE_POOL_DEPTH, "gate pool"
            ).items()
        }
        if pooled
        else {}
    )

    def titled(ids: Sequence[str]) -> tuple[tuple[str, str], ...]:
        return tuple(documents[doc_id] for doc_id in ids if doc_id in documents)

    synthesized = benchmark.source_collection is not None  # the reading model was fitted on such turns only
    verdicts = {}
    for query in benchmark.queries:
        golds = [doc for doc, relevance in benchmark.qrels.get(query.id, {}).items() if relevance > 0]
        evidence = TurnEvidence(
            question=query.question,
            reply=query.response or "",
            turn_type=kinds.get(query.id) or query.answerability or "answerable",
            previous=tuple(query.history),
            gold=titled(golds),
            candidates=titled(candidates.get(query.id, [])),
            remaining_pool=[document_text(*documents[doc]) for doc in pools[query.id] if doc in documents]
            if query.id in pools
            else None,
        )
        verdicts[query.id] = judge_turn(evidence, reading_model=synthesized)
    summary = gate_summary(verdicts, {query.id: query.question for query in benchmark.queries})
    write_files_atomic(run_dir.path, {"gate": (GATE_FILE, json.dumps(summary, indent=2) + "\n")})
    write_jsonl_atomic(
        run_dir.file(GATE_TURNS_FILE), [{"turn": turn, "flags": verdict.flags} for turn, verdict in verdicts.items()]
    )
    return {}


def labels(state: AuditState, runtime: Runtime[AuditContext]) -> dict[str, Any]:
    """Every judge's verdict on each labelled turn (evals/measures/label_checks.py: which labels are
    checked, and how the verdicts decide) into ``label_checks.json``, with the turns left
    unchecked counted; a resumed run keeps the file. The judges see the turn with its history."""
    run_dir = job.run_dir(runtime, state["run_id"])
    path = run_dir.file(LABEL_CHECKS_FILE)
    if path.exists():
        return {}
    context = job.context(runtime)
    benchmark = benchmark_of(runtime, state["benchmark"])
    labelled, unlabelled, not_checked = labelled_turns(benchmark)
    if context.sample is not None and context.sample < len(labelled):
        labelled = sorted(
            random.Random(f"{context.seed}:labels").sample(labelled, context.sample), key=lambda item: item[0].id
        )
    candidates, gold_order = turn_candidates(benchmark), turn_golds(benchmark)
    # The pool: what answers an unanswerable turn, or a partial turn's missing part; what an
    # underspecified turn without candidates may mean.
    pooled = [
        query
        for query, label in labelled
        if label in ("unanswerable", "partial") or (label == "underspecified" and not candidates.get(query.id))
    ]
    pools = (
        {
            query_id: pooled_chunks(rankings)
            for query_id, rankings in retriever_rankings(
                runtime, state["run_id"], benchmark, pooled, context.label_pool_depth, "label pool"
            ).items()
        }
        if pooled
        else {}
    )
    documents = corpus_documents(benchmark)
    statistics = functools.partial(corpus_statistics, benchmark)  # built on the offline judge's first need

    def check(query: BenchmarkQuery, label: str) -> dict[str, Any]:
        golds = [
            chunk for chunk in asked_golds(benchmark, query.id, gold_order.get(query.id, ())) if chunk in documents
        ]
        pool = [chunk for chunk in pools.get(query.id, []) if chunk in documents]
        if label == "partial":  # the gold for the alignment, the pool for the missing part
            against, chunks = "gold", golds
        else:
            against = "pool" if query.id in pools else "candidates" if label == "underspecified" else "gold"
            chunks = (
                pool
                if query.id in pools
                else [chunk for chunk in candidates.get(query.id, []) if chunk in documents] or golds
            )
        verdicts = {
            judge_spec: _label_verdict(
                judge_seam(runtime, state["run_id"], judge_spec), label, query, chunks, documents, statistics, pool
            )
            for judge_spec in state["judges"]
        }
        return {
            "turn": query.id,
            "label": label,
            "question": build_query(query, HistoryMode("full")),
            "against": against,
            "chunks_shown": chunks,
            **({"pool_shown": pool} if label == "partial" else {}),
            "verdicts": verdicts,
        }

    with ThreadPoolExecutor(max_workers=max(1, context.concurrency)) as executor:
        futures = [executor.submit(contextvars.copy_context().run, check, query, label) for query, label in labelled]
        checks = []
        for future in futures:
            checks.append(future.result())
            report_advance("labels")
    run_dir.usage.sync()
    document = {"unlabelled": unlabelled, "not_checked": not_checked, "checks": checks}
    write_files_atomic(run_dir.path, {"labels": (LABEL_CHECKS_FILE, json.dumps(document, indent=2) + "\n")})
    return {}


def labelled_turns(benchmark: Benchmark) -> tuple[list[tuple[BenchmarkQuery, str]], int, dict[str, int]]:
    """``(turns to check with their checked label, unlabelled turns, {label: turns not checked})``:
    a single-gold answerable turn is checked by the alignment judge already."""
    labelled: list[tuple[BenchmarkQuery, str]] = []
    unlabelled = 0
    not_checked: dict[str, int] = {}
    for query in benchmark.queries:
        if query.answerability is None:
            unlabelled += 1
            continue
        golds = sum(1 for relevance in benchmark.qrels.get(query.id, {}).values() if relevance > 0)
        label = label_checks.checked_label(query.answerability, golds)
        if label is None:
            not_checked[query.answerability] = not_checked.get(query.answerability, 0) + 1
        else:
            labelled.append((query, label))
    return labelled, unlabelled, not_checked


def pooled_chunks(rankings: list[list[str]]) -> list[str]:
    """The retrievers' rankings taken in turn, each chunk once."""
    pooled: dict[str, None] = {}
    for rank in range(max((len(ranking) for ranking in rankings), default=0)):
        for ranking in rankings:
            if rank < len(ranking):
                pooled.setdefault(ranking[rank])
    return list(pooled)


def _label_verdict(
    seam: ModelSeam,
    label: str,
    query: BenchmarkQuery,
    chunks: list[str],
    documents: Mapping[str, tuple[str, str]],
    statistics: Callable[[], WordStatistics],
    pool: list[str],
) -> dict[str, Any]:
    """One judge's verdict on one labelled turn (agents/label_check_judges.py)."""
    texts = [documents[chunk] for chunk in chunks]
    words = statistics() if seam.is_baseline and label != "multi-passage" else None  # the offline pool judge's
    if label in label_check_judges.POOL_CHECKS:
        return label_check_judges.pool_verdict(
            seam, label, history=query.history, question=query.question, chunks=chunks, texts=texts, statistics=words
        )
    if label == "multi-passage":
        return label_check_judges.multi_passage_verdict(
            seam, question=query.question, answer=query.response, golds=chunks, texts=texts
        )
    return label_check_judges.partial_verdict(
        seam,
        history=query.history,
        question=query.question,
        answer=query.response,
        gold_text="\n\n".join(document_text(*text) for text in texts),
        chunks=pool,
        texts=[documents[chunk] for chunk in pool],
        statistics=words,
    )


def label_results(run_dir: RunDirectory, context: AuditContext) -> dict[str, Any] | None:
    """``audit.json``'s ``labels`` (evals/measures/label_checks.py), None when no turn carries a label."""
    recorded = json.loads(run_dir.file(LABEL_CHECKS_FILE).read_text(encoding="utf-8"))
    checks = [label_checks.decide(check, context.min_votes) for check in recorded["checks"]]
    if not checks and not recorded["not_checked"]:
        return None
    return label_checks.label_summary(checks, recorded["unlabelled"], recorded["not_checked"], context.label_agreement)
