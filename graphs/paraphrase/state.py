"""The paraphrase graph's state, its turn task and the files of its run directory."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

TURNS_FILE, BENCHMARK_FILE, QRELS_FILE = "turns.jsonl", "benchmark.json", "qrels.tsv"
IMPORTED_FILE, UNJOINED_FILE, GENERATED_FILE = "imported.jsonl", "unjoined.jsonl", "generated.jsonl"
PARAPHRASES_FILE, DIVERSITY_FILE, TEST_SETS_DIR, TEST_SETS_FILE = (
    "paraphrases.jsonl",
    "diversity.json",
    "test-sets",
    "test-sets.json",
)
ORIGINAL = "original"
EXAMPLE_TURNS = 5


class ParaphraseInput(TypedDict):
    run_id: str
    benchmarks: list[str]  # the files or directory that make one benchmark


class ParaphraseOutput(TypedDict, total=False):
    run_id: str
    turns: int
    paraphrases: int
    turns_with_paraphrases: int
    unjoined: int
    test_sets: list[str]
    diversity: dict[str, Any]
    report: dict[str, str]


class ParaphraseState(ParaphraseInput, ParaphraseOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    paraphrased: Annotated[int, operator.add]


class TurnTask(TypedDict):
    run_id: str
    turn: str
