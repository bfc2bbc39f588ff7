"""The validation graph's nodes before the report: plan, evaluate both sets, pool and judge."""

from __future__ import annotations

import concurrent.futures
import contextvars
import random
from pathlib import Path
from typing import Any, Literal

from langgraph.runtime import Runtime

from benchsmith.agents.calibrated_pool_judge import CalibratedPoolJudge
from benchsmith.agents.label_seam import LABELS_PREFIX
from benchsmith.evals.measures.robustness import top_k
from benchsmith.graphs.contexts.evaluate import EvaluationContext
from benchsmith.graphs.contexts.validate import ValidationContext
from benchsmith.graphs.evaluate.child_sets import evaluated_set
from benchsmith.graphs.evaluate.state import EvaluationInput
from benchsmith.graphs.runtime.corpus_indexes import (
    cached_benchmark,
    corpus_documents,
    corpus_statistics,
    document_text,
)
from benchsmith.graphs.runtime.progress import progress_reporter
from benchsmith.graphs.runtime.resources import run_seam
from benchsmith.graphs.validate.human import check_same_corpus, default_histories, write_human_benchmark
from benchsmith.graphs.validate.inputs import (
    _evaluation_log,
    _evaluations,
    _human_benchmark,
    _human_split,
    _judgment_log,
    human_directory,
    job,
)
from benchsmith.graphs.validate.judge_evidence import dense_evidence
from benchsmith.graphs.validate.state import (
    HELD_OUT_FILE,
    HUMAN,
    HUMAN_DIR,
    JUDGE_BATCH,
    PAIRS_FILE,
    SETS,
    SYNTHETIC,
    ValidationState,
)
from benchsmith.stores.formats.trec import read_trec_run
from benchsmith.stores.persistence.files import write_json_atomic
from benchsmith.stores.persistence.jsonl import load_jsonl, write_jsonl_atomic


def plan(state: ValidationState, runtime: Runtime[ValidationContext]) -> dict[str, Any]:
    """Check that both sets share a corpus; write the human set as a BEIR directory over the
    synthetic corpus when it is a labelled JSONL or names held-out chunks, and what those lost;
    choose the history modes of each set."""
    context = job.context(runtime)
    workspace = job.workspace(runtime)
    run_dir = job.run_dir(runtime, state["run_id"])
    synthetic = cached_benchmark(state["synthetic"], workspace, context.split)
    split = _human_split(context, state)
    labels = check_same_corpus(synthetic, state["human"], workspace, split)
    human_dir = Path(state["human"])
    if human_dir.is_file() or labels.dropped:
        human_dir = run_dir.file(HUMAN_DIR)
        if not (human_dir / "qrels" / f"{split}.tsv").exists():
            write_human_benchmark(human_dir, labels, synthetic.corpus_path, split)
    write_json_atomic(run_dir.file(HELD_OUT_FILE), labels.dropped.to_json())
    histories = list(state.get("histories") or default_histories(synthetic))
    human = cached_benchmark(str(human_dir), workspace, split)
    # Standalone questions: every history mode but oracle sends the question itself, so one is enough.
    return {
        "synthetic_histories": histories,
        "human_histories": histories if human.conversational else ["full"],
        "human_benchmark": str(human_dir),
    }


def next_step(state: ValidationState, runtime: Runtime[ValidationContext]) -> Literal["evaluate", "pool"]:
    done = _evaluation_log(runtime, state["run_id"]).ids()
    return "pool" if all(name in done for name in SETS) else "evaluate"


def evaluate(state: ValidationState, runtime: Runtime[ValidationContext]) -> dict[str, Any]:
    """Evaluate the next set with the evaluate graph, run as a subgraph (a child run: resumable,
    reused when finished)."""
    context = job.context(runtime)
    log = _evaluation_log(runtime, state["run_id"])
    name = next(name for name in SETS if name not in log.ids())
    synthetic = name == SYNTHETIC
    child_id = f"{state['run_id']}-{name}"
    inputs: EvaluationInput = {
        "run_id": child_id,
        "benchmark": state["synthetic"] if synthetic else human_directory(runtime, state),
        "retrievers": list(state["retrievers"]),
        "runs": list(state.get("runs") or []),
        "histories": list(state["synthetic_histories" if synthetic else "human_histories"]),
    }
    split = context.split if synthetic else _human_split(context, state)
    retrieval = context.retrieval_settings()
    child_context = EvaluationContext(
        chroma_host=context.chroma_host,
        database=context.database,
        split=split,
        measures=(context.measure,),
        concurrency=context.concurrency,
        rate_limit=context.rate_limit,
        timeout_s=context.timeout_s,
        max_attempts=context.max_attempts,
        structured_output=context.structured_output,
        **retrieval,
    )
    settings = {**inputs, "split": split, "measures": [context.measure], **retrieval}
    log.append_once(evaluated_set(job.workspace(runtime), state["run_id"], name, inputs, child_context, settings))
    return {}


def pool(state: ValidationState, runtime: Runtime[ValidationContext]) -> dict[str, Any]:
    """The pairs the judges label, written once: every gold pair of the human set, and a seeded
    sample of as many non-gold chunks from the configurations' top ``judge_depth`` on it."""
    path = job.run_dir(runtime, state["run_id"]).file(PAIRS_FILE)
    if not state.get("judges"):
        return {"pairs": 0}
    if path.exists():
        return {"pairs": len(load_jsonl(path))}
    context = job.context(runtime)
    human = _human_benchmark(runtime, state)
    documents = corpus_documents(human)
    gold = sorted(
        (query_id, doc_id)
        for query_id, judged in human.qrels.items()
        if query_id in human.queries_by_id
        for doc_id, relevance in judged.items()
        if relevance > 0 and doc_id in documents
    )
    gold_queries = {query_id for query_id, _ in gold}
    found: set[tuple[str, str]] = set()
    for run_file in _evaluations(runtime, state["run_id"])[HUMAN]["runs"].values():
        for query_id, ranking in read_trec_run(run_file).items():
            if query_id in gold_queries:
                found.update(
                    (query_id, doc_id)
                    for doc_id in top_k(ranking, context.judge_depth)
                    if human.qrels[query_id].get(doc_id, 0) <= 0 and doc_id in documents
                )
    non_gold = random.Random(context.seed).sample(sorted(found), min(len(gold), len(found)))
    records = [{"query_id": query_id, "doc_id": doc_id, "human": True} for query_id, doc_id in gold]
    records += [{"query_id": query_id, "doc_id": doc_id, "human": False} for query_id, doc_id in non_gold]
    write_jsonl_atomic(path, sorted(records, key=lambda record: (record["query_id"], record["doc_id"])))
    return {"pairs": len(records)}


def judge(state: ValidationState, runtime: Runtime[ValidationContext]) -> dict[str, Any]:
    """Each judge labels every pair relevant or not: one call per judge, question and batch of
    passages; one record per judge and question, appended once (a resumed run skips them)."""
    if not state.get("judges"):
        return {}
    context = job.context(runtime)
    human = _human_benchmark(runtime, state)
    by_query: dict[str, list[str]] = {}
    for record in load_jsonl(job.run_dir(runtime, state["run_id"]).file(PAIRS_FILE)):
        by_query.setdefault(record["query_id"], []).append(record["doc_id"])
    log = _judgment_log(runtime, state["run_id"])
    tasks = [(spec, query_id) for spec in state["judges"] for query_id in by_query]
    pending = [task for task in tasks if f"{task[0]}\t{task[1]}" not in log]
    report = progress_reporter("judge")
    report(len(tasks) - len(pending), len(tasks))
    documents = corpus_documents(human)

    def label(spec: str, query_id: str) -> None:
        seam = run_seam(job.workspace(runtime), state["run_id"], _registered(spec), context)
        query = human.queries_by_id[query_id]
        verdicts: dict[str, bool] = {}
        doc_ids = by_query[query_id]
        for start in range(0, len(doc_ids), JUDGE_BATCH):
            batch = doc_ids[start : start + JUDGE_BATCH]
            # the offline judge weighs the question's words by the whole corpus's statistics, as the audit's
            # does (a batch of ten passages says nothing of which words are rare), and the question's
            # dense similarity to each passage (agents/calibrated_pool_judge.py)
            evidence: dict[str, Any] = {}
            passages = [document_text(*documents[doc_id]) for doc_id in batch]
            if seam.is_baseline:  # the title apart, as the judge's threshold was calibrated
                passages = [documents[doc_id][1] for doc_id in batch]
                similarities, sentence_similarities = dense_evidence(
                    job.workspace(runtime), query.question, [documents[doc_id] for doc_id in batch]
                )
                evidence = {
                    "statistics": corpus_statistics(human),
                    "passage_titles": [documents[doc_id][0] for doc_id in batch],
                    "similarities": similarities,
                    "sentence_similarities": sentence_similarities,
                }
            answer = seam.run(
                CalibratedPoolJudge(len(batch)),
                history=query.history,
                question=query.question,
                passages=passages,
                query_id=query_id,
                passage_ids=batch,
                passage_documents=batch,
                **evidence,
            )
            verdicts.update({doc_id: judgment.relevant for doc_id, judgment in zip(batch, answer.judgments)})
        log.append_once({"item": f"{spec}\t{query_id}", "judge": spec, "query_id": query_id, "verdicts": verdicts})

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, context.concurrency)) as executor:
        futures = [executor.submit(contextvars.copy_context().run, label, spec, query_id) for spec, query_id in pending]
        for done, future in enumerate(concurrent.futures.as_completed(futures), start=len(tasks) - len(pending) + 1):
            future.result()
            report(done, len(tasks))
    return {}


def _registered(spec: str) -> str:
    """A ``qrels:FILE`` judge answers from those labels (registered once per process)."""
    if spec.startswith(LABELS_PREFIX):
        from benchsmith.graphs.select.inputs import label_judge

        return label_judge(spec)
    return spec
