"""The nuggets graph: its builder (compiled by the CLI with the checkpointer) and ``graph``, the Studio copy."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from benchsmith.graphs.contexts.nuggets import NuggetsContext
from benchsmith.graphs.nuggets.nodes import export, gather, judge, pool, prepare, route_batches, route_questions
from benchsmith.graphs.nuggets.state import NuggetsInput, NuggetsOutput, NuggetsState
from benchsmith.graphs.runtime.fanout import add_sends, add_worker

builder = StateGraph(
    NuggetsState, context_schema=NuggetsContext, input_schema=NuggetsInput, output_schema=NuggetsOutput
)
builder.add_node(prepare)
add_worker(builder, pool)
builder.add_node(gather)
add_worker(builder, judge)
builder.add_node(export)
builder.add_edge(START, "prepare")
add_sends(builder, after="prepare", dispatch=route_questions, work="pool", then="gather")
add_sends(builder, after="gather", dispatch=route_batches, work="judge", then="export")
builder.add_edge("export", END)

graph = builder.compile(name="nuggets")  # the Studio copy: no checkpointer (the server brings its own)
