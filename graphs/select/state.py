"""The select graph's state, input and output types, the files a run writes and its progress stages."""

from __future__ import annotations

import operator
from typing import Annotated, Any, NotRequired

from typing_extensions import TypedDict

RUN_FILES_DIR, QUERIES_DIR = "run-files", "queries"
CONFIGURATIONS_FILE, POOL_FILE, JUDGMENTS_FILE = "configurations.jsonl", "pool.jsonl", "judgments.jsonl"
FACTS_FILE, STAGES_FILE = "facts.jsonl", "stages.jsonl"
# Progress stages named unlike the nodes: a node's end completes the bar of its name (benchsmith/cli/console.py).
RETRIEVAL_STAGE, JUDGING_STAGE = "retrieval", "judging pairs"


class SelectInput(TypedDict):
    run_id: str
    queries: str  # a text or JSONL file of real queries
    corpus: list[str]  # folders, files, a BEIR corpus.jsonl or "stdlib"
    space: dict[str, Any]  # tools/retrieval/strategy_space.py
    judges: list[str]


class SelectOutput(TypedDict, total=False):
    run_id: str
    report: dict[str, str]  # {"markdown", "html", "results", "best"}: paths ("best" only with a winner)
    ranking: list[str]  # configuration names, best first
    best: str | None  # the winner; None when its interval overlaps the runner-up's
    tied: list[str]  # then: the configurations whose intervals overlap the top one's
    pr_auc: dict[str, float]
    precision_first: dict[str, Any]
    recall_first: dict[str, Any]
    pool_pairs: int
    model_verdicts: int
    verdicts: dict[str, int]  # verdicts on this run's pairs by source: model, stored, offline
    whole_corpus_pairs: int


class SelectState(SelectInput, SelectOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    stage: int
    configurations: list[str]  # every configuration planned so far, in order
    searching: bool  # another stage follows
    retrieved: Annotated[int, operator.add]
    judged: Annotated[int, operator.add]


class RetrieveTask(TypedDict):
    run_id: str
    queries: str
    corpus: list[str]
    configuration: str
    chunkings: NotRequired[list[str]]  # the space's: where an outside result's id may name a chunk


class JudgeTask(TypedDict):
    run_id: str
    queries: str
    judges: list[str]
    pairs: list[str]
