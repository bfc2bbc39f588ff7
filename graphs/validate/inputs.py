"""What the validation nodes read: the run's settings, logs, evaluations and human set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.graphs.contexts.validate import ValidationContext
from benchsmith.graphs.runtime.corpus_indexes import (
    cached_benchmark,
)
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.validate.state import EVALUATIONS_FILE, HUMAN_DIR, JUDGMENTS_FILE, ValidationState
from benchsmith.stores.formats.beir import Benchmark
from benchsmith.stores.persistence.jsonl import RecordLog, load_jsonl, record_log

job = JobRuntime(ValidationContext)  # the runtime's settings, workspace and run directories


def human_directory(runtime: Runtime[ValidationContext], state: ValidationState) -> str:
    """The human set as a BEIR directory: the given one, or ``human/`` in the run directory (plan decides)."""
    if state.get("human_benchmark"):
        return state["human_benchmark"]
    path = Path(state["human"])  # a run planned before plan recorded it
    return str(path) if path.is_dir() else str(job.run_dir(runtime, state["run_id"]).file(HUMAN_DIR))


def _evaluation_log(runtime: Runtime[ValidationContext], run_id: str) -> RecordLog:
    return record_log(job.run_dir(runtime, run_id).file(EVALUATIONS_FILE), "set")


def _judgment_log(runtime: Runtime[ValidationContext], run_id: str) -> RecordLog:
    return record_log(job.run_dir(runtime, run_id).file(JUDGMENTS_FILE), "item")


def _evaluations(runtime: Runtime[ValidationContext], run_id: str) -> dict[str, dict[str, Any]]:
    return {record["set"]: record for record in load_jsonl(job.run_dir(runtime, run_id).file(EVALUATIONS_FILE))}


def _human_benchmark(runtime: Runtime[ValidationContext], state: ValidationState) -> Benchmark:
    context = job.context(runtime)
    return cached_benchmark(human_directory(runtime, state), job.workspace(runtime), _human_split(context, state))


def _human_split(context: ValidationContext, state: ValidationState) -> str:
    """A given BEIR directory's split is the setting's; a labelled JSONL is written as ``test``."""
    return context.split if Path(state["human"]).is_dir() else "test"
