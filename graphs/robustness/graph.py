"""The robustness graph: its builder (compiled by the CLI with the checkpointer) and ``graph``, the Studio copy."""

from __future__ import annotations

from langgraph.graph import END, StateGraph

from benchsmith.graphs.contexts.robustness import RobustnessContext
from benchsmith.graphs.evaluate.child_sets import add_evaluations
from benchsmith.graphs.robustness.nodes import dispatch, evaluate, judge, next_step, plan, pool
from benchsmith.graphs.robustness.report import report
from benchsmith.graphs.robustness.state import RobustnessInput, RobustnessOutput, RobustnessState
from benchsmith.graphs.runtime.fanout import add_sends, add_worker

builder = StateGraph(
    RobustnessState, context_schema=RobustnessContext, input_schema=RobustnessInput, output_schema=RobustnessOutput
)
add_evaluations(builder, plan=plan, evaluate=evaluate, next_step=next_step, then="pool")
builder.add_node(pool)
add_worker(builder, judge)
builder.add_node(report)
add_sends(builder, after="pool", dispatch=dispatch, work="judge", then="report")
builder.add_edge("report", END)

graph = builder.compile(name="robustness")  # the Studio copy: no checkpointer (the server brings its own)
