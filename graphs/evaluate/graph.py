"""The evaluation graph: its builder (compiled by the CLI with the checkpointer), ``graph`` (the Studio copy), and the graph run as a child of another job's node."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from langgraph.config import get_stream_writer
from langgraph.graph import END, StateGraph

from benchsmith.graphs.contexts.evaluate import DEFAULT_DEPTH, EvaluationContext  # noqa: F401 (re-exported)
from benchsmith.graphs.evaluate.measure import measure
from benchsmith.graphs.evaluate.nodes import dispatch, plan, retrieve
from benchsmith.graphs.evaluate.state import EvaluationInput, EvaluationOutput, EvaluationState
from benchsmith.graphs.runtime.fanout import add_fan_out
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace

builder = StateGraph(
    EvaluationState, context_schema=EvaluationContext, input_schema=EvaluationInput, output_schema=EvaluationOutput
)
# One process retrieves every configuration: a stage's retrievals join at gather, no worker holds any.
add_fan_out(builder, plan=plan, dispatch=dispatch, work=retrieve, finish=measure)
builder.add_edge("measure", END)

graph = builder.compile(name="evaluate")  # the Studio copy: no checkpointer (the server brings its own)


def evaluate_as_child(
    workspace: Workspace,
    parent_run_id: str,
    label: str,
    inputs: EvaluationInput,
    context: EvaluationContext,
    settings: dict[str, Any],
) -> EvaluationOutput:
    """Run this graph as a subgraph of a node of a job that evaluates several sets (robustness,
    validate), for the set ``label``: a child run ``inputs["run_id"]`` in the parent's ``workspace``
    with a record of its own, listed under ``parent_run_id`` by `benchsmith runs`, its progress
    streamed as ``"<label> <stage>"`` through the parent's stream. Called from a node, it checkpoints
    in the parent's thread (LangGraph's subgraph namespace), so a killed parent resumes the
    evaluation where it stopped; a child that finished before is reused from its record."""
    context = replace(context, workspace=str(workspace.root))  # the parent's, resolved: the child's nodes reuse it
    run_dir = RunDirectory(workspace, inputs["run_id"])
    record = run_dir.load() if run_dir.exists() else None
    if record is not None and record.status == "finished":
        return record.summary  # type: ignore[return-value]
    run_dir.mark_child(parent_run_id)
    run_dir.start("evaluate", settings)
    writer = get_stream_writer()
    output: dict[str, Any] = {}
    try:
        for mode, streamed in graph.stream(inputs, context=context, stream_mode=["custom", "values"]):
            payload = cast(dict[str, Any], streamed)  # the state's values, or an event a node wrote
            if mode == "values":
                output = payload
            elif "stage" in payload:
                writer({**payload, "stage": f"{label} {payload['stage']}"})
            elif "warning" in payload:
                writer({"warning": f"{label} set: {payload['warning']}"})
            else:
                writer(payload)
    except BaseException as error:
        run_dir.crash(str(error) or type(error).__name__)
        raise
    summary = {key: output[key] for key in EvaluationOutput.__annotations__ if key in output}
    run_dir.finish(summary)
    return summary  # type: ignore[return-value]
