"""The validation graph's state and the files of its run directory."""

from __future__ import annotations

from typing import Any, NotRequired

from typing_extensions import TypedDict

SYNTHETIC, HUMAN = "synthetic", "human"
SETS = (SYNTHETIC, HUMAN)
EVALUATIONS_FILE, PAIRS_FILE, JUDGMENTS_FILE = "evaluations.jsonl", "judge-pairs.jsonl", "judgments.jsonl"
HUMAN_DIR = "human"  # the human set written as a BEIR directory over the synthetic corpus (a JSONL, or held-out ids)
HELD_OUT_FILE = "held-out-labels.json"  # what the human set's judgments lost to the benchmark's held-out chunks
JUDGE_BATCH = 8  # passages per judge call
IDS_SHOWN = 5  # ids named in a mismatch message


class ValidationInput(TypedDict):
    run_id: str
    synthetic: str  # anything `evaluate` accepts: a synthesis run id or directory, a BEIR directory
    human: str  # a BEIR directory over the same corpus, or a labelled JSONL (stores/formats/labelled_questions.py)
    retrievers: list[str]
    histories: list[str]  # on the synthetic set; empty: oracle when it has rewrites, else full
    runs: NotRequired[list[str]]  # TREC run files ranking the queries of both sets
    judges: NotRequired[list[str]]


class ValidationOutput(TypedDict, total=False):
    run_id: str
    measure: str
    configurations: list[dict[str, Any]]
    kendall_tau_b: float | None
    interval: dict[str, float | None]
    p_value: float | None
    top1_agrees: bool
    verdict: dict[str, str]  # {label, text}: evals.measures.validity.Verdict
    judge_agreement: dict[str, dict[str, Any]]
    separability: dict[
        str, Any
    ]  # {queries, resamples, seed, confidence, pairs: [evals.measures.separability.Separation]}
    held_out: dict[str, Any]  # what the human set lost to the benchmark's held-out chunks (tools/corpus/held_out.py)
    report: dict[str, str]  # {"markdown", "html", "results"}: paths


OUTPUT_KEYS = (
    "measure",
    "configurations",
    "kendall_tau_b",
    "interval",
    "p_value",
    "top1_agrees",
    "verdict",
    "judge_agreement",
    "separability",
    "held_out",
)  # of validity.json, returned as they are there


class ValidationState(ValidationInput, ValidationOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    human_benchmark: str  # the BEIR directory the human set is evaluated on
    synthetic_histories: list[str]
    human_histories: list[str]
    pairs: int
