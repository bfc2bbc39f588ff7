"""The nuggets graph: its builder (compiled by the CLI with the checkpointer) and ``graph``, the Studio copy."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from benchsmith.graphs.contexts.nuggets import NuggetsContext
from benchsmith.graphs.nuggets.nodes import export, gather, judge, pool, prepare, route_batches, route_questions
from benchsmith.graphs.nuggets.state import NuggetsInput, NuggetsOutput, NuggetsState
from benchsmith.graphs.runtime.fanout import add_sends

builder = StateGraph(
    NuggetsState, context_schema=NuggetsContext, input_schema=NuggetsInput, output_schema=NuggetsOutput
)
for node in (prepare, pool, gather, judge, export):
    builder.add_node(node)
builder.add_edge(START, "prepare")
add_sends(builder, after="prepare", dispatch=route_questions, work="pool", then="gather")
add_sends(builder, after="gather", dispatch=route_batches, work="judge", then="export")
builder.add_edge("export", END)

graph = builder.compile(name="nuggets")  # the Studio copy: no checkpointer (the server brings its own)
