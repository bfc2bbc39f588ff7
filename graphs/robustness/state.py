"""The robustness graph's state, its judging task and the files of its run directory."""

from __future__ import annotations

import operator
from typing import Annotated

from typing_extensions import TypedDict

EVALUATIONS_FILE, POOL_FILE, JUDGMENTS_FILE = "evaluations.jsonl", "pool.jsonl", "judgments.jsonl"
AUGMENTED_QRELS_FILE, AUGMENTED_TREC_FILE = "augmented_qrels.tsv", "augmented_qrels.trec"
ORIGINAL = "original"
GIVEN_RUN = "run"  # the configuration name of a given run file
EXAMPLES_SHOWN = 8


class RobustnessInput(TypedDict):
    run_id: str
    paraphrase_run: str  # the paraphrase run directory
    judges: list[str]
    retrievers: list[str]  # with a corpus: evaluated by the evaluate job
    histories: list[str]
    runs: dict[str, str]  # without one: {"original": FILE, "R1": FILE, ...}
    qrels: str | None  # TREC qrels; default: the paraphrase run's


class RobustnessOutput(TypedDict, total=False):
    run_id: str
    sets: list[str]
    pooled: int
    confirmed: int
    means: dict[str, dict[str, dict[str, dict[str, float]]]]  # {configuration: {before|after: {set: {measure: mean}}}}
    report: dict[str, str]


class RobustnessState(RobustnessInput, RobustnessOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    judged: Annotated[int, operator.add]


class JudgeTask(TypedDict):
    run_id: str
    paraphrase_run: str
    judges: list[str]
    turn: str
