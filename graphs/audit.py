"""Benchmark audit (MTR-Eval): grade any retrieval benchmark with a judge ensemble and find
the gold documents it misses.

    plan ─→ dispatch ─┬→ Send × a batch of instances not yet judged ─→ judge ─→ gather ─→ dispatch
                      ├→ wait ─→ dispatch     (other workers hold the last instances)
                      └→ shortcuts ─→ labels ─→ report ─→ END        (all judged)

One instance per judged query (for conversations: the current turn with its history). Each
judge of the ensemble rates query–evidence alignment, picks the best document of a pool of
the gold and hard negatives (discriminability; a non-gold pick suggests an unlabelled
answering document), and, where the benchmark has answers, rates their faithfulness to the
gold document and their quality. ``plan`` fixes every pool and its recorded order once
(``instances.jsonl``), so a resumed or repeated audit shows the judges the same prompts and
their cached verdicts are reused; each judged instance is recorded once, as a work item
(``judgments.jsonl`` for one process; with a database, the queue workers on many machines
claim instances from). ``shortcuts`` measures, without a model, the shortcuts a retriever
can exploit (evals/shortcuts.py: lexical overlap, query-only BM25, answer leakage, history
dependence, ill-formed questions) into ``shortcuts.json``. ``labels`` checks the turn labels
a benchmark carries (issue 22; evals/label_checks.py, agents/label_judges.py): every judge asks
whether an unanswerable turn is answered by a chunk of the retrievers' pool, whether an
underspecified one fits two of its candidates, whether each gold of a multi-passage turn
contributes, whether a partial turn's gold answers part of it and no pooled chunk the part its
reference answer says is missing; into ``label_checks.json``. An instance's gold is the chunk
its question was asked from first (a synthesis run's ``gold_ids`` order), else the first by id.
``report`` aggregates, writes the report and ``extra_qrels.tsv`` (non-gold documents a majority
of judges picked).
"""

from __future__ import annotations

import functools
import json
import contextvars
from concurrent.futures import ThreadPoolExecutor
import operator
import random
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from benchsmith.agents import label_judges
from benchsmith.agents.judges import AlignmentJudge, ChoiceJudge, FaithfulnessJudge, QualityJudge
from benchsmith.agents.models import ModelSeam
from benchsmith.agents.text import WordStatistics
from benchsmith.evals import audit_verdicts, label_checks
from benchsmith.evals.audit_report import audit_report_files
from benchsmith.evals.audit_verdicts import NOISE_SCORE
from benchsmith.evals import shortcuts as shortcut_measures
from benchsmith.evals.lexical_overlap import lexical_overlap
from benchsmith.evals.measures import MeasureResults, evaluate_batches, parse_measures
from benchsmith.evals.quality_gate import TurnEvidence, judge_turn
from benchsmith.evals.quality_gate.summary import gate_note, gate_summary
from benchsmith.evals.question_form import DEFAULT_MANY_DOCUMENTS, DocumentCounter, ill_formed_questions
from benchsmith.graphs.contexts.audit import DEFAULT_NEGATIVES, AuditContext  # noqa: F401 (re-exported)
from benchsmith.tools.embedded_text import EMBEDDED_TEXT_NOTE
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.corpus_indexes import (bm25_index, cached_benchmark, corpus_documents,
                                                      corpus_statistics, dense_index, document_text)
from benchsmith.graphs.evaluate import DEFAULT_DEPTH as EVALUATION_DEPTH
from benchsmith.graphs.runtime.fanout import claimed_work, dispatch_items, wait_for_workers
from benchsmith.graphs.runtime.progress import progress_reporter, report_advance
from benchsmith.graphs.runtime.resources import (concurrency_slot, embedder_for, run_items,
                                         run_seam)
from benchsmith.stores.beir import Benchmark, BenchmarkQuery
from benchsmith.stores.benchmark_files import canonicalize, run_dialogues_file, turn_query_id, write_beir_qrels
from benchsmith.stores.errors import InputError
from benchsmith.stores.files import write_files_atomic
from benchsmith.stores.jsonl import load_jsonl, write_jsonl_atomic
from benchsmith.stores.runs import RunDirectory
from benchsmith.stores.work_items import WorkItems
from benchsmith.stores.workspace import Workspace
from benchsmith.tools.discriminability import arrange_pool, balanced_gold_slots, hard_negatives, rotated
from benchsmith.tools.query_building import HistoryMode, build_query

INSTANCES_FILE, JUDGMENTS_FILE, EXTRA_QRELS_FILE = "instances.jsonl", "judgments.jsonl", "extra_qrels.tsv"
SHORTCUTS_FILE, SHORTCUT_TURNS_FILE = "shortcuts.json", "shortcut_turns.jsonl"
LABEL_CHECKS_FILE = "label_checks.json"
GATE_FILE, GATE_TURNS_FILE = "quality_gate.json", "quality_gate_turns.jsonl"
GATE_POOL_DEPTH = 10  # each retriever's top chunks an unanswerable turn's answer is looked for in (as synthesis does)
QUERY_ONLY_MEASURES = ("R@10", "RR@10")
EXCERPT_CHARS = 300


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
    suspected_missing_gold: int
    ill_formed_questions: int  # instances whose question is ill-formed (evals/question_form.py: fragments, markup...)
    shortcut_flags: list[str]  # evals/shortcuts.py: lexically_trivial, answer_leak, ill_formed, history_free
    lexical_overlap: dict[str, float | None]  # mean, median, p90 of the turns' lexical overlap with their gold
    label_agreement: dict[str, float]  # per checked turn label: the share of its turns the judges confirmed


class AuditState(AuditInput, AuditOutput, total=False):
    judged: Annotated[int, operator.add]


class JudgeTask(TypedDict):
    run_id: str
    benchmark: str
    judges: list[str]
    instance: str


# ---------------------------------------------------------------------------------------
# Inputs.

job = JobRuntime(AuditContext)  # the runtime's settings, workspace and run directories


def _benchmark(runtime: Runtime[AuditContext], spec: str) -> Benchmark:
    return cached_benchmark(spec, job.workspace(runtime), job.context(runtime).split, job.context(runtime).corpus)


@functools.lru_cache(maxsize=2)
def _instances_in(path: Path, modified: float) -> dict[str, dict[str, Any]]:
    return {record["instance"]: record for record in load_jsonl(path)}


def _instances(runtime: Runtime[AuditContext], run_id: str) -> dict[str, dict[str, Any]]:
    path = job.run_dir(runtime, run_id).file(INSTANCES_FILE)
    return _instances_in(path, path.stat().st_mtime)


def _seam(runtime: Runtime[AuditContext], run_id: str, judge: str) -> ModelSeam:
    return run_seam(job.workspace(runtime), run_id, judge, job.context(runtime))


# ---------------------------------------------------------------------------------------
# Nodes.

def plan(state: AuditState, runtime: Runtime[AuditContext]) -> dict[str, Any]:
    """Choose the instances and fix each one's pool and its order (once per run)."""
    items = _items(runtime, state["run_id"])
    path = job.run_dir(runtime, state["run_id"]).file(INSTANCES_FILE)
    if path.exists():  # a resumed run keeps its pools, so cached verdicts stay valid
        return {"instances": _registered(items, load_jsonl(path))}
    if shared := items.planned():  # a worker joining a shared run judges the pools its first worker fixed
        write_jsonl_atomic(path, shared)
        return {"instances": _registered(items, shared)}
    context = job.context(runtime)
    if context.negatives < 1:
        raise InputError("--negatives must be at least 1")
    benchmark = _benchmark(runtime, state["benchmark"])
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
        negatives = hard_negatives(rankings[query.id], set(benchmark.qrels[query.id]), context.negatives)
        pool = arrange_pool(query.id, gold, negatives, slots[query.id], context.seed)
        records.append({"instance": query.id, "gold_id": gold, "pool": pool,
                        **({"rotated_pool": rotated(pool)} if context.position_check else {})})
    write_jsonl_atomic(path, records)
    return {"instances": _registered(items, records)}


def _registered(items: WorkItems, records: list[dict[str, Any]]) -> int:
    items.add([(record["instance"], record) for record in records])
    return len(records)


def gold_document(benchmark: Benchmark, query_id: str, asked: Sequence[str] = ()) -> str | None:
    """The instance's gold document: the most relevant judged one (ties: the first in ``asked``,
    the order a synthesis run's questioner read its golds in, then by id)."""
    golds = asked_golds(benchmark, query_id, asked)
    return golds[0] if golds else None


def asked_golds(benchmark: Benchmark, query_id: str, asked: Sequence[str] = ()) -> list[str]:
    """The query's judged relevant documents, most relevant first, then in ``asked`` order, then by id."""
    order = {doc_id: position for position, doc_id in enumerate(asked)}
    relevant = [(relevance, doc_id) for doc_id, relevance in benchmark.qrels.get(query_id, {}).items() if relevance > 0]
    return [doc_id for _, doc_id in sorted(relevant, key=lambda item: (-item[0], order.get(item[1], len(order)),
                                                                         item[1]))]


def _negative_rankings(runtime: Runtime[AuditContext], run_id: str, benchmark: Benchmark,
                       queries: list[BenchmarkQuery]) -> dict[str, list[list[str]]]:
    """Per query, BM25's and the dense retriever's rankings of the corpus for the turn with its history."""
    depth = job.context(runtime).negatives + max(len(benchmark.qrels[query.id]) for query in queries) + 5
    return _rankings(runtime, run_id, benchmark, queries, depth, "negatives")


def _rankings(runtime: Runtime[AuditContext], run_id: str, benchmark: Benchmark, queries: list[BenchmarkQuery],
              depth: int, stage: str) -> dict[str, list[list[str]]]:
    """Per query, BM25's and the dense retriever's top ``depth`` of the corpus for the turn with its history."""
    context = job.context(runtime)
    texts = {query.id: build_query(query, HistoryMode("full")) for query in queries}
    lexical = bm25_index(benchmark, job.workspace(runtime)).search(texts, depth, progress_reporter(f"{stage} bm25"))
    embedder = embedder_for(context.embedder, job.workspace(runtime), run_id, context)
    index = dense_index(job.workspace(runtime), context.chroma_host, benchmark, embedder)
    query_ids = list(texts)
    semantic = index.search(query_ids, embedder.encode([texts[q] for q in query_ids]), depth,
                            progress_reporter(f"{stage} dense"))
    return {query_id: [list(lexical.get(query_id, {})), list(semantic.get(query_id, {}))] for query_id in query_ids}


def _items(runtime: Runtime[AuditContext], run_id: str) -> WorkItems:
    """The run's instances as work items: the judgments log alone, or shared by workers."""
    return run_items(job.context(runtime), job.workspace(runtime), run_id, JUDGMENTS_FILE, "instance")


def dispatch(state: AuditState, runtime: Runtime[AuditContext]) -> list[Send] | Literal["wait", "shortcuts"]:
    """One judging task per instance nobody judged or holds; the shortcuts, then the report, when
    all are judged; wait while other workers still hold some."""
    return dispatch_items(  # type: ignore[return-value]
        _items(runtime, state["run_id"]), "judge", job.context(runtime).concurrency,
        lambda instance: Send("judge", {"run_id": state["run_id"], "benchmark": state["benchmark"],
                                        "judges": state["judges"], "instance": instance}), "shortcuts")


def gather(state: AuditState) -> dict[str, Any]:
    """Joins a batch of judged instances before the next one is dispatched."""
    return {}


def judge(task: JudgeTask, runtime: Runtime[AuditContext]) -> dict[str, Any]:
    """Every judge's verdicts on one instance, recorded once (claimed first when workers share the run)."""
    benchmark = _benchmark(runtime, task["benchmark"])
    instance = _instances(runtime, task["run_id"])[task["instance"]]
    query = benchmark.queries_by_id[task["instance"]]
    documents = corpus_documents(benchmark)
    text = {doc_id: document_text(*documents[doc_id]) for doc_id in instance["pool"]}
    conversation = {"history": query.history, "question": query.question}
    items = _items(runtime, task["run_id"])
    with concurrency_slot(task["run_id"], job.context(runtime).concurrency):
        verdicts = claimed_work(items, task["instance"], lambda: {
            judge_spec: _verdict_of(_seam(runtime, task["run_id"], judge_spec), instance, query, conversation, text)
            for judge_spec in task["judges"]})
    if verdicts is None:
        return {"judged": 0}  # another worker has it, or judged it
    job.run_dir(runtime, task["run_id"]).usage.sync()
    items.complete(task["instance"], {"instance": task["instance"], "verdicts": verdicts})
    report_advance("judge")
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


def shortcuts(state: AuditState, runtime: Runtime[AuditContext]) -> dict[str, Any]:
    """The shortcuts a retriever can exploit, measured without a model over every turn with a
    relevant document (not only the judged sample): ``shortcuts.json`` and, per turn,
    ``shortcut_turns.jsonl``."""
    benchmark = _benchmark(runtime, state["benchmark"])
    documents = corpus_documents(benchmark)
    counter = _LazyCounter(lambda: DocumentCounter(document_text(*documents[doc_id]) for doc_id in documents))
    summary, per_turn = benchmark_shortcuts(benchmark, counter, job.context(runtime).many_documents, job.workspace(runtime))
    run_dir = job.run_dir(runtime, state["run_id"])
    write_files_atomic(run_dir.path, {"shortcuts": (SHORTCUTS_FILE, json.dumps(summary, indent=2) + "\n")})
    write_jsonl_atomic(run_dir.file(SHORTCUT_TURNS_FILE), per_turn)
    return {"shortcut_flags": summary["flags"],
            "lexical_overlap": {key: summary["lexical_overlap"][key] for key in ("mean", "median", "p90")}}


def benchmark_shortcuts(benchmark: Benchmark, count_documents: Callable[[str], int] | None = None,
                        many_documents: int = DEFAULT_MANY_DOCUMENTS, workspace: Workspace | None = None
                        ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(shortcuts.json's summary, per-turn records)`` of a benchmark (evals/shortcuts.py).

    Query-only retrieval is measured as ``benchsmith evaluate --retriever bm25`` measures it:
    the same BM25 index, query texts (``--history current``, and ``oracle`` for the rewrite
    where every turn has one) and ir_measures over all the benchmark's judgments, on each
    query's top 10 with ties (what the measures at rank 10 read of the evaluation's run)."""
    documents = corpus_documents(benchmark)
    turns = [query for query in benchmark.queries if gold_document(benchmark, query.id)]
    overlaps = {query.id: lexical_overlap(query.question, [
        document_text(*documents[doc_id]) for doc_id, relevance in benchmark.qrels[query.id].items()
        if relevance > 0 and doc_id in documents]) for query in turns}
    leaks = {query.id: shortcut_measures.leaks_answer(query.question, query.response) for query in turns
             if query.response}
    flagged = ill_formed_questions({query.id: query.question for query in turns}, count_documents, many_documents,
                                   follow_ups={query.id for query in turns if query.history})
    current = _bm25_measures(benchmark, HistoryMode("current"), (*QUERY_ONLY_MEASURES, "nDCG@10"), workspace)
    rewrite = (_bm25_measures(benchmark, HistoryMode("oracle"), QUERY_ONLY_MEASURES, workspace)
               if benchmark.queries and all(query.rewrite for query in benchmark.queries) else None)
    gain = None
    if benchmark.conversational:
        full = _bm25_measures(benchmark, HistoryMode("full"), ("nDCG@10",), workspace)
        gain = full.aggregate["nDCG@10"] - current.aggregate["nDCG@10"]
    summary = shortcut_measures.shortcut_summary(
        overlaps, {"current": _means(current), "rewrite": _means(rewrite) if rewrite else None}, leaks, gain, flagged,
        {query.id: query.question for query in turns}, [query.id for query in turns])
    recall = current.per_query
    per_turn = [{"turn": query.id, "question": query.question, "lexical_overlap": overlaps[query.id],
                 "query_only_R@10": recall.get(query.id, {}).get("R@10"),
                 "answer_leak": leaks.get(query.id), "ill_formed": flagged.get(query.id, [])} for query in turns]
    return summary, per_turn


def _bm25_measures(benchmark: Benchmark, mode: HistoryMode, names: tuple[str, ...],
                   workspace: Workspace | None = None) -> MeasureResults:
    """Measures at rank k (``R@10`` ...) of BM25's run: they read the top k, equal scores ordered
    by doc id, so each query's documents at or above its k-th score give what the evaluation's
    depth-1000 run gives, without ranking the corpus for each of every turn's queries."""
    texts = {query.id: build_query(query, mode) for query in benchmark.queries}
    cutoff = max(int(name.rpartition("@")[2]) for name in names)
    run = bm25_index(benchmark, workspace).best_with_ties(texts, min(cutoff, EVALUATION_DEPTH))
    return evaluate_batches(parse_measures(list(names)), benchmark.qrels, [run])


def _means(results: MeasureResults) -> dict[str, float]:
    return {name: results.aggregate[name] for name in QUERY_ONLY_MEASURES}


def gate(state: AuditState, runtime: Runtime[AuditContext]) -> dict[str, Any]:
    """The offline quality gate (evals/quality_gate/) on every turn, whatever wrote the benchmark:
    the reading rubric's broken classes per turn (``quality_gate_turns.jsonl``) and their rates with
    examples (``quality_gate.json``); an unanswerable or partial turn's answer is looked for in BM25's
    and the dense retriever's top chunks for it. A resumed run keeps the files."""
    run_dir = job.run_dir(runtime, state["run_id"])
    if run_dir.file(GATE_FILE).exists():
        return {}
    benchmark = _benchmark(runtime, state["benchmark"])
    documents = corpus_documents(benchmark)
    kinds, candidates = _turn_values(benchmark, "turn_type"), turn_candidates(benchmark)
    pooled = [query for query in benchmark.queries if query.answerability in ("unanswerable", "partial")]
    pools = {query_id: pooled_chunks(rankings) for query_id, rankings in _rankings(
        runtime, state["run_id"], benchmark, pooled, GATE_POOL_DEPTH, "gate pool").items()} if pooled else {}

    def titled(ids: Sequence[str]) -> tuple[tuple[str, str], ...]:
        return tuple(documents[doc_id] for doc_id in ids if doc_id in documents)

    verdicts = {}
    for query in benchmark.queries:
        golds = [doc for doc, relevance in benchmark.qrels.get(query.id, {}).items() if relevance > 0]
        evidence = TurnEvidence(
            question=query.question, reply=query.response or "",
            turn_type=kinds.get(query.id) or query.answerability or "answerable", previous=tuple(query.history),
            gold=titled(golds), candidates=titled(candidates.get(query.id, [])),
            remaining_pool=[document_text(*documents[doc]) for doc in pools[query.id] if doc in documents]
            if query.id in pools else None)
        verdicts[query.id] = judge_turn(evidence)
    summary = gate_summary(verdicts, {query.id: query.question for query in benchmark.queries})
    write_files_atomic(run_dir.path, {"gate": (GATE_FILE, json.dumps(summary, indent=2) + "\n")})
    write_jsonl_atomic(run_dir.file(GATE_TURNS_FILE), [
        {"turn": turn, "flags": verdict.flags} for turn, verdict in verdicts.items()])
    return {}


def _turn_values(benchmark: Benchmark, key: str) -> dict[str, Any]:
    """``{query id: the turn's value under key}`` of a synthesis run's turns; {} for other benchmarks."""
    dialogues = run_dialogues_file(benchmark.directory)
    if dialogues is None:
        return {}
    return {turn_query_id(dialogue["conversation_id"], turn["index"]): turn[key]
            for dialogue in load_jsonl(dialogues) for turn in dialogue["turns"] if turn.get(key)}


def labels(state: AuditState, runtime: Runtime[AuditContext]) -> dict[str, Any]:
    """Every judge's verdict on each labelled turn (evals/label_checks.py: which labels are
    checked, and how the verdicts decide) into ``label_checks.json``, with the turns left
    unchecked counted; a resumed run keeps the file. The judges see the turn with its history."""
    run_dir = job.run_dir(runtime, state["run_id"])
    path = run_dir.file(LABEL_CHECKS_FILE)
    if path.exists():
        return {}
    context = job.context(runtime)
    benchmark = _benchmark(runtime, state["benchmark"])
    labelled, unlabelled, not_checked = labelled_turns(benchmark)
    if context.sample is not None and context.sample < len(labelled):
        labelled = sorted(random.Random(f"{context.seed}:labels").sample(labelled, context.sample),
                          key=lambda item: item[0].id)
    candidates, gold_order = turn_candidates(benchmark), turn_golds(benchmark)
    # The pool: what answers an unanswerable turn, or a partial turn's missing part; what an
    # underspecified turn without candidates may mean.
    pooled = [query for query, label in labelled if label in ("unanswerable", "partial")
              or label == "underspecified" and not candidates.get(query.id)]
    pools = {query_id: pooled_chunks(rankings) for query_id, rankings in _rankings(
        runtime, state["run_id"], benchmark, pooled, context.label_pool_depth, "label pool").items()} if pooled else {}
    documents = corpus_documents(benchmark)
    statistics = functools.partial(corpus_statistics, benchmark)  # built on the offline judge's first need

    def check(query: BenchmarkQuery, label: str) -> dict[str, Any]:
        golds = [chunk for chunk in asked_golds(benchmark, query.id, gold_order.get(query.id, ()))
                 if chunk in documents]
        pool = [chunk for chunk in pools.get(query.id, []) if chunk in documents]
        if label == "partial":  # the gold for the alignment, the pool for the missing part
            against, chunks = "gold", golds
        else:
            against = "pool" if query.id in pools else "candidates" if label == "underspecified" else "gold"
            chunks = pool if query.id in pools else \
                [chunk for chunk in candidates.get(query.id, []) if chunk in documents] or golds
        verdicts = {judge_spec: _label_verdict(_seam(runtime, state["run_id"], judge_spec), label, query, chunks,
                                               documents, statistics, pool)
                    for judge_spec in state["judges"]}
        return {"turn": query.id, "label": label, "question": build_query(query, HistoryMode("full")),
                "against": against, "chunks_shown": chunks, **({"pool_shown": pool} if label == "partial" else {}),
                "verdicts": verdicts}

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
    labelled, unlabelled, not_checked = [], 0, {}
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


def turn_candidates(benchmark: Benchmark) -> dict[str, list[str]]:
    """``{query id: candidate chunk ids}`` of the underspecified turns of a synthesis run (its
    ``dialogues.jsonl`` beside the BEIR export); other benchmarks name no candidates."""
    return _turn_lists(benchmark, "candidate_ids")


def turn_golds(benchmark: Benchmark) -> dict[str, list[str]]:
    """``{query id: gold chunk ids}`` of a synthesis run's turns in the order the questioner read
    them (the chunk the question was asked from first); other benchmarks give no order."""
    return _turn_lists(benchmark, "gold_ids")


def _turn_lists(benchmark: Benchmark, key: str) -> dict[str, list[str]]:
    """``{query id: the turn's list under key}``, for the turns where it is not empty, of the
    synthesis run's ``dialogues.jsonl`` beside the BEIR export; {} for other benchmarks."""
    dialogues = run_dialogues_file(benchmark.directory)
    if dialogues is None:
        return {}
    return {turn_query_id(dialogue["conversation_id"], turn["index"]): list(turn[key])
            for dialogue in load_jsonl(dialogues) for turn in dialogue["turns"] if turn.get(key)}


def pooled_chunks(rankings: list[list[str]]) -> list[str]:
    """The retrievers' rankings taken in turn, each chunk once."""
    pooled: dict[str, None] = {}
    for rank in range(max((len(ranking) for ranking in rankings), default=0)):
        for ranking in rankings:
            if rank < len(ranking):
                pooled.setdefault(ranking[rank])
    return list(pooled)




def _label_verdict(seam: ModelSeam, label: str, query: BenchmarkQuery, chunks: list[str],
                   documents: dict[str, tuple[str, str]], statistics: Callable[[], WordStatistics],
                   pool: list[str]) -> dict[str, Any]:
    """One judge's verdict on one labelled turn (agents/label_judges.py)."""
    texts = [documents[chunk] for chunk in chunks]
    words = statistics() if seam.is_baseline and label != "multi-passage" else None  # the offline pool judge's
    if label in ("unanswerable", "underspecified"):
        verdict_of = label_judges.unanswerable_verdict if label == "unanswerable" else label_judges.underspecified_verdict
        return verdict_of(seam, history=query.history, question=query.question, chunks=chunks, texts=texts,
                          statistics=words)
    if label == "multi-passage":
        return label_judges.multi_passage_verdict(seam, question=query.question, answer=query.response, golds=chunks,
                                                  texts=texts)
    return label_judges.partial_verdict(seam, history=query.history, question=query.question, answer=query.response,
                                        gold_text="\n\n".join(document_text(*text) for text in texts),
                                        chunks=pool, texts=[documents[chunk] for chunk in pool], statistics=words)


def label_results(run_dir: RunDirectory, context: AuditContext) -> dict[str, Any] | None:
    """``audit.json``'s ``labels`` (evals/label_checks.py), None when no turn carries a label."""
    recorded = json.loads(run_dir.file(LABEL_CHECKS_FILE).read_text(encoding="utf-8"))
    checks = [label_checks.decide(check, context.min_votes) for check in recorded["checks"]]
    if not checks and not recorded["not_checked"]:
        return None
    return label_checks.label_summary(checks, recorded["unlabelled"], recorded["not_checked"], context.label_agreement)


def report(state: AuditState, runtime: Runtime[AuditContext]) -> AuditOutput:
    """Aggregate the verdicts (evals/audit_verdicts.py); write the report and the confirmed
    missing gold documents."""
    context = job.context(runtime)
    benchmark = _benchmark(runtime, state["benchmark"])
    run_dir = job.run_dir(runtime, state["run_id"])
    instances = _instances(runtime, state["run_id"])
    if context.database_url():  # the other workers' verdicts are in the database
        write_jsonl_atomic(run_dir.file(JUDGMENTS_FILE), _items(runtime, state["run_id"]).results())
    judgments = {record["instance"]: record["verdicts"]
                 for record in canonicalize(run_dir.file(JUDGMENTS_FILE), key="instance")
                 if record["instance"] in instances}
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
        judgments, instances, lambda instance, candidate: {"query": query_text(instance),
                                                           "candidate_excerpt": excerpt(candidate)},
        context.min_votes)
    discriminability = audit_verdicts.discriminability(judgments, instances, population if sampled else None, missing)
    worst = audit_verdicts.worst_instances(judgments, lambda instance: {
        "query": query_text(instance), "gold_id": instances[instance]["gold_id"],
        "gold_excerpt": excerpt(instances[instance]["gold_id"])})
    # Ill-formed questions are noise whatever the judges said; the corpus is scanned only for quoted spans.
    counter = _LazyCounter(lambda: DocumentCounter(document_text(*documents[doc_id]) for doc_id in documents))
    follow_ups = {instance for instance in judgments if queries[instance].history}
    flagged = ill_formed_questions({instance: queries[instance].question for instance in judgments}, counter,
                                   context.many_documents, follow_ups)
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
        "benchmark": {"name": benchmark.name, "path": str(benchmark.directory), "queries": len(benchmark.queries),
                      "instances": len(instances), "sampled": sampled, "seed": context.seed,
                      "documents": len(documents), "conversational": benchmark.conversational,
                      "has_answers": benchmark.has_answers},
        "settings": {"judges": judges, "negatives": context.negatives, "position_check": context.position_check,
                     "sample": context.sample, "min_votes": context.min_votes, "many_documents": context.many_documents,
                     "label_pool_depth": context.label_pool_depth, "label_agreement": context.label_agreement},
        "dimensions": dimensions,
        "discriminability": discriminability,
        "agreement": audit_verdicts.agreement(judgments, instances, judges) if len(judges) > 1 else None,
        "worst": worst,
        "missing_gold": missing,
        "ill_formed": ill_formed,
        "shortcuts": shortcut_summary,
        "labels": turn_labels,
        "quality_gate": gate_summary_,
        "verdict": audit_verdicts.overall_verdict(judgments, discriminability,
                                                  noise_flags=sum(not item["low_alignment"] for item in ill_formed),
                                                  shortcut_flags=shortcut_summary["flags"],
                                                  label_note=label_checks.label_note(turn_labels),
                                                  gate_note=gate_note(gate_summary_),
                                                  gate_over_limit=gate_summary_["over_limit"]),
        "sampling": (f"Audited a random sample of {len(instances):,} of {population:,} instances (seed {context.seed}); "
                     "intervals include the finite-population correction." if sampled else
                     f"Audited all {len(instances):,} instances; intervals treat them as a sample of the process that "
                     "made the benchmark."),
        "notes": [
            "Each instance is one judged query (for conversations, the current turn with its history); its gold "
            "document is its most relevant judged one.",
            f"Pools hold the gold document and {context.negatives} hard negatives, the best-ranked unjudged documents "
            "of BM25 and the dense retriever taken in turn; the gold's slot is balanced across instances.",
            EMBEDDED_TEXT_NOTE,
            f"Noise: an instance whose judge-averaged alignment is at most {NOISE_SCORE}, or whose question is "
            "ill-formed (a fragment, a keyword template, a heading path, markup or its leftovers, quoting markup "
            f"or a span found in at least {context.many_documents} documents). Suspected sparsity: a judge "
            f"picked a non-gold document. Vote rule: {audit_verdicts.vote_rule(context.min_votes)}; only confirmed "
            "documents go to extra_qrels.tsv.",
            f"Shortcuts ({SHORTCUTS_FILE}) are measured without a model over every turn with a relevant document "
            f"({shortcut_summary['turns']:,}), not only the audited sample; query-only BM25 is measured as "
            "`benchsmith evaluate --retriever bm25 --history current` measures it.",
            *([f"Turn labels are checked on every labelled turn ({LABEL_CHECKS_FILE}): an unanswerable turn against "
               f"each retriever's top {context.label_pool_depth} chunks, rejected by the missing-gold vote rule when "
               "the judges find one that answers; the other labels by the judges' majority."] if turn_labels else []),
        ],
    }
    extra = [(item["instance"], item["candidate_id"], 1) for item in missing if item["confirmed"]]
    write_beir_qrels(run_dir.file(EXTRA_QRELS_FILE), extra)  # for `benchsmith evaluate --extra-qrels`
    paths = write_files_atomic(run_dir.path, audit_report_files(results))
    means = {name: values["mean"] for name, values in dimensions.items()}
    means["gold_pick_rate"] = discriminability["gold_pick_rate"]
    return {"instances": len(instances), "report": {kind: str(path) for kind, path in paths.items()},
            "verdict": results["verdict"], "means": means, "confirmed_missing_gold": len(extra),
            "suspected_missing_gold": len(missing) - len(extra), "ill_formed_questions": len(ill_formed),
            "shortcut_flags": shortcut_summary["flags"],
            "lexical_overlap": {key: shortcut_summary["lexical_overlap"][key] for key in ("mean", "median", "p90")},
            "label_agreement": {label: counts["agreement"]
                                for label, counts in (turn_labels or {}).get("by_label", {}).items()},
            "quality_gate": {"turns": gate_summary_["turns"], "flagged": gate_summary_["flagged"],
                             "by_class": {klass: values["turns"] for klass, values in gate_summary_["classes"].items()}}}


class _LazyCounter:
    """Builds the document counter on the first quoted span: most audits have none."""

    def __init__(self, build: Callable[[], DocumentCounter]):
        self._build, self._counter = build, None

    def __call__(self, span: str) -> int:
        if self._counter is None:
            self._counter = self._build()
        return self._counter(span)


builder = StateGraph(AuditState, context_schema=AuditContext, input_schema=AuditInput, output_schema=AuditOutput)
builder.add_node("plan", plan)
builder.add_node("judge", judge)
builder.add_node("gather", gather)
builder.add_node("wait", wait_for_workers)
builder.add_node("shortcuts", shortcuts)
builder.add_node("gate", gate)
builder.add_node("labels", labels)
builder.add_node("report", report)
builder.add_edge(START, "plan")
builder.add_conditional_edges("plan", dispatch, ["judge", "wait", "shortcuts"])
builder.add_edge("judge", "gather")
builder.add_conditional_edges("gather", dispatch, ["judge", "wait", "shortcuts"])
builder.add_conditional_edges("wait", dispatch, ["judge", "wait", "shortcuts"])
builder.add_edge("shortcuts", "gate")
builder.add_edge("gate", "labels")
builder.add_edge("labels", "report")
builder.add_edge("report", END)

graph = builder.compile(name="audit")  # the Studio copy: no checkpointer (the server brings its own)

