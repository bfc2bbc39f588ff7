"""The synthesis graphs' state, input and output types, the files a run writes, and ``job``: what
the nodes read of their runtime (settings, workspace, run directories)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, NotRequired, Required

from typing_extensions import TypedDict

from benchsmith.graphs.contexts.synthesize import SynthesisContext
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.stores.formats.benchmark_files import BEIR_SUBDIRECTORY
from benchsmith.tools.benchmark.dialogue_walk import Switch

PLAN_FILE = "plan.jsonl"
BEIR_DIR, TREC_QRELS_FILE, STATS_FILE = BEIR_SUBDIRECTORY, "qrels.trec", "stats.json"
DEFAULT_TURNS = 6
STANDALONE_RUN_ID = "conversations"  # where a conversation run on its own books its model calls
LABEL_ATTEMPTS = 4  # plans a turn type tries (held-out chunks of this cluster, then the next clusters'; other chunks)


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


class SynthesisState(SynthesisInput, SynthesisOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    planned: int
    finished: Annotated[int, operator.add]


class ConversationInput(TypedDict, total=False):
    """One conversation: over a cluster of the collection's clustering, or over given chunks."""

    collection: Required[str]
    conversation_id: Required[str]
    cluster_id: int  # a cluster of the collection's clustering (SynthesisContext.cluster_size)...
    chunk_ids: list[str]  # ...or these chunks, walked in this order
    turns_wanted: int  # default 6
    run_id: str  # the run whose model cache and usage ledger the calls go to; default "conversations"
    # [its number, the run's conversations]: a re-planned turn lands on a chunk of the conversation's own share
    share: list[int]


class ConversationOutput(TypedDict, total=False):
    conversation_id: str
    cluster_id: int | None
    turns: list[dict[str, Any]]  # stores.formats.benchmark_files.Turn, one per turn
    dropped_turns: list[dict[str, Any]]  # {"position", "kind", "question", "class", "reason"} per turn the gate dropped


class Draft(TypedDict):
    """The question of the turn in flight as the questioner wrote it."""

    question: str
    rewrite: str | None  # its standalone form, where the questioner wrote one
    subject: str | None  # what it is about (the offline questioner's)
    question_type: str | None  # the offline questioner's type, or the one a model was asked for
    parts: NotRequired[list[str] | None]  # a partial or multi-passage question's parts


class ConversationState(ConversationInput, ConversationOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    source: dict[str, Any]  # the input the turns were made from: a changed input is refused
    position: dict[str, int]  # {"cluster", "offset"} of the last finished turn's gold chunk
    switch: Switch  # how the turn being built relates to the previous one
    switch_drawn: Switch  # what the router drew for it (the walker labels the chunk it finds by the rule)
    gold: dict[str, int]  # position of the gold chunk of the turn being built
    gold_id: str
    similarity: float | None  # of the turn's gold to the previous turn's gold (None on the first turn)
    draft: Draft  # the questioner's question for the turn in flight
    overlap: dict[str, Any]  # the kept question's lexical overlap, and the corrective turns and re-plans it took
    previous_subject: str | None  # what the previous question was about (the baseline polisher refers back to it)
    response: str
    kind: str  # the turn type being built: answerable, unanswerable, partial, underspecified, multi-passage, clarification
    kind_drawn: str  # what the turn-type draw gave (a kind no chunk or judge allows becomes answerable)
    question_type: str | None  # the question type drawn from --question-types (None: none asked for)
    turn_plan: dict[str, Any]  # the turn's gold, held-out, candidate and asked chunk ids
    # {"turn", "attempt", "dropped", "refused", "gate", "fallback"}: rejections of the turn in flight
    label_attempt: dict[str, Any]
    turns: Annotated[list[dict[str, Any]], operator.add]
    dropped_turns: Annotated[list[dict[str, Any]], operator.add]  # turns the quality gate dropped, with why


# What the nodes from turn_type to label_judge write for the turn in flight: a turn the gate's reading
# model flagged is kept as these while its question is asked again (graphs/synthesis/model_flags.py).
TURN_IN_FLIGHT = (
    "kind",
    "kind_drawn",
    "question_type",
    "turn_plan",
    "gold",
    "switch",
    "switch_drawn",
    "gold_id",
    "similarity",
    "draft",
    "overlap",
    "response",
)


job = JobRuntime(SynthesisContext)  # the runtime's settings, workspace and run directories


def turns_so_far(state: ConversationState) -> int:
    return len(state.get("turns", []))


def turn_position(state: ConversationState) -> int:
    """The place of the turn in flight: the turns kept and those the quality gate dropped before it."""
    return len(state.get("turns", [])) + len(state.get("dropped_turns", []))
