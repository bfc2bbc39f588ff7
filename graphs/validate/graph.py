"""The validation graph: its builder (compiled by the CLI with the checkpointer) and ``graph``, the Studio copy."""

from __future__ import annotations

from langgraph.graph import END, StateGraph

from benchsmith.graphs.contexts.validate import ValidationContext
from benchsmith.graphs.evaluate.child_sets import add_evaluations
from benchsmith.graphs.validate.nodes import evaluate, judge, next_step, plan, pool
from benchsmith.graphs.validate.report import report
from benchsmith.graphs.validate.state import ValidationInput, ValidationOutput, ValidationState

builder = StateGraph(
    ValidationState, context_schema=ValidationContext, input_schema=ValidationInput, output_schema=ValidationOutput
)
add_evaluations(builder, plan=plan, evaluate=evaluate, next_step=next_step, then="pool")
for node in (pool, judge, report):
    builder.add_node(node)
builder.add_edge("pool", "judge")
builder.add_edge("judge", "report")
builder.add_edge("report", END)

graph = builder.compile(name="validate")  # the Studio copy: no checkpointer (the server brings its own)
