"""The audit graph's state, input and output types and the files a run writes."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

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
    ill_formed_questions: (
        int  # instances whose question is ill-formed (evals/measures/question_form.py: fragments, markup...)
    )
    shortcut_flags: list[str]  # evals/measures/shortcuts.py: lexically_trivial, answer_leak, ill_formed, history_free
    lexical_overlap: dict[str, float | None]  # mean, median, p90 of the turns' lexical overlap with their gold
    label_agreement: dict[str, float]  # per checked turn label: the share of its turns the judges confirmed
    quality_gate: dict[str, Any]  # turns read, turns flagged, flagged turns per rubric class (evals/quality_gate/)


class AuditState(AuditInput, AuditOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    judged: Annotated[int, operator.add]


class JudgeTask(TypedDict):
    run_id: str
    benchmark: str
    judges: list[str]
    instance: str
