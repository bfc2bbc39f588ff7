"""A job that evaluates several test sets (robustness, validate) evaluates each as a child run of the
evaluate graph and keeps one record of it in its own run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from langgraph.graph import START, StateGraph

from benchsmith.graphs.contexts.evaluate import EvaluationContext
from benchsmith.graphs.evaluate.graph import evaluate_as_child
from benchsmith.graphs.evaluate.state import EvaluationInput
from benchsmith.stores.persistence.jsonl import read_json
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace


def evaluated_set(
    workspace: Workspace,
    parent_run_id: str,
    name: str,
    inputs: EvaluationInput,
    context: EvaluationContext,
    settings: dict[str, Any],
) -> dict[str, Any]:
    """Evaluate the set ``name`` as the child run ``inputs["run_id"]`` (:func:`evaluate_as_child`);
    the parent's record of it: the set, the child run, its results file and each configuration's
    run file."""
    output = evaluate_as_child(workspace, parent_run_id, name, inputs, context, settings)
    results_file = Path(output["report"]["results"])
    child_dir = RunDirectory(workspace, inputs["run_id"])
    return {
        "set": name,
        "evaluation_run": inputs["run_id"],
        "results": str(results_file),
        "runs": {c["name"]: str(child_dir.path / c["run_file"]) for c in read_json(results_file)["configurations"]},
    }


def add_evaluations(
    builder: StateGraph[Any, Any, Any, Any],
    *,
    plan: Callable[..., Any],
    evaluate: Callable[..., Any],
    next_step: Callable[..., Any],
    then: str,
) -> None:
    """The start of such a job, on ``builder``: ``plan``, then ``evaluate`` (one set a step) while
    ``next_step`` routes to it, then the node ``then``, which the job adds. Nodes are named after
    their functions: node names and edges are what checkpoints and Studio know, keep them."""
    routes = [evaluate.__name__, then]
    builder.add_node(plan.__name__, plan)
    builder.add_node(evaluate.__name__, evaluate)
    builder.add_edge(START, plan.__name__)
    builder.add_conditional_edges(plan.__name__, next_step, routes)
    builder.add_conditional_edges(evaluate.__name__, next_step, routes)
