"""What the paraphrase nodes read: the run's turns, the input benchmark and the turns to paraphrase as run items."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.graphs.contexts.paraphrase import ParaphraseContext
from benchsmith.graphs.paraphrase.state import GENERATED_FILE, TURNS_FILE
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.resources import run_items
from benchsmith.stores.formats.beir import Benchmark
from benchsmith.stores.formats.conversational import load_conversational
from benchsmith.stores.persistence.jsonl import records_by
from benchsmith.stores.persistence.run_items import RunItems
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace

job = JobRuntime(ParaphraseContext)  # the runtime's settings, workspace and run directories


def read_turns(run_dir: RunDirectory) -> dict[str, dict[str, Any]]:
    """The run's turns in benchmark order: ``{turn id: {"turn", "conversation_id", "number",
    "raw", "rewrite", "history", "response"}}``."""
    return records_by(run_dir.file(TURNS_FILE), "turn")


def load_input_benchmark(specs: list[str], workspace: Workspace, context: ParaphraseContext) -> Benchmark:
    return load_conversational(
        specs,
        workspace,
        split=context.split,
        corpus=Path(context.corpus) if context.corpus else None,
        qrels=Path(context.qrels) if context.qrels else None,
    )


def _items(runtime: Runtime[ParaphraseContext], run_id: str) -> RunItems:
    """The run's turns as items: paraphrased once in the generated log."""
    return run_items(job.workspace(runtime), run_id, GENERATED_FILE, "turn")
