"""The paraphrase graph: its builder (compiled by the CLI with the checkpointer) and ``graph``, the Studio copy."""

from __future__ import annotations

from langgraph.graph import END, StateGraph

from benchsmith.graphs.contexts.paraphrase import ParaphraseContext
from benchsmith.graphs.paraphrase.finish import finish
from benchsmith.graphs.paraphrase.nodes import dispatch, paraphrase_turn, plan
from benchsmith.graphs.paraphrase.state import ParaphraseInput, ParaphraseOutput, ParaphraseState
from benchsmith.graphs.runtime.fanout import add_fan_out

builder = StateGraph(
    ParaphraseState, context_schema=ParaphraseContext, input_schema=ParaphraseInput, output_schema=ParaphraseOutput
)
add_fan_out(builder, plan=plan, dispatch=dispatch, work=paraphrase_turn, finish=finish)
builder.add_edge("finish", END)

graph = builder.compile(name="paraphrase")  # the Studio copy: no checkpointer (the server brings its own)
