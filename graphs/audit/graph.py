"""The audit graph (the diagram in graphs/audit/__init__.py): plan the instances and their pools,
fan out the judging, then the shortcuts, the quality gate, the label checks and the report."""

from __future__ import annotations

import json
import random
from typing import Any, Literal, cast

from langgraph.graph import END, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from benchsmith.agents.judges import AlignmentJudge, ChoiceJudge, FaithfulnessJudge, QualityJudge
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.evals.measures import audit_verdicts, label_checks
from benchsmith.evals.measures.question_form import DocumentCounter, ill_formed_questions
from benchsmith.evals.quality_gate.summary import gate_note
from benchsmith.evals.reports.audit_report import audit_report_files
from benchsmith.evals.reports.audit_results import audit_notes, audit_summary, sampling_note
from benchsmith.graphs.audit.inputs import (
    LazyCounter,
    audit_items,
    benchmark_of,
    gold_document,
    instances_of,
    job,
    retriever_rankings,
    turn_golds,
)
from benchsmith.graphs.audit.review import review_summary
from benchsmith.graphs.audit.shortcuts import shortcuts
from benchsmith.graphs.audit.state import (
    EXCERPT_CHARS,
    EXTRA_QRELS_FILE,
    GATE_FILE,
    GATE_TURNS_FILE,
    INSTANCES_FILE,
    JUDGMENTS_FILE,
    LABEL_CHECKS_FILE,
    SHORTCUTS_FILE,
    AuditInput,
    AuditOutput,
    AuditState,
    JudgeTask,
)
from benchsmith.graphs.audit.turn_checks import gate, label_results, labels
from benchsmith.graphs.contexts.audit import AuditContext
from benchsmith.graphs.runtime.corpus_indexes import corpus_documents, document_text
from benchsmith.graphs.runtime.fanout import add_fan_out, dispatch_items
from benchsmith.graphs.runtime.progress import report_advance
from benchsmith.graphs.runtime.resources import run_seam
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import Benchmark, BenchmarkQuery
from benchsmith.stores.formats.benchmark_files import canonicalize, write_beir_qrels
from benchsmith.stores.persistence.jsonl import load_jsonl, write_jsonl_atomic
from benchsmith.stores.persistence.run_items import RunItems
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.discriminability import arrange_pool, balanced_gold_slots, hard_negatives, rotated
from benchsmith.tools.retrieval.embedded_text import EMBEDDED_TEXT_NOTE
from benchsmith.tools.retrieval.query_building import HistoryMode, build_query


def plan(state: AuditState, runtime: Runtime[AuditContext]) -> dict[str, Any]:
    """Choose the instances and fix each one's pool and its order (once per run)."""
    items = audit_items(runtime, state["run_id"])
    path = job.run_dir(runtime, state["run_id"]).file(INSTANCES_FILE)
    if path.exists():  # a resumed run keeps its pools, so cached verdicts stay valid
        return {"instances": _registered(items, load_jsonl(path))}
    context = job.context(runtime)
    if context.negatives < 1:
        raise InputError("--negatives must be at least 1")
    benchmark = benchmark_of(runtime, state["benchmark"])
    queries = [query for query in benchmark.queries if gold_document(benchmark, query.id)]
    if not queries:
        raise InputError(f"{benchmark.directory}: no query has a relevant document in the qrels")
    if context.sample is not None and context.sample < len(queries):
        queries = random.Random(f"{context.seed}:sample").sample(sorted(queries, key=lambda q: q.id), context.sample)
        queries.sort(key=lambda query: query.id)
    rankings = _negative_rankings(runtime, state["run_id"], benchmark, queries)
    slots = balanced_gold_slots([query.id for query in queries], context.negatives + 1, context.seed)
    gold_order = turn_golds(benchmark)
    records = []
    for query in queries:
        gold = gold_document(benchmark, query.id, gold_order.get(query.id, ()))
        assert gold is not None  # the queries without one were left out above
        negatives = hard_negatives(rankings[query.id], set(benchmark.qrels[query.id]), context.negatives)
        pool = arrange_pool(query.id, gold, negatives, slots[query.id], context.seed)
        records.append(
            {
                "instance": query.id,
                "gold_id": gold,
                "pool": pool,
                **({"rotated_pool": rotated(pool)} if context.position_check else {}),
            }
        )
    write_jsonl_atomic(path, records)
    return {"instances": _registered(items, records)}


def _registered(items: RunItems, records: list[dict[str, Any]]) -> int:
    items.add([(record["instance"], record) for record in records])
    return len(records)


def _negative_rankings(
    runtime: Runtime[AuditContext], run_id: str, benchmark: Benchmark, queries: list[BenchmarkQuery]
) -> dict[str, list[list[str]]]:
    """Per query, BM25's and the dense retriever's rankings of the corpus for the turn with its history."""
    depth = job.context(runtime).negatives + max(len(benchmark.qrels[query.id]) for query in queries) + 5
    return retriever_rankings(runtime, run_id, benchmark, queries, depth, "negatives")


def dispatch(state: AuditState, runtime: Runtime[AuditContext]) -> list[Send] | Literal["shortcuts"]:
    """One judging task per instance not judged yet; the shortcuts, then the report, when all
    are judged."""
    return dispatch_items(  # type: ignore[return-value]
        audit_items(runtime, state["run_id"]),
        "judge",
        job.context(runtime).concurrency,
        lambda instance: Send(
            "judge",
            {
                "run_id": state["run_id"],
                "benchmark": state["benchmark"],
                "judges": state["judges"],
                "instance": instance,
            },
        ),
        "shortcuts",
    )


def judge(task: JudgeTask, runtime: Runtime[AuditContext]) -> dict[str, Any]:
    """Every judge's verdicts on one instance, recorded once."""
    benchmark = benchmark_of(runtime, task["benchmark"])
    instance = instances_of(runtime, task["run_id"])[task["instance"]]
    query = benchmark.queries_by_id[task["instance"]]
    documents = corpus_documents(benchmark)
    text = {doc_id: document_text(*documents[doc_id]) for doc_id in instance["pool"]}
    conversation = {"history": query.history, "question": query.question}
    items = audit_items(runtime, task["run_id"])
    judged = {"run_id": task["run_id"], "judges": task["judges"], "instance": instance, "query": query}
    verdicts = job.run_new_item(
        runtime,
        task["run_id"],
        items,
        task["instance"],
        judged_instance,
        {**judged, "conversation": conversation, "text": text},
    )
    if verdicts is None:
        return {"judged": 0}  # its verdicts were on file already
    job.run_dir(runtime, task["run_id"]).usage.sync()
    items.complete(task["instance"], {"instance": task["instance"], "verdicts": verdicts})
    report_advance("judge")
    return {"judged": 1}


def judged_instance(task: dict[str, Any], context: AuditContext) -> dict[str, Any]:
    """Every judge's verdicts on one instance: the work of one item, here or on a Ray node. The task
    carries the instance, its query and the texts the judges read: a node needs no benchmark file."""
    workspace = Workspace.resolve(context.workspace)
    return {
        judge_spec: _verdict_of(
            run_seam(workspace, task["run_id"], judge_spec, context),
            task["instance"],
            task["query"],
            task["conversation"],
            task["text"],
        )
        for judge_spec in task["judges"]
    }


def _verdict_of(
    seam: ModelSeam, instance: dict[str, Any], query: BenchmarkQuery, conversation: dict[str, Any], text: dict[str, str]
) -> dict[str, Any]:
    """One judge's verdicts on one instance."""
    alignment = seam.run(AlignmentJudge(), **conversation, document=text[instance["gold_id"]])
    verdict: dict[str, Any] = {
        "alignment": {"score": alignment.score, "rationale": alignment.rationale},
        "choice": _choose(seam, conversation, instance["pool"], text),
    }
    if "rotated_pool" in instance:
        verdict["choice_rotated"] = _choose(seam, conversation, instance["rotated_pool"], text)
    if query.response:
        faithfulness = seam.run(FaithfulnessJudge(), answer=query.response, document=text[instance["gold_id"]])
        quality = seam.run(QualityJudge(), **conversation, answer=query.response)
        verdict["faithfulness"] = {"score": faithfulness.score, "rationale": faithfulness.rationale}
        verdict["quality"] = {"score": quality.score, "rationale": quality.rationale}
    return verdict


def _choose(seam: ModelSeam, conversation: dict[str, Any], pool: list[str], text: dict[str, str]) -> dict[str, Any]:
    choice = seam.run(ChoiceJudge(len(pool)), **conversation, documents=[text[doc_id] for doc_id in pool])
    return {"slot": choice.choice, "doc_id": pool[choice.choice - 1], "rationale": choice.rationale}


def report(state: AuditState, runtime: Runtime[AuditContext]) -> AuditOutput:
    """Aggregate the verdicts (evals/measures/audit_verdicts.py); write the report and the confirmed
    missing gold documents."""
    context = job.context(runtime)
    benchmark = benchmark_of(runtime, state["benchmark"])
    run_dir = job.run_dir(runtime, state["run_id"])
    instances = instances_of(runtime, state["run_id"])
    judgments = {
        record["instance"]: record["verdicts"]
        for record in canonicalize(run_dir.file(JUDGMENTS_FILE), key="instance")
        if record["instance"] in instances
    }
    population = sum(1 for query in benchmark.queries if gold_document(benchmark, query.id))
    sampled = len(instances) < population
    queries = benchmark.queries_by_id
    documents = corpus_documents(benchmark)
    judges = list(state["judges"])

    def excerpt(doc_id: str) -> str:
        return document_text(*documents[doc_id])[:EXCERPT_CHARS]

    def query_text(instance: str) -> str:
        return build_query(queries[instance], HistoryMode("full"))

    dimensions = audit_verdicts.dimension_summaries(judgments, judges, population if sampled else None)
    missing = audit_verdicts.missing_gold(
        judgments,
        instances,
        lambda instance, candidate: {"query": query_text(instance), "candidate_excerpt": excerpt(candidate)},
        context.min_votes,
    )
    discriminability = audit_verdicts.discriminability(judgments, instances, population if sampled else None, missing)
    worst = audit_verdicts.worst_instances(
        judgments,
        lambda instance: {
            "query": query_text(instance),
            "gold_id": instances[instance]["gold_id"],
            "gold_excerpt": excerpt(instances[instance]["gold_id"]),
        },
    )
    # Ill-formed questions are noise whatever the judges said; the corpus is scanned only for quoted spans.
    counter = LazyCounter(lambda: DocumentCounter(document_text(*documents[doc_id]) for doc_id in documents))
    follow_ups = {instance for instance in judgments if queries[instance].history}
    flagged = ill_formed_questions(
        {instance: queries[instance].question for instance in judgments}, counter, context.many_documents, follow_ups
    )
    ill_formed = audit_verdicts.ill_formed_summary(judgments, flagged, lambda instance: queries[instance].question)
    if not run_dir.file(SHORTCUTS_FILE).exists():  # a run checkpointed before the shortcuts node existed
        shortcuts(state, runtime)
    shortcut_summary = json.loads(run_dir.file(SHORTCUTS_FILE).read_text(encoding="utf-8"))
    if not run_dir.file(LABEL_CHECKS_FILE).exists():  # a run checkpointed before the labels node existed
        labels(state, runtime)
    turn_labels = label_results(run_dir, context)
    if not run_dir.file(GATE_FILE).exists():  # a run checkpointed before the gate node existed
        gate(state, runtime)
    gate_summary_ = json.loads(run_dir.file(GATE_FILE).read_text(encoding="utf-8"))
    results = {
        "benchmark": {
            "name": benchmark.name,
            "path": str(benchmark.directory),
            "queries": len(benchmark.queries),
            "instances": len(instances),
            "sampled": sampled,
            "seed": context.seed,
            "documents": len(documents),
            "conversational": benchmark.conversational,
            "has_answers": benchmark.has_answers,
        },
        "settings": {
            "judges": judges,
            "negatives": context.negatives,
            "position_check": context.position_check,
            "sample": context.sample,
            "min_votes": context.min_votes,
            "many_documents": context.many_documents,
            "label_pool_depth": context.label_pool_depth,
            "label_agreement": context.label_agreement,
        },
        "dimensions": dimensions,
        "discriminability": discriminability,
        "agreement": audit_verdicts.agreement(judgments, instances, judges) if len(judges) > 1 else None,
        "worst": worst,
        "missing_gold": missing,
        "ill_formed": ill_formed,
        "shortcuts": shortcut_summary,
        "labels": turn_labels,
        "quality_gate": gate_summary_,
        # The newest review as the report is written: a later review counts in a later audit.
        "review": review_summary(job.workspace(runtime), benchmark.directory, run_dir.file(GATE_TURNS_FILE)),
        "verdict": audit_verdicts.overall_verdict(
            judgments,
            discriminability,
            noise_flags=sum(not item["low_alignment"] for item in ill_formed),
            shortcut_flags=shortcut_summary["flags"],
            label_note=label_checks.label_note(turn_labels),
            gate_note=gate_note(gate_summary_),
            gate_over_limit=gate_summary_["over_limit"],
            queries=len(benchmark.queries),
        ),
        "sampling": sampling_note(len(instances), population, context.seed),
        "notes": audit_notes(
            negatives=context.negatives,
            many_documents=context.many_documents,
            min_votes=context.min_votes,
            shortcuts_file=SHORTCUTS_FILE,
            shortcut_turns=shortcut_summary["turns"],
            label_checks_file=LABEL_CHECKS_FILE,
            label_pool_depth=context.label_pool_depth,
            labels_checked=bool(turn_labels),
            embedded_text_note=EMBEDDED_TEXT_NOTE,
        ),
    }
    extra = [(item["instance"], item["candidate_id"], 1) for item in missing if item["confirmed"]]
    write_beir_qrels(run_dir.file(EXTRA_QRELS_FILE), extra)  # for `benchsmith evaluate --extra-qrels`
    # audit_summary (evals/, which cannot import a graph's state) writes AuditOutput's keys
    return cast(AuditOutput, audit_summary(results, len(extra), run_dir.write_report(audit_report_files(results))))


builder = StateGraph(AuditState, context_schema=AuditContext, input_schema=AuditInput, output_schema=AuditOutput)
add_fan_out(builder, plan=plan, dispatch=dispatch, work=judge, finish=shortcuts)
builder.add_node("gate", gate)
builder.add_node("labels", labels)
builder.add_node("report", report)
builder.add_edge("shortcuts", "gate")
builder.add_edge("gate", "labels")
builder.add_edge("labels", "report")
builder.add_edge("report", END)

graph = builder.compile(name="audit")  # the Studio copy: no checkpointer (the server brings its own)
