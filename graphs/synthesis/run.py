"""The synthesis run: plan (a cluster per conversation), fan out the conversations, export the
benchmark (BEIR and TREC files, statistics). The diagram is in graphs/synthesis/__init__.py."""

from __future__ import annotations

import functools
import random
from pathlib import Path
from typing import Any, Literal

from langgraph.graph import END, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from benchsmith.evals.measures.benchmark_stats import benchmark_statistics
from benchsmith.evals.measures.repeated_turns import asked_turns, end_at_repeats, repeated_turns
from benchsmith.evals.measures.turn_labels import label_counts
from benchsmith.evals.quality_gate.counts import gate_counts
from benchsmith.graphs.contexts.synthesize import SynthesisContext
from benchsmith.graphs.runtime.fanout import add_fan_out, dispatch_items
from benchsmith.graphs.runtime.progress import report_advance
from benchsmith.graphs.runtime.ray_blocks import block_map
from benchsmith.graphs.runtime.resources import run_items
from benchsmith.graphs.synthesis.conversation import conversation_in_run
from benchsmith.graphs.synthesis.frames import as_asked, offline_rewording, question_spread, spread_questions
from benchsmith.graphs.synthesis.lookups import corpus_stats, passage_records, vector_store
from benchsmith.graphs.synthesis.state import (
    BEIR_DIR,
    PLAN_FILE,
    STATS_FILE,
    TREC_QRELS_FILE,
    ConversationInput,
    SynthesisInput,
    SynthesisOutput,
    SynthesisState,
    job,
)
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.benchmark_files import (
    DIALOGUES_FILE,
    HELD_OUT_FILE,
    benchmark_records,
    canonical_records,
    held_out_ids,
    write_beir,
    write_held_out,
)
from benchsmith.stores.formats.trec import write_trec_qrels
from benchsmith.stores.formats.turn_labels import TURN_LABELS_FILE, write_turn_labels
from benchsmith.stores.persistence.files import write_json_atomic
from benchsmith.stores.persistence.jsonl import load_jsonl, write_jsonl_atomic
from benchsmith.stores.persistence.run_items import RunItems
from benchsmith.tools.corpus.corpus_clusters import cluster_collection
from benchsmith.tools.corpus.corpus_statistics import corpus_statistics
from benchsmith.tools.corpus.dedup import DuplicateMatch
from benchsmith.tools.corpus.held_out import without_held_out


def _items(runtime: Runtime[SynthesisContext], run_id: str) -> RunItems:
    """The run's conversations as items: done once in the dialogues log."""
    return run_items(job.workspace(runtime), run_id, DIALOGUES_FILE, "conversation_id")


def plan(state: SynthesisState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Cluster the collection if needed and give each conversation its own cluster (plan.jsonl)."""
    context = job.context(runtime)
    items = _items(runtime, state["run_id"])
    plan_file = job.run_dir(runtime, state["run_id"]).file(PLAN_FILE)
    if plan_file.exists():  # a resumed run keeps its plan
        planned = load_jsonl(plan_file)
    else:
        store = vector_store(runtime, state["collection"])
        clustering = cluster_collection(
            job.workspace(runtime),
            store,
            context.cluster_size,
            context.neighbours,
            context.seed,
            context.page_kinds,
            map_blocks=block_map(context.ray),  # the graph's blocks on the cluster with --ray; the walk here
        )
        corpus_statistics(job.workspace(runtime), store)  # once per collection; the conversations read them
        available = len(clustering.clusters)
        if state["conversations"] > available:
            raise InputError(
                f"collection {state['collection']!r} has {available} clusters of {context.cluster_size} "
                f"chunks: ask for at most {available} conversations, or use a smaller --cluster-size"
            )
        chosen = random.Random(f"{context.seed}:plan").sample(range(available), state["conversations"])
        planned = [
            {"conversation_id": f"c{number:04d}", "cluster_id": cluster} for number, cluster in enumerate(chosen)
        ]
        write_jsonl_atomic(plan_file, planned)
    items.add([(item["conversation_id"], item) for item in planned])
    return {"planned": len(planned)}


@functools.lru_cache(maxsize=4)
def _plan_in(path: Path, modified: float) -> dict[str, tuple[int, int]]:
    """{conversation: (its cluster, its number in id order)}: the number names its share of the chunks."""
    clusters = {item["conversation_id"]: item["cluster_id"] for item in load_jsonl(path)}
    return {conversation: (clusters[conversation], number) for number, conversation in enumerate(sorted(clusters))}


def dispatch(state: SynthesisState, runtime: Runtime[SynthesisContext]) -> list[Send] | Literal["export"]:
    """The next batch of planned conversations not finished (graphs/runtime/fanout.py); export
    when all are finished."""
    return dispatch_items(  # type: ignore[return-value]
        _items(runtime, state["run_id"]),
        "conversations",
        job.context(runtime).concurrency,
        lambda item_id: Send(
            "converse",
            {
                "run_id": state["run_id"],
                "collection": state["collection"],
                "conversation_id": item_id,
                "turns_wanted": state["turns"],
            },
        ),
        "export",
    )


def converse(task: ConversationInput, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """One conversation, recorded once. A semaphore holds the number in flight to
    ``concurrency`` exactly (LangGraph's worker pool alone lets one more through)."""
    items = _items(runtime, task["run_id"])
    planned = _planned_conversations(runtime, task["run_id"])
    cluster_id, number = planned[task["conversation_id"]]
    share = [number, len(planned)]  # the conversation's share of the chunks its re-planned turns land on (share_plan)
    result = job.run_new_item(
        runtime,
        task["run_id"],
        items,
        task["conversation_id"],
        make_conversation,
        {**task, "cluster_id": cluster_id, "share": share},
    )
    if result is None:
        return {"finished": 0}  # its result was on file already
    dialogue = {
        "conversation_id": task["conversation_id"],
        "cluster_id": cluster_id,
        "seed": job.context(runtime).seed,
        "turns": result["turns"],
        **({"dropped_turns": result["dropped_turns"]} if result.get("dropped_turns") else {}),
    }
    job.run_dir(runtime, task["run_id"]).usage.sync()  # the calls it paid for are durable before the conversation
    items.complete(task["conversation_id"], dialogue)
    report_advance("conversations")
    return {"finished": 1}


def make_conversation(task: dict[str, Any], context: SynthesisContext) -> dict[str, Any]:
    """One conversation of a run: the work of one item, in this process or on a Ray node."""
    return conversation_in_run.invoke(task, context=context)


def _planned_conversations(runtime: Runtime[SynthesisContext], run_id: str) -> dict[str, tuple[int, int]]:
    plan_file = job.run_dir(runtime, run_id).file(PLAN_FILE)
    return _plan_in(plan_file, plan_file.stat().st_mtime)


def export(state: SynthesisState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Stable dialogues file, BEIR and TREC exports (the held-out chunks of unanswerable turns and
    their near-duplicates left out of the corpus, and listed in held_out.tsv; every turn's labels in
    turn_labels.tsv), statistics: the same bytes whether the conversations ran here or on Ray."""
    run_dir = job.run_dir(runtime, state["run_id"])
    asked = [as_asked(dialogue) for dialogue in canonical_records(run_dir.file(DIALOGUES_FILE))]
    dialogues, cut = end_at_repeats(asked)  # each question once: a conversation ends before a repeat
    # no frame above a fifth of the questions, no type above half: conversations ran apart, and may have chosen alike
    dialogues, spread = spread_questions(dialogues, offline_rewording(runtime, state["collection"]))
    write_jsonl_atomic(run_dir.file(DIALOGUES_FILE), dialogues)  # the stable final form, written once
    queries, qrels, labels = benchmark_records(dialogues, job.context(runtime).history_window)
    store = vector_store(runtime, state["collection"])
    held_out = {
        chunk_id: record["text"]
        for chunk_id, record in passage_records(runtime, state["collection"], sorted(held_out_ids(dialogues))).items()
    }
    removed: list[DuplicateMatch] = []
    corpus = without_held_out(
        (
            {"_id": chunk_id, "title": (metadata or {}).get("title", ""), "text": text}
            for page in store.iter_all()
            for chunk_id, text, metadata in zip(page["ids"], page["documents"], page["metadatas"])
        ),
        held_out,
        removed,
    )
    write_beir(run_dir.file(BEIR_DIR), corpus, queries, qrels)
    write_held_out(run_dir.file(BEIR_DIR) / HELD_OUT_FILE, ((m.removed_id, m.kept_id, m.jaccard) for m in removed))
    write_turn_labels(run_dir.file(BEIR_DIR) / TURN_LABELS_FILE, labels)
    write_trec_qrels(run_dir.file(TREC_QRELS_FILE), qrels)
    statistics = corpus_stats(runtime, state["collection"])
    stats = benchmark_statistics(
        dialogues,
        random_pairs=statistics.similarity,
        soft_switch_threshold=statistics.similarity_threshold(job.context(runtime).soft_switch_margin),
        max_overlap=job.context(runtime).max_overlap,
    )
    stats["labels"] = label_counts(dialogues)  # answerability, question type, standalone (issue 22)
    stats["question_spread"] = question_spread(dialogues, spread)
    stats["quality_gate"] = gate_counts(dialogues, job.context(runtime).quality_gate)  # per rubric class (issue 30)
    # what the conversations asked (a corpus with few askable chunks repeats them), and what was cut
    stats["repeated_turns"] = {
        **repeated_turns([{**dialogue, "turns": asked_turns(dialogue)} for dialogue in asked]),
        "cut": cut,
    }
    write_json_atomic(run_dir.file(STATS_FILE), stats)
    return {"conversations_written": len(dialogues), "turns_written": len(queries), "stats": stats}


builder = StateGraph(
    SynthesisState, context_schema=SynthesisContext, input_schema=SynthesisInput, output_schema=SynthesisOutput
)
add_fan_out(builder, plan=plan, dispatch=dispatch, work=converse, finish=export)
builder.add_edge("export", END)

graph = builder.compile(name="synthesize")  # the Studio copy: no checkpointer (the server brings its own)
