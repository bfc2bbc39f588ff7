"""Configuration search without ground truth (SEARA, rednote 2025): which chunking, retriever,
rewriter, reranker, filter and top K to ship, judged on real user queries.

    plan ─→ prepare ─→ dispatch ─→ Send × configurations without a run file ─→ retrieve ─┐
              ↑            └──────────────── (all written) ─────────────────→ pool ←────┘
              │                                                                  │
              │          pool ─→ dispatch ─→ Send × batches of unjudged pairs ─→ judge ─┐
              │                     └───────────── (all judged) ──────────→ facts ←─────┘
              │                                                               │
              └── (staged: the next dimension's stage) ←── choose ←───────────┘
                                                              └── (done) ─→ report ─→ END

1. Every configuration retrieves its top K per query (``run-files/<configuration>.trec``,
   written once: a resumed search reuses them). Each chunking has its own collection;
   embeddings are shared by the configurations with the same chunking and embedder. The user's
   own retrievers are fixed configurations beside them, asked per query (graphs/select/outside.py).
2. The pool is the union of every configuration's top K per query (``pool.jsonl``).
3. Each (query, chunk text) pair of the pool is judged once, in batches per query, by the
   judge ensemble with the audit's vote rule; verdicts are appended to ``judgments.jsonl`` as
   they come (resume) and kept in the workspace for later runs (graphs/select/judging.py).
4. The judges quote each relevant chunk's minimal facts; ``facts`` clusters them per query
   across chunks and chunkings (``facts.jsonl``), so a fact counts once however it was found.
5. ``choose``: a staged search keeps the best level of the stage's dimension and plans the
   next stage (``stages.jsonl``); a grid search has one stage.
6. ``report``: per configuration, precision and recall over facts at k = 1..K (micro, per-query
   mean beside), PR-AUC, F-beta, bootstrap intervals; the ranking, the best configuration for
   precision-first and recall-first use, the main effects (evals/measures/selection_measures.py);
   ``selection.json``, ``report.md``, ``report.html`` and ``best-configuration.yaml``. A winner
   is named only when its PR-AUC interval does not overlap the runner-up's; otherwise ``best``
   is null, ``tied`` lists the configurations tied with the top one, the report estimates how
   many queries would separate the top two, and no ``best-configuration.yaml`` is written.

The vote rule is the audit's (``--min-votes``, default 2, and a majority), never lowered: a rule
the judges cannot meet (one judge, by default) is refused before the run starts.

State holds configuration names and counters; queries, chunks, runs and verdicts live in files.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from pathlib import Path
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from benchsmith.agents.text import PassageStatistics
from benchsmith.graphs.contexts.select import SelectContext
from benchsmith.graphs.runtime.fanout import add_worker
from benchsmith.graphs.runtime.progress import progress_reporter, report_advance
from benchsmith.graphs.runtime.ray_items import run_item
from benchsmith.graphs.runtime.resources import embedder_for
from benchsmith.graphs.select.inputs import (
    configuration_of,
    configured_query_texts,
    dense_components,
    file_records,
    job,
    judge_seams,
    judge_seams_of,
    min_votes_of,
    plan_configurations,
    queries_of,
    run_file_of,
)
from benchsmith.graphs.select.judging import (
    VERDICT_STORE,
    judge_batch,
    pair_id,
    query_facts,
    run_identity,
)
from benchsmith.graphs.select.outside import outside_pool_records, retrieve_outside, select_passages
from benchsmith.graphs.select.report import _pr_auc, report
from benchsmith.graphs.select.retrieval import RetrievalSettings, chunk_index, configuration_run, corpus_of
from benchsmith.graphs.select.state import (
    FACTS_FILE,
    JUDGING_STAGE,
    JUDGMENTS_FILE,
    POOL_FILE,
    RETRIEVAL_STAGE,
    STAGES_FILE,
    JudgeTask,
    RetrieveTask,
    SelectInput,
    SelectOutput,
    SelectState,
)
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.benchmark_files import canonicalize
from benchsmith.stores.formats.trec import read_trec_run, write_trec_run
from benchsmith.stores.persistence.jsonl import RecordLog, load_jsonl, record_log, write_jsonl_atomic
from benchsmith.stores.persistence.llm_cache import LLMCache
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.strategy_space import (
    OutsideConfiguration,
    SelectConfiguration,
    baseline_settings,
    grid_settings,
    outside_configurations,
    space_from_mapping,
    stage_settings,
)


def plan(state: SelectState, runtime: Runtime[SelectContext]) -> dict[str, Any]:
    """Check the inputs and plan the first stage's configurations."""
    space = space_from_mapping(state["space"], "the strategy space")
    queries_of(state["queries"])
    corpus_of(state["corpus"])
    judge_seams(runtime, state["run_id"], state["judges"])
    if space["search"] == "grid":
        settings = grid_settings(space)
    else:
        settings = stage_settings(space, 0, {}) if space["order"] else [baseline_settings(space)]
    # The user's own retrievers are fixed configurations: planned once, with the first stage.
    planned = plan_configurations(runtime, state["run_id"], settings, 0, outside_configurations(space))
    return {"stage": 0, "configurations": planned}


def _pending(runtime: Runtime[SelectContext], state: SelectState) -> list[str]:
    return [
        name
        for name in state["configurations"]
        if not run_file_of(runtime, state["run_id"], configuration_of(runtime, state["run_id"], name)).exists()
    ]


def prepare(state: SelectState, runtime: Runtime[SelectContext]) -> dict[str, Any]:
    """Chunk, embed and rewrite what the pending configurations need, once, before they fan out."""
    context = job.context(runtime)
    corpus = corpus_of(state["corpus"])
    for name in _pending(runtime, state):
        configuration = configuration_of(runtime, state["run_id"], name)
        if isinstance(configuration, OutsideConfiguration):
            continue  # its own index: nothing of select's to build
        index = chunk_index(corpus, configuration.chunking)
        for component in dense_components(configuration.retriever):
            embedder = embedder_for(
                component.model or context.embedder, job.workspace(runtime), state["run_id"], context
            )
            index.dense(job.workspace(runtime), context.chroma_host, embedder, configuration.filter)
        configured_query_texts(runtime, state["run_id"], state["queries"], configuration)
    return {}


def dispatch_retrieval(state: SelectState, runtime: Runtime[SelectContext]) -> list[Send] | Literal["pool"]:
    """One retrieval task per configuration without a run file."""
    pending = _pending(runtime, state)
    progress_reporter(RETRIEVAL_STAGE)(len(state["configurations"]) - len(pending), len(state["configurations"]))
    chunkings = space_from_mapping(state["space"], "the strategy space")["chunking"]
    sends = [
        Send(
            "retrieve",
            {
                "run_id": state["run_id"],
                "queries": state["queries"],
                "corpus": state["corpus"],
                "configuration": name,
                "chunkings": chunkings,
            },
        )
        for name in pending
    ]
    return sends or "pool"


def retrieve(task: RetrieveTask, runtime: Runtime[SelectContext]) -> dict[str, Any]:
    """One configuration's top K per query, written as a TREC run file."""
    context = job.context(runtime)
    configuration = configuration_of(runtime, task["run_id"], task["configuration"])
    path = run_file_of(runtime, task["run_id"], configuration)
    if path.exists():  # finished before a crash: reused, never recomputed
        report_advance(RETRIEVAL_STAGE)
        return {"retrieved": 1}
    if isinstance(configuration, OutsideConfiguration):
        passages = select_passages(corpus_of(task["corpus"]), task.get("chunkings", []))
        retrieve_outside(runtime, task["run_id"], task["queries"], passages, configuration)
        report_advance(RETRIEVAL_STAGE)
        return {"retrieved": 1}
    index = chunk_index(corpus_of(task["corpus"]), configuration.chunking)
    texts = configured_query_texts(runtime, task["run_id"], task["queries"], configuration)
    settings = RetrievalSettings(job.workspace(runtime), context.chroma_host, context.embedder, context.rerank_depth)
    write_trec_run(path, configuration_run(configuration, index, texts, settings), tag=configuration.name)
    report_advance(RETRIEVAL_STAGE)
    return {"retrieved": 1}


def pool(state: SelectState, runtime: Runtime[SelectContext]) -> dict[str, Any]:
    """The union of every configuration's top K per query: one record per (query, chunk text)."""
    corpus = corpus_of(state["corpus"])
    order = {query.id: position for position, query in enumerate(queries_of(state["queries"]))}
    pairs: dict[str, dict[str, Any]] = {}
    for name in state["configurations"]:
        configuration = configuration_of(runtime, state["run_id"], name)
        if isinstance(configuration, OutsideConfiguration):
            for record in outside_pool_records(runtime, state["run_id"], configuration):
                pairs.setdefault(record["pair"], record)
            continue
        index = chunk_index(corpus, configuration.chunking)
        for query_id, ranked in read_trec_run(run_file_of(runtime, state["run_id"], configuration)).items():
            for chunk_id in ranked:
                chunk = index.by_id.get(chunk_id)
                if chunk is None:
                    raise InputError(
                        f"{run_file_of(runtime, state['run_id'], configuration)} names chunk {chunk_id!r}, "
                        "which the corpus no longer has: it changed since the run started; start a new "
                        "--run-id"
                    )
                pairs.setdefault(
                    pair_id(query_id, chunk.key),
                    {
                        "pair": pair_id(query_id, chunk.key),
                        "query_id": query_id,
                        "key": chunk.key,
                        "chunk_id": chunk.id,
                        "doc_id": chunk.doc_id,
                        "chunking": configuration.chunking.label,
                        "title": chunk.title,
                        "text": chunk.text,
                    },
                )
    records = sorted(pairs.values(), key=lambda record: (order.get(record["query_id"], len(order)), record["key"]))
    write_jsonl_atomic(job.run_dir(runtime, state["run_id"]).file(POOL_FILE), records)
    return {"pool_pairs": len(records)}


@functools.lru_cache(maxsize=2)
def _pool_statistics_of(path: Path, modified: float) -> PassageStatistics:
    return PassageStatistics(f"{record.get('title') or ''} {record['text']}" for record in load_jsonl(path))


def _pool_statistics(path: Path) -> PassageStatistics:
    """How rare each word is over the run's pooled texts (titles included), built once per pool:
    the offline judge weighs query terms by it (agents/pool_judge.py)."""
    return _pool_statistics_of(path, path.stat().st_mtime)


def _judgment_log(runtime: Runtime[SelectContext], run_id: str) -> RecordLog:
    return record_log(job.run_dir(runtime, run_id).file(JUDGMENTS_FILE), "pair")


def dispatch_judging(state: SelectState, runtime: Runtime[SelectContext]) -> list[Send] | Literal["facts"]:
    """The batches with an unjudged pair. Batches are cut from each query's whole pool, the same
    whatever was judged before a kill: a judge (the offline one weighs a passage against its batch)
    sees the batches an uninterrupted run shows it."""
    judged = _judgment_log(runtime, state["run_id"]).ids()
    pooled = file_records(job.run_dir(runtime, state["run_id"]).file(POOL_FILE), "pair")
    progress_reporter(JUDGING_STAGE)(len(judged & pooled.keys()), len(pooled))
    by_query: dict[str, list[str]] = defaultdict(list)
    for pair, record in pooled.items():
        by_query[record["query_id"]].append(pair)
    size = max(1, job.context(runtime).batch_size)
    batches = [pairs[start : start + size] for pairs in by_query.values() for start in range(0, len(pairs), size)]
    sends = [
        Send(
            "judge", {"run_id": state["run_id"], "queries": state["queries"], "judges": state["judges"], "pairs": batch}
        )
        for batch in batches
        if not judged.issuperset(batch)
    ]
    return sends or "facts"


def judge(task: JudgeTask, runtime: Runtime[SelectContext]) -> dict[str, Any]:
    """The ensemble's verdicts on one batch, each pair appended to judgments.jsonl once."""
    context = job.context(runtime)
    run_id = task["run_id"]
    pool_file = job.run_dir(runtime, run_id).file(POOL_FILE)
    pooled = file_records(pool_file, "pair")
    records = [pooled[pair] for pair in task["pairs"]]
    query = {query.id: query for query in queries_of(task["queries"])}[records[0]["query_id"]]
    log = _judgment_log(runtime, run_id)
    with job.slot(runtime, run_id):
        judged = run_item(  # here, or as a Ray task with --ray (graphs/runtime/ray_items.py)
            judged_pairs,
            {
                "run_id": run_id,
                "records": records,
                "query": query,
                "judges": task["judges"],
                "pool_file": str(pool_file),
                "run": _run_identity(runtime, run_id),
            },
            context,
            workspace=job.workspace(runtime),
            run_id=run_id,
        )
        # Durable before the slot frees: a kill after the next call starts never loses this batch; the
        # calls and verdicts it paid for are durable before it is logged (a rerun finds them)
        job.run_dir(runtime, run_id).usage.sync()
        logged = sum(log.append_once(record) for record in judged)
    for _ in range(logged):
        report_advance(JUDGING_STAGE)
    return {"judged": logged}


def judged_pairs(task: dict[str, Any], context: SelectContext) -> list[dict[str, Any]]:
    """One batch's verdicts (graphs/select/judging.py), here or on a Ray node: the task carries the
    pairs' texts and the query; the verdict store and the pool's word statistics are the workspace's."""
    workspace = Workspace.resolve(context.workspace)
    store = LLMCache(workspace.root / VERDICT_STORE)
    try:
        return judge_batch(
            task["records"],
            task["query"],
            judge_seams_of(workspace, context, task["run_id"], task["judges"]),
            store,
            min_votes_of(context, task["judges"]),
            statistics=_pool_statistics(Path(task["pool_file"])),
            run=task["run"],
        )
    finally:
        store.close()


def _run_identity(runtime: Runtime[SelectContext], run_id: str) -> str:
    run_dir = job.run_dir(runtime, run_id)
    return run_identity(run_id, run_dir.load().created if run_dir.exists() else None)


def facts(state: SelectState, runtime: Runtime[SelectContext]) -> dict[str, Any]:
    """Each query's minimal facts, matched across chunks and chunkings (facts.jsonl)."""
    context = job.context(runtime)
    run_dir = job.run_dir(runtime, state["run_id"])
    pooled = file_records(run_dir.file(POOL_FILE), "pair")
    # in pair order, whatever order the batches finished in (a resumed run's appends follow the kill)
    judged = [record for record in canonicalize(run_dir.file(JUDGMENTS_FILE), key="pair") if record["pair"] in pooled]
    by_query: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in judged:
        by_query[record["query_id"]].append(record)
    seams = judge_seams(runtime, state["run_id"], state["judges"])
    votes = min_votes_of(context, state["judges"])
    report = progress_reporter("facts")
    queries = queries_of(state["queries"])
    records = []
    for done, query in enumerate(queries, start=1):
        records.append(query_facts(query, by_query.get(query.id, []), seams, votes))
        report(done, len(queries))
    run_dir.usage.sync()
    write_jsonl_atomic(run_dir.file(FACTS_FILE), records)
    return {}


def choose(state: SelectState, runtime: Runtime[SelectContext]) -> dict[str, Any]:
    """A staged search keeps the stage dimension's best level (by PR-AUC) and plans the next stage."""
    space = space_from_mapping(state["space"], "the strategy space")
    if space["search"] != "staged" or not space["order"]:
        return {"searching": False}
    stage = state["stage"]
    log = record_log(job.run_dir(runtime, state["run_id"]).file(STAGES_FILE), "stage")
    decisions = file_records(log.path, "stage")
    chosen = {decisions[str(s)]["dimension"]: decisions[str(s)]["chosen"] for s in range(stage) if str(s) in decisions}
    candidates = stage_settings(space, stage, chosen)
    names = [SelectConfiguration.from_settings(setting).name for setting in candidates]
    auc = _pr_auc(runtime, state, names)
    dimension = space["order"][stage]
    best = max(range(len(candidates)), key=lambda index: (auc[names[index]], -index))  # ties: the earlier level
    log.append_once(
        {
            "stage": str(stage),
            "dimension": dimension,
            "chosen": candidates[best][dimension],
            "pr_auc": {str(setting[dimension]): auc[name] for setting, name in zip(candidates, names)},
        }
    )
    if stage + 1 >= len(space["order"]):
        return {"searching": False}
    chosen[dimension] = candidates[best][dimension]
    following = plan_configurations(runtime, state["run_id"], stage_settings(space, stage + 1, chosen), stage + 1)
    return {
        "stage": stage + 1,
        "searching": True,
        "configurations": list(dict.fromkeys([*state["configurations"], *following])),
    }


def after_choose(state: SelectState) -> Literal["prepare", "report"]:
    return "prepare" if state.get("searching") else "report"


builder = StateGraph(SelectState, context_schema=SelectContext, input_schema=SelectInput, output_schema=SelectOutput)
builder.add_node(plan)
builder.add_node(prepare)
add_worker(builder, retrieve)
builder.add_node(pool)
add_worker(builder, judge)
builder.add_node(facts)
builder.add_node(choose)
builder.add_node(report)
builder.add_edge(START, "plan")
builder.add_edge("plan", "prepare")
builder.add_conditional_edges("prepare", dispatch_retrieval, ["retrieve", "pool"])
builder.add_edge("retrieve", "pool")
builder.add_conditional_edges("pool", dispatch_judging, ["judge", "facts"])
builder.add_edge("judge", "facts")
builder.add_edge("facts", "choose")
builder.add_conditional_edges("choose", after_choose, ["prepare", "report"])
builder.add_edge("report", END)

graph = builder.compile(name="select")  # the Studio copy: no checkpointer (the server brings its own)
