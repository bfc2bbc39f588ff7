"""Benchmark audit (MTR-Eval): grade any retrieval benchmark with a judge ensemble and find
the gold documents it misses.

    plan ─→ dispatch ─→ Send × instances not yet judged ─→ judge ─→ report ─→ END
                └────────────── (all judged) ───────────────────────┘

One instance per judged query (for conversations: the current turn with its history). Each
judge of the ensemble rates query–evidence alignment, picks the best document of a pool of
the gold and hard negatives (discriminability; a non-gold pick suggests an unlabelled
answering document), and, where the benchmark has answers, rates their faithfulness to the
gold document and their quality. ``plan`` fixes every pool and its recorded order once
(``instances.jsonl``), so a resumed or repeated audit shows the judges the same prompts and
their cached verdicts are reused; each judged instance is appended to ``judgments.jsonl``
once. ``report`` aggregates, writes the report and ``extra_qrels.tsv`` (non-gold documents
a majority of judges picked).
"""

from __future__ import annotations

import functools
import math
import operator
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from benchsmith.agents.judges import AlignmentJudge, ChoiceJudge, FaithfulnessJudge, QualityJudge
from benchsmith.agents.models import ModelSeam
from benchsmith.evals.agreement import fleiss_kappa, score_correlations
from benchsmith.evals.audit_report import write_audit_report
from benchsmith.evals.intervals import mean_interval, proportion_interval
from benchsmith.graphs.corpus_indexes import (bm25_index, cached_benchmark, corpus_documents, dense_index, document_text,
                                   progress_reporter)
from benchsmith.graphs.resources import concurrency_slot, run_seam
from benchsmith.stores.beir import Benchmark, BenchmarkQuery
from benchsmith.stores.benchmark_files import append_once, recorded_ids, write_beir_qrels
from benchsmith.stores.errors import InputError
from benchsmith.stores.jsonl import load_jsonl, write_jsonl_atomic
from benchsmith.stores.runs import RunDirectory
from benchsmith.stores.workspace import Workspace
from benchsmith.tools.discriminability import arrange_pool, balanced_gold_slots, hard_negatives, rotated
from benchsmith.tools.embedding import DEFAULT_EMBEDDER, load_embedder
from benchsmith.tools.query_building import HistoryMode, build_query

INSTANCES_FILE, JUDGMENTS_FILE, EXTRA_QRELS_FILE = "instances.jsonl", "judgments.jsonl", "extra_qrels.tsv"
SCORE_DIMENSIONS = {"alignment": "query–evidence alignment", "faithfulness": "answer–evidence faithfulness",
                    "quality": "answer quality"}
NOISE_SCORE = 2  # an instance whose mean alignment is at most this has a gold that does not answer
WORST_SHOWN = 10
EXCERPT_CHARS = 300
RELIABLE_RATE, UNRELIABLE_RATE = 0.05, 0.20


@dataclass
class AuditContext:
    """Settings of one audit (not checkpointed: the CLI passes them again on resume)."""

    workspace: str | None = None
    chroma_host: str | None = None
    split: str = "test"
    corpus: str | None = None  # the corpus.jsonl of a turn JSONL benchmark
    negatives: int = 4  # hard negatives per pool
    sample: int | None = None  # audit a random sample of this many instances
    seed: int = 0
    position_check: bool = False  # show each pool a second time, rotated
    concurrency: int = 4  # instances judged at once
    requests_per_second: float | None = None
    embedder: Any = None  # a ready Embedder for the dense negatives (tests); None: the default model
    models: dict[str, ModelSeam] | None = None  # ready seams by judge spec (tests, embedding apps)


class AuditInput(TypedDict):
    run_id: str
    benchmark: str
    judges: list[str]


class AuditOutput(TypedDict, total=False):
    run_id: str
    instances: int
    report: dict[str, str]
    verdict: dict[str, str]
    means: dict[str, float]  # {dimension: mean}, and the gold pick rate
    confirmed_missing_gold: int


class AuditState(AuditInput, AuditOutput, total=False):
    judged: Annotated[int, operator.add]


class JudgeTask(TypedDict):
    run_id: str
    benchmark: str
    judges: list[str]
    instance: str


# ---------------------------------------------------------------------------------------
# Inputs.

def _workspace(runtime: Runtime[AuditContext]) -> Workspace:
    return Workspace.resolve(runtime.context.workspace)


def _benchmark(runtime: Runtime[AuditContext], spec: str) -> Benchmark:
    return cached_benchmark(spec, _workspace(runtime), runtime.context.split, runtime.context.corpus)


@functools.lru_cache(maxsize=2)
def _instances_in(path: Path, modified: float) -> dict[str, dict[str, Any]]:
    return {record["instance"]: record for record in load_jsonl(path)}


def _instances(runtime: Runtime[AuditContext], run_id: str) -> dict[str, dict[str, Any]]:
    path = RunDirectory(_workspace(runtime), run_id).file(INSTANCES_FILE)
    return _instances_in(path, path.stat().st_mtime)


def _seam(runtime: Runtime[AuditContext], run_id: str, judge: str) -> ModelSeam:
    if runtime.context.models and judge in runtime.context.models:
        return runtime.context.models[judge]
    return run_seam(_workspace(runtime), run_id, judge, runtime.context.seed, runtime.context.requests_per_second)


# ---------------------------------------------------------------------------------------
# Nodes.

def plan(state: AuditState, runtime: Runtime[AuditContext]) -> dict[str, Any]:
    """Choose the instances and fix each one's pool and its order (once per run)."""
    path = RunDirectory(_workspace(runtime), state["run_id"]).file(INSTANCES_FILE)
    if path.exists():  # a resumed run keeps its pools, so cached verdicts stay valid
        return {"instances": len(load_jsonl(path))}
    context = runtime.context
    if context.negatives < 1:
        raise InputError("--negatives must be at least 1")
    benchmark = _benchmark(runtime, state["benchmark"])
    queries = [query for query in benchmark.queries if _gold(benchmark, query.id)]
    if not queries:
        raise InputError(f"{benchmark.directory}: no query has a relevant document in the qrels")
    if context.sample is not None and context.sample < len(queries):
        queries = random.Random(f"{context.seed}:sample").sample(sorted(queries, key=lambda q: q.id), context.sample)
        queries.sort(key=lambda query: query.id)
    rankings = _negative_rankings(runtime, benchmark, queries)
    slots = balanced_gold_slots([query.id for query in queries], context.negatives + 1, context.seed)
    records = []
    for query in queries:
        gold = _gold(benchmark, query.id)
        negatives = hard_negatives(rankings[query.id], set(benchmark.qrels[query.id]), context.negatives)
        pool = arrange_pool(query.id, gold, negatives, slots[query.id], context.seed)
        records.append({"instance": query.id, "gold_id": gold, "pool": pool,
                        **({"rotated_pool": rotated(pool)} if context.position_check else {})})
    write_jsonl_atomic(path, records)
    return {"instances": len(records)}


def _gold(benchmark: Benchmark, query_id: str) -> str | None:
    """The instance's gold document: the most relevant judged one (ties by id)."""
    relevant = [(relevance, doc_id) for doc_id, relevance in benchmark.qrels.get(query_id, {}).items() if relevance > 0]
    return min(relevant, key=lambda item: (-item[0], item[1]))[1] if relevant else None


def _negative_rankings(runtime: Runtime[AuditContext], benchmark: Benchmark,
                       queries: list[BenchmarkQuery]) -> dict[str, list[list[str]]]:
    """Per query, BM25's and the dense retriever's rankings of the corpus for the turn with its history."""
    texts = {query.id: build_query(query, HistoryMode("full")) for query in queries}
    depth = runtime.context.negatives + max(len(benchmark.qrels[query.id]) for query in queries) + 5
    lexical = bm25_index(benchmark).search(texts, depth, progress_reporter("negatives bm25"))
    embedder = runtime.context.embedder or load_embedder(DEFAULT_EMBEDDER)
    index = dense_index(_workspace(runtime), runtime.context.chroma_host, benchmark, embedder)
    query_ids = list(texts)
    semantic = index.search(query_ids, embedder.encode([texts[q] for q in query_ids]), depth,
                            progress_reporter("negatives dense"))
    return {query_id: [list(lexical.get(query_id, {})), list(semantic.get(query_id, {}))] for query_id in query_ids}


def dispatch(state: AuditState, runtime: Runtime[AuditContext]) -> list[Send] | Literal["report"]:
    """One judging task per instance not yet in judgments.jsonl."""
    judged = recorded_ids(RunDirectory(_workspace(runtime), state["run_id"]).file(JUDGMENTS_FILE), key="instance")
    sends = [Send("judge", {"run_id": state["run_id"], "benchmark": state["benchmark"], "judges": state["judges"],
                            "instance": instance})
             for instance in _instances(runtime, state["run_id"]) if instance not in judged]
    return sends or "report"


def judge(task: JudgeTask, runtime: Runtime[AuditContext]) -> dict[str, Any]:
    """Every judge's verdicts on one instance, appended to judgments.jsonl once."""
    benchmark = _benchmark(runtime, task["benchmark"])
    instance = _instances(runtime, task["run_id"])[task["instance"]]
    query = benchmark.queries_by_id[task["instance"]]
    documents = corpus_documents(benchmark)
    text = {doc_id: document_text(*documents[doc_id]) for doc_id in instance["pool"]}
    conversation = {"history": query.history, "question": query.question}
    verdicts: dict[str, dict[str, Any]] = {}
    with concurrency_slot(task["run_id"], runtime.context.concurrency):
        for judge_spec in task["judges"]:
            verdicts[judge_spec] = _verdict_of(_seam(runtime, task["run_id"], judge_spec), instance, query,
                                               conversation, text)
    run_dir = RunDirectory(_workspace(runtime), task["run_id"])
    append_once(run_dir.file(JUDGMENTS_FILE), {"instance": task["instance"], "verdicts": verdicts}, key="instance")
    return {"judged": 1}


def _verdict_of(seam: ModelSeam, instance: dict[str, Any], query: BenchmarkQuery, conversation: dict[str, Any],
                text: dict[str, str]) -> dict[str, Any]:
    """One judge's verdicts on one instance."""
    alignment = seam.run(AlignmentJudge(), **conversation, document=text[instance["gold_id"]])
    verdict: dict[str, Any] = {"alignment": {"score": alignment.score, "rationale": alignment.rationale},
                               "choice": _choose(seam, conversation, instance["pool"], text)}
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
    """Aggregate the verdicts; write the report and the confirmed missing gold documents."""
    context = runtime.context
    benchmark = _benchmark(runtime, state["benchmark"])
    run_dir = RunDirectory(_workspace(runtime), state["run_id"])
    instances = _instances(runtime, state["run_id"])
    judgments = {record["instance"]: record["verdicts"] for record in load_jsonl(run_dir.file(JUDGMENTS_FILE))
                 if record["instance"] in instances}
    population = sum(1 for query in benchmark.queries if _gold(benchmark, query.id))
    sampled = len(instances) < population
    queries = benchmark.queries_by_id
    documents = corpus_documents(benchmark)
    judges = list(state["judges"])
    dimensions = _dimensions(judgments, judges, population if sampled else None)
    missing = _missing_gold(judgments, instances, queries, documents, judges)
    discriminability = _discriminability(judgments, instances, judges, population if sampled else None, missing)
    results = {
        "benchmark": {"name": benchmark.name, "path": str(benchmark.directory), "queries": len(benchmark.queries),
                      "instances": len(instances), "sampled": sampled, "seed": context.seed,
                      "documents": len(documents), "conversational": benchmark.conversational,
                      "has_answers": benchmark.has_answers},
        "settings": {"judges": judges, "negatives": context.negatives, "position_check": context.position_check,
                     "sample": context.sample},
        "dimensions": dimensions,
        "discriminability": discriminability,
        "agreement": _agreement(judgments, instances, judges) if len(judges) > 1 else None,
        "worst": _worst(judgments, instances, queries, documents),
        "missing_gold": missing,
        "verdict": _verdict(judgments, dimensions, discriminability),
        "sampling": (f"Audited a random sample of {len(instances):,} of {population:,} instances (seed {context.seed}); "
                     "intervals include the finite-population correction." if sampled else
                     f"Audited all {len(instances):,} instances; intervals treat them as a sample of the process that "
                     "made the benchmark."),
        "notes": [
            "Each instance is one judged query (for conversations, the current turn with its history); its gold "
            "document is its most relevant judged one.",
            f"Pools hold the gold document and {context.negatives} hard negatives, the best-ranked unjudged documents "
            "of BM25 and the dense retriever taken in turn; the gold's slot is balanced across instances.",
            f"Noise: an instance whose judge-averaged alignment is at most {NOISE_SCORE}. Suspected sparsity: a judge "
            "picked a non-gold document. Confirmed missing gold: a majority of the judges picked the same one.",
        ],
    }
    extra = [(item["instance"], item["candidate_id"], 1) for item in missing if item["confirmed"]]
    write_beir_qrels(run_dir.file(EXTRA_QRELS_FILE), extra)  # for `benchsmith evaluate --extra-qrels`
    paths = write_audit_report(results, run_dir.path)
    means = {name: values["mean"] for name, values in dimensions.items()}
    means["gold_pick_rate"] = discriminability["gold_pick_rate"]
    return {"instances": len(instances), "report": {kind: str(path) for kind, path in paths.items()},
            "verdict": results["verdict"], "means": means, "confirmed_missing_gold": len(extra)}


# ---------------------------------------------------------------------------------------
# Aggregation (pure functions of the verdicts).

def _scores(judgments: dict[str, dict[str, Any]], dimension: str) -> dict[str, dict[str, int]]:
    """``{judge: {instance: score}}`` for one dimension."""
    scores: dict[str, dict[str, int]] = {}
    for instance, verdicts in judgments.items():
        for judge_spec, verdict in verdicts.items():
            if dimension in verdict:
                scores.setdefault(judge_spec, {})[instance] = verdict[dimension]["score"]
    return scores


def _instance_means(judgments: dict[str, dict[str, Any]], dimension: str) -> dict[str, float]:
    means = {}
    for instance, verdicts in judgments.items():
        values = [verdict[dimension]["score"] for verdict in verdicts.values() if dimension in verdict]
        if values:
            means[instance] = sum(values) / len(values)
    return means


def _dimensions(judgments: dict[str, dict[str, Any]], judges: list[str], population: int | None) -> dict[str, Any]:
    dimensions = {}
    for name, label in SCORE_DIMENSIONS.items():
        means = _instance_means(judgments, name)
        if not means:
            continue
        interval = mean_interval(list(means.values()), population)
        by_judge = _scores(judgments, name)
        dimensions[name] = {
            "label": label, "mean": interval.mean, "ci_low": interval.low, "ci_high": interval.high, "n": interval.n,
            "distribution": {str(score): sum(1 for value in means.values() if _nearest(value) == score)
                             for score in range(1, 6)},
            "per_judge_mean": {judge_spec: sum(by_judge[judge_spec].values()) / len(by_judge[judge_spec])
                               for judge_spec in judges if by_judge.get(judge_spec)},
        }
    return dimensions


def _nearest(value: float) -> int:
    return int(math.floor(value + 0.5))  # half up: 2.5 is 3, not Python's banker's 2


def _majority_pick(verdicts: dict[str, Any]) -> tuple[str, int]:
    """The document most judges picked (ties by id) and its votes."""
    votes = Counter(verdict["choice"]["doc_id"] for verdict in verdicts.values())
    doc_id = min(votes, key=lambda candidate: (-votes[candidate], candidate))
    return doc_id, votes[doc_id]


def _discriminability(judgments: dict[str, dict[str, Any]], instances: dict[str, dict[str, Any]], judges: list[str],
                      population: int | None, missing: list[dict[str, Any]]) -> dict[str, Any]:
    majorities = {instance: _majority_pick(verdicts) for instance, verdicts in judgments.items()}
    gold_picked = sum(1 for instance, (doc_id, votes) in majorities.items()
                      if doc_id == instances[instance]["gold_id"] and votes * 2 > len(judgments[instance]))
    interval = proportion_interval(gold_picked, len(judgments), population)
    pool_size = max((len(record["pool"]) for record in instances.values()), default=0)
    slots = Counter(str(instances[i]["pool"].index(instances[i]["gold_id"]) + 1) for i in judgments)
    picks = Counter(str(verdict["choice"]["slot"]) for verdicts in judgments.values() for verdict in verdicts.values())
    return {
        "gold_pick_rate": interval.mean, "ci_low": interval.low, "ci_high": interval.high, "n": interval.n,
        "suspected_sparsity": len({item["instance"] for item in missing}),
        "confirmed_missing_gold": sum(1 for item in missing if item["confirmed"]),
        "pool_size": pool_size,
        "gold_position_counts": {str(slot): slots.get(str(slot), 0) for slot in range(1, pool_size + 1)},
        "choice_position_counts": {str(slot): picks.get(str(slot), 0) for slot in range(1, pool_size + 1)},
        "position_bias": _position_bias(judgments),
    }


def _position_bias(judgments: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """With the pool rotated, did the judge keep its document (content) or its slot (position)?"""
    pairs = [(verdict["choice"], verdict["choice_rotated"]) for verdicts in judgments.values()
             for verdict in verdicts.values() if "choice_rotated" in verdict]
    if not pairs:
        return None
    return {"checked": len(pairs),
            "same_document": sum(first["doc_id"] == second["doc_id"] for first, second in pairs) / len(pairs),
            "same_position": sum(first["slot"] == second["slot"] for first, second in pairs) / len(pairs)}


def _agreement(judgments: dict[str, dict[str, Any]], instances: dict[str, dict[str, Any]],
               judges: list[str]) -> dict[str, Any]:
    agreement: dict[str, Any] = {}
    for name in SCORE_DIMENSIONS:
        scores = _scores(judgments, name)
        if len(scores) > 1:
            correlations = score_correlations(scores)
            agreement[name] = {"pearson": correlations["pearson"], "spearman": correlations["spearman"]}
    # Fleiss' kappa on "picked the gold or not": which other document is a separate question.
    ratings = [["gold" if verdicts[judge_spec]["choice"]["doc_id"] == instances[instance]["gold_id"] else "other"
                for judge_spec in judges]
               for instance, verdicts in judgments.items() if all(judge_spec in verdicts for judge_spec in judges)]
    agreement["choice"] = {"fleiss_kappa": fleiss_kappa(ratings), "judges": len(judges)}
    return agreement


def _missing_gold(judgments: dict[str, dict[str, Any]], instances: dict[str, dict[str, Any]],
                  queries: dict[str, BenchmarkQuery], documents: dict[str, tuple[str, str]],
                  judges: list[str]) -> list[dict[str, Any]]:
    """Non-gold documents a judge preferred, confirmed when a majority picked the same one."""
    candidates = []
    for instance, verdicts in sorted(judgments.items()):
        gold = instances[instance]["gold_id"]
        picked: dict[str, dict[str, str]] = {}
        for judge_spec, verdict in verdicts.items():
            if verdict["choice"]["doc_id"] != gold:
                picked.setdefault(verdict["choice"]["doc_id"], {})[judge_spec] = verdict["choice"]["rationale"]
        for candidate, reasons in picked.items():
            candidates.append({
                "instance": instance, "query": build_query(queries[instance], HistoryMode("full")), "gold_id": gold,
                "candidate_id": candidate, "candidate_excerpt": document_text(*documents[candidate])[:EXCERPT_CHARS],
                "votes": len(reasons), "judges": len(verdicts), "confirmed": len(reasons) * 2 > len(verdicts),
                "reasons": reasons})
    return sorted(candidates, key=lambda item: (not item["confirmed"], -item["votes"], item["instance"]))


def _worst(judgments: dict[str, dict[str, Any]], instances: dict[str, dict[str, Any]],
           queries: dict[str, BenchmarkQuery], documents: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    means = _instance_means(judgments, "alignment")
    lowest = sorted(means, key=lambda instance: (means[instance], instance))[:WORST_SHOWN]
    return [{"instance": instance, "query": build_query(queries[instance], HistoryMode("full")),
             "gold_id": instances[instance]["gold_id"],
             "gold_excerpt": document_text(*documents[instances[instance]["gold_id"]])[:EXCERPT_CHARS],
             "alignment": means[instance],
             "rationales": {judge_spec: verdict["alignment"]["rationale"]
                            for judge_spec, verdict in judgments[instance].items()}}
            for instance in lowest]


def _verdict(judgments: dict[str, dict[str, Any]], dimensions: dict[str, Any],
             discriminability: dict[str, Any]) -> dict[str, str]:
    audited = max(len(judgments), 1)
    noise = sum(1 for mean in _instance_means(judgments, "alignment").values() if mean <= NOISE_SCORE) / audited
    sparsity = discriminability["confirmed_missing_gold"] / audited
    worst = max(noise, sparsity)
    label = "reliable" if worst <= RELIABLE_RATE else "unreliable" if worst > UNRELIABLE_RATE else "usable with caveats"
    explanation = (f"{noise:.0%} of the audited instances have a gold document judged not to answer (alignment ≤ "
                   f"{NOISE_SCORE}: annotation noise); for {sparsity:.0%} a majority of judges preferred an unlabelled "
                   f"document (missing gold: sparsity); judges picked the gold document in "
                   f"{discriminability['gold_pick_rate']:.0%} of pools. Thresholds: reliable when both rates are at most "
                   f"{RELIABLE_RATE:.0%}, unreliable when either exceeds {UNRELIABLE_RATE:.0%}.")
    return {"label": label, "explanation": explanation}


builder = StateGraph(AuditState, context_schema=AuditContext, input_schema=AuditInput, output_schema=AuditOutput)
builder.add_node("plan", plan)
builder.add_node("judge", judge)
builder.add_node("report", report)
builder.add_edge(START, "plan")
builder.add_conditional_edges("plan", dispatch, ["judge", "report"])
builder.add_edge("judge", "report")
builder.add_edge("report", END)

# The Studio copy: compiled without a checkpointer (the server brings its own).
graph = builder.compile()
graph.name = "audit"


def estimate_audit(benchmark: Benchmark, judges: list[str], negatives: int, sample: int | None,
                   position_check: bool) -> dict[str, int]:
    """Model calls and tokens (about 4 characters each) an audit would spend, before spending."""
    documents = corpus_documents(benchmark)
    mean_document = sum(len(document_text(*d)) for d in documents.values()) // max(len(documents), 1)
    queries = [query for query in benchmark.queries if _gold(benchmark, query.id)]
    instances = min(len(queries), sample) if sample is not None else len(queries)
    conversation = sum(len(build_query(q, HistoryMode("full"))) for q in queries) // max(len(queries), 1)
    prompt = 800  # instructions and tags
    per_instance = [conversation + mean_document + prompt,  # alignment
                    conversation + (negatives + 1) * mean_document + prompt]  # choice
    if position_check:
        per_instance.append(per_instance[1])
    if benchmark.has_answers:
        per_instance += [mean_document + 2 * prompt, conversation + 2 * prompt]  # faithfulness, quality
    calls = instances * len(judges) * len(per_instance)
    return {"instances": instances, "calls": calls,
            "input_tokens": instances * len(judges) * sum(per_instance) // 4, "output_tokens": calls * 60}
