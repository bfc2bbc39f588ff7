"""Conversational benchmark synthesis (MTR-Pipeline).

    plan → Send × N ─→ converse (one conversation per cluster, at most `concurrency` at once) ─→ export
                         walker → questioner → responder → polisher → router ─┬→ walker
                                                                                └→ record

The walker picks each turn's gold chunk along the cluster's semantic path (soft switch),
stays on it (follow-up) or jumps to a distant cluster (hard switch); the questioner, a
simulated user, asks what the gold chunk answers; the responder, a simulated deployed
assistant, answers from the gold chunk only; the polisher makes the question sound
mid-conversation, and rewrites that change the meaning are rejected; the router draws the
next turn's switch. A finished conversation is appended to ``dialogues.jsonl`` once; the
export writes BEIR and TREC files and the statistics.

State holds ids, counters and the one dialogue in flight; chunk texts stay in Chroma.
"""

from __future__ import annotations

import functools
import json
import operator
import random
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from benchsmith.agents.models import ModelSeam
from benchsmith.agents.polisher import Polisher
from benchsmith.agents.questioner import Questioner
from benchsmith.agents.responder import Responder
from benchsmith.evals.benchmark_stats import benchmark_statistics
from benchsmith.graphs.resources import chroma_client, concurrency_slot, run_seam
from benchsmith.stores.benchmark_files import append_once, canonicalize, recorded_ids, serialize_history, write_beir
from benchsmith.stores.clusters import StoredClustering, clustering_path, load_clustering
from benchsmith.stores.errors import InputError
from benchsmith.stores.runs import RunDirectory
from benchsmith.stores.trec import write_trec_qrels
from benchsmith.stores.vectors import VectorStore
from benchsmith.stores.workspace import Workspace
from benchsmith.tools.corpus_clusters import DEFAULT_CLUSTER_SIZE, DEFAULT_NEIGHBOURS, cluster_collection
from benchsmith.tools.dialogue_walk import (DEFAULT_HARD_SWITCH_RATE, DEFAULT_SWITCH_PROBABILITY, Position, SwitchPolicy,
                                 draw_switch, next_position, turn_rng)
from benchsmith.tools.embedding import ChromaEmbeddingFunction
from benchsmith.tools.polish import review_polish

DIALOGUES_FILE = "dialogues.jsonl"
BEIR_DIR, TREC_QRELS_FILE, STATS_FILE = "beir", "qrels.trec", "stats.json"
MODEL_CALLS_PER_TURN = 3  # questioner, responder, polisher (no polisher on the first turn)


@dataclass
class SynthesisContext:
    """Settings of one synthesis run (not checkpointed: the CLI passes them again on resume)."""

    workspace: str | None = None
    llm: str = "baseline"
    seed: int = 0
    switch_probability: float = DEFAULT_SWITCH_PROBABILITY
    hard_switch_rate: float = DEFAULT_HARD_SWITCH_RATE
    cluster_size: int = DEFAULT_CLUSTER_SIZE
    neighbours: int = DEFAULT_NEIGHBOURS
    history_window: int | None = None  # turns of history in a BEIR query; None: all
    chroma_host: str | None = None
    requests_per_second: float | None = None
    concurrency: int = 4  # conversations in flight
    model: Any = None  # a ready ModelSeam (tests, embedding apps); overrides `llm`


class SynthesisInput(TypedDict):
    run_id: str
    collection: str
    conversations: int
    turns: int


class SynthesisOutput(TypedDict, total=False):
    run_id: str
    collection: str
    conversations_written: int
    turns_written: int
    stats: dict[str, Any]


class SynthesisState(SynthesisInput, SynthesisOutput, total=False):
    plan: list[dict[str, Any]]  # [{"conversation_id", "cluster_id"}]
    finished: Annotated[list[str], operator.add]


class ConversationInput(TypedDict):
    run_id: str
    collection: str
    conversation_id: str
    cluster_id: int
    turns_wanted: int


class ConversationOutput(TypedDict, total=False):
    finished: list[str]


class ConversationState(ConversationInput, ConversationOutput, total=False):
    position: dict[str, int]  # {"cluster", "offset"} of the current gold chunk
    switch: str  # how the turn being built relates to the previous one
    gold_id: str
    draft: dict[str, str]  # the questioner's question and rewrite for the turn in flight
    response: str
    turns: list[dict[str, Any]]


# ---------------------------------------------------------------------------------------
# Shared resources, opened once per process.

def _workspace(runtime: Runtime[SynthesisContext]) -> Workspace:
    return Workspace.resolve(runtime.context.workspace)


@functools.lru_cache(maxsize=8)
def _store(workspace_root: str, collection: str, chroma_host: str | None) -> VectorStore:
    client = chroma_client(Workspace.resolve(workspace_root), chroma_host)
    return VectorStore.open_existing(client, collection, lambda spec: ChromaEmbeddingFunction(spec=spec))


def _vector_store(runtime: Runtime[SynthesisContext], collection: str) -> VectorStore:
    return _store(str(_workspace(runtime).root), collection, runtime.context.chroma_host)


def _seam(runtime: Runtime[SynthesisContext], run_id: str) -> ModelSeam:
    if runtime.context.model is not None:
        return runtime.context.model
    context = runtime.context
    return run_seam(_workspace(runtime), run_id, context.llm, context.seed, context.requests_per_second)


@functools.lru_cache(maxsize=8)
def _load_clustering(workspace_root: str, collection: str, size: int, neighbours: int, seed: int,
                     modified: float) -> StoredClustering | None:
    """Parsed once per file version (``modified``), not at every turn."""
    return load_clustering(Workspace.resolve(workspace_root), collection, size, neighbours, seed)


def _clustering(runtime: Runtime[SynthesisContext], collection: str) -> StoredClustering:
    context = runtime.context
    workspace = _workspace(runtime)
    parameters = (collection, context.cluster_size, context.neighbours, context.seed)
    path = clustering_path(workspace, *parameters)
    clustering = _load_clustering(str(workspace.root), *parameters, path.stat().st_mtime) if path.exists() else None
    if clustering is None:
        raise InputError(f"no clustering of {collection!r} with size {context.cluster_size}: "
                         f"run `benchsmith cluster --collection {collection}` first")
    return clustering


# Chunk ids are content hashes, so a fetched passage never changes: keep them for the process.
_passage_cache: dict[str, dict[str, Any]] = {}


def _passages(runtime: Runtime[SynthesisContext], collection: str, ids: list[str]) -> list[dict[str, Any]]:
    if unknown := [chunk_id for chunk_id in ids if chunk_id not in _passage_cache]:
        _passage_cache.update(_vector_store(runtime, collection).fetch(unknown))
    missing = [chunk_id for chunk_id in ids if chunk_id not in _passage_cache]
    if missing:
        raise InputError(f"chunk ids missing from collection {collection!r}: {missing[:3]} (re-cluster after re-ingesting)")
    return [{"id": chunk_id, "title": _passage_cache[chunk_id].get("title", ""), "text": _passage_cache[chunk_id]["text"]}
            for chunk_id in ids]


# ---------------------------------------------------------------------------------------
# The conversation subgraph.

def walker(state: ConversationState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Pick the gold chunk of the next turn from the switch the router drew."""
    clusters = _clustering(runtime, state["collection"]).clusters
    turns = state.get("turns", [])
    if not turns:
        position, switch = Position(state["cluster_id"], 0), "start"
    else:
        switch = state["switch"]
        rng = turn_rng(runtime.context.seed, state["conversation_id"], len(turns), "walker")
        position = next_position(clusters, Position(**state["position"]), switch, rng)
    return {"position": {"cluster": position.cluster, "offset": position.offset}, "switch": switch,
            "gold_id": clusters[position.cluster][position.offset]}


def questioner(state: ConversationState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    cluster = _clustering(runtime, state["collection"]).clusters[state["position"]["cluster"]]
    passages = _passages(runtime, state["collection"], cluster)
    gold = next(p for p in passages if p["id"] == state["gold_id"])
    related = [p for p in passages if p["id"] != state["gold_id"]]
    draft = _seam(runtime, state["run_id"]).run(
        Questioner(), gold=gold, related=related, history=state.get("turns", []), switch=state["switch"])
    return {"draft": {"question": draft.question, "rewrite": draft.rewrite}}


def responder(state: ConversationState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Answers from the gold chunk only: no other passage reaches its prompt."""
    (gold,) = _passages(runtime, state["collection"], [state["gold_id"]])
    answer = _seam(runtime, state["run_id"]).run(
        Responder(), gold=gold, history=state.get("turns", []), question=state["draft"]["question"])
    return {"response": answer.answer}


def polisher(state: ConversationState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """From the second turn on, make the question conversational; keep the original when the
    rewrite fails review. Appends the finished turn."""
    turns = state.get("turns", [])
    original = state["draft"]["question"]
    asked, rejected = original, None
    if turns:
        titles = _passages(runtime, state["collection"], [state["gold_id"], turns[-1]["gold_ids"][0]])
        polished = _seam(runtime, state["run_id"]).run(
            Polisher(), history=turns, question=original, title=titles[0]["title"], previous_title=titles[1]["title"])
        history_text = [text for turn in turns for text in (turn["question"], turn["response"])]
        review = review_polish(original, polished.question, history_text)
        asked, rejected = (polished.question.strip(), None) if review.accepted else (original, review.reason)
    turn = {"index": len(turns), "question": asked, "question_unpolished": original,
            "rewrite": state["draft"]["rewrite"], "response": state["response"], "gold_ids": [state["gold_id"]],
            "switch": state["switch"], "polish_rejected": rejected}
    return {"turns": [*turns, turn]}


def router(state: ConversationState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Draw how the next turn relates to this one (follow-up, soft or hard switch)."""
    if len(state["turns"]) >= state["turns_wanted"]:
        return {}
    context = runtime.context
    policy = SwitchPolicy(context.switch_probability, context.hard_switch_rate)
    rng = turn_rng(context.seed, state["conversation_id"], len(state["turns"]), "router")
    return {"switch": draw_switch(policy, rng)}


def after_router(state: ConversationState) -> Literal["walker", "record"]:
    return "record" if len(state["turns"]) >= state["turns_wanted"] else "walker"


def record(state: ConversationState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Append the finished conversation once (a re-run after a kill finds it and skips)."""
    run_dir = RunDirectory(_workspace(runtime), state["run_id"])
    dialogue = {"conversation_id": state["conversation_id"], "cluster_id": state["cluster_id"],
                "seed": runtime.context.seed, "turns": state["turns"]}
    append_once(run_dir.file(DIALOGUES_FILE), dialogue)
    return {"finished": [state["conversation_id"]]}


conversation_builder = StateGraph(ConversationState, context_schema=SynthesisContext,
                                  input_schema=ConversationInput, output_schema=ConversationOutput)
for node in (walker, questioner, responder, polisher, router, record):
    conversation_builder.add_node(node.__name__, node)
conversation_builder.add_edge(START, "walker")
conversation_builder.add_edge("walker", "questioner")
conversation_builder.add_edge("questioner", "responder")
conversation_builder.add_edge("responder", "polisher")
conversation_builder.add_edge("polisher", "router")
conversation_builder.add_conditional_edges("router", after_router)
conversation_builder.add_edge("record", END)
# Studio shows this graph on its own (langgraph.json: "conversation"), with its branches.
conversation_graph = conversation_builder.compile()
conversation_graph.name = "conversation"


# ---------------------------------------------------------------------------------------
# The run: plan, fan out, export.

def plan(state: SynthesisState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Cluster the collection if needed and give each conversation its own cluster."""
    context = runtime.context
    store = _vector_store(runtime, state["collection"])
    clustering = cluster_collection(_workspace(runtime), store, context.cluster_size, context.neighbours, context.seed)
    available = len(clustering.clusters)
    if state["conversations"] > available:
        raise InputError(f"collection {state['collection']!r} has {available} clusters of {context.cluster_size} chunks: "
                         f"ask for at most {available} conversations, or use a smaller --cluster-size")
    chosen = random.Random(f"{context.seed}:plan").sample(range(available), state["conversations"])
    return {"plan": [{"conversation_id": f"c{number:04d}", "cluster_id": cluster}
                     for number, cluster in enumerate(chosen)]}


def converse(state: ConversationInput, runtime: Runtime[SynthesisContext]) -> ConversationOutput:
    """One conversation, run as a subgraph (checkpointed under this task, so a resumed run
    continues it mid-way). A semaphore holds the number in flight to ``concurrency``
    exactly: LangGraph's worker pool alone lets one more through at times (measured)."""
    with concurrency_slot(state["run_id"], runtime.context.concurrency):
        return conversation_graph.invoke(state, context=runtime.context)


def dispatch(state: SynthesisState, runtime: Runtime[SynthesisContext]) -> list[Send] | Literal["export"]:
    """One conversation subgraph per planned conversation not yet recorded."""
    recorded = _recorded(runtime, state["run_id"])
    sends = [Send("converse", {"run_id": state["run_id"], "collection": state["collection"],
                               "conversation_id": item["conversation_id"], "cluster_id": item["cluster_id"],
                               "turns_wanted": state["turns"]})
             for item in state["plan"] if item["conversation_id"] not in recorded]
    return sends or "export"


def _recorded(runtime: Runtime[SynthesisContext], run_id: str) -> set[str]:
    return recorded_ids(RunDirectory(_workspace(runtime), run_id).file(DIALOGUES_FILE))


def export(state: SynthesisState, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Stable dialogues file, BEIR and TREC exports, statistics."""
    run_dir = RunDirectory(_workspace(runtime), state["run_id"])
    dialogues = canonicalize(run_dir.file(DIALOGUES_FILE))
    queries, qrels = [], []
    for dialogue in dialogues:
        turns = dialogue["turns"]
        for turn in turns:
            query_id = f"{dialogue['conversation_id']}_t{turn['index']}"
            queries.append({"_id": query_id, "text": serialize_history(turns, turn["index"], runtime.context.history_window),
                            "metadata": {"conversation_id": dialogue["conversation_id"], "turn": turn["index"],
                                         "switch": turn["switch"], "question": turn["question"],
                                         "rewrite": turn["rewrite"], "response": turn["response"]}})
            qrels.extend((query_id, gold_id, 1) for gold_id in turn["gold_ids"])
    store = _vector_store(runtime, state["collection"])
    corpus = ({"_id": chunk_id, "title": (metadata or {}).get("title", ""), "text": text}
              for page in store.iter_all() for chunk_id, text, metadata in
              zip(page["ids"], page["documents"], page["metadatas"]))
    write_beir(run_dir.file(BEIR_DIR), corpus, queries, qrels)
    write_trec_qrels(run_dir.file(TREC_QRELS_FILE), qrels)
    stats = benchmark_statistics(dialogues, run_dir.usage.totals())
    run_dir.file(STATS_FILE).write_text(json.dumps(stats, indent=2), encoding="utf-8")
    return {"conversations_written": len(dialogues), "turns_written": len(queries), "stats": stats}


builder = StateGraph(SynthesisState, context_schema=SynthesisContext, input_schema=SynthesisInput,
                     output_schema=SynthesisOutput)
builder.add_node("plan", plan)
builder.add_node("converse", converse)
builder.add_node("export", export)
builder.add_edge(START, "plan")
builder.add_conditional_edges("plan", dispatch, ["converse", "export"])
builder.add_edge("converse", "export")
builder.add_edge("export", END)

# The Studio copy: compiled without a checkpointer (the server brings its own).
graph = builder.compile()
graph.name = "synthesize"


# Assumed lengths for the dry-run estimate (characters): a question, an assistant answer.
ESTIMATE_QUESTION_CHARS, ESTIMATE_ANSWER_CHARS = 100, 1200
ESTIMATE_OUTPUT_TOKENS = {"questioner": 60, "responder": 300, "polisher": 30}


def estimate_calls_and_tokens(conversations: int, turns: int, mean_chunk_chars: int, cluster_size: int) -> dict[str, int]:
    """Model calls and tokens a run would cost, from the real prompts filled with text of the
    expected lengths (chunks of the collection's mean length, answers of ~1,200 characters)."""
    from benchsmith.agents.models import estimate_tokens

    passage = {"id": "x", "title": "title", "text": "x" * mean_chunk_chars}
    related = [passage] * (cluster_size - 1)
    calls = input_tokens = output_tokens = 0
    for turn in range(turns):
        history = [{"question": "q" * ESTIMATE_QUESTION_CHARS, "response": "a" * ESTIMATE_ANSWER_CHARS}] * turn
        prompts = {
            "questioner": Questioner().messages(gold=passage, related=related, history=history, switch="soft"),
            "responder": Responder().messages(gold=passage, history=history, question="q" * ESTIMATE_QUESTION_CHARS),
        }
        if turn:
            prompts["polisher"] = Polisher().messages(history=history, question="q" * ESTIMATE_QUESTION_CHARS)
        for role, messages in prompts.items():
            calls += 1
            input_tokens += estimate_tokens("".join(message["content"] for message in messages))
            output_tokens += ESTIMATE_OUTPUT_TOKENS[role]
    return {"calls": calls * conversations, "input_tokens": input_tokens * conversations,
            "output_tokens": output_tokens * conversations}
