"""graphs/runtime/fanout.add_fan_out: the nodes and edges a job with a fan-out states in one line,
and the loop they make (batches until ``finish``)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

from langgraph.graph import END, StateGraph
from langgraph.types import Send
from typing_extensions import TypedDict

from benchsmith.graphs.runtime.fanout import add_fan_out

ITEMS = [f"i{number}" for number in range(5)]


class ToyState(TypedDict, total=False):
    done: Annotated[list[str], operator.add]
    finished: bool


def plan(state: ToyState) -> dict[str, Any]:
    return {}


def dispatch(state: ToyState) -> list[Send] | Literal["finish"]:
    """Two items a batch, so the loop comes back through gather."""
    pending = [item for item in ITEMS if item not in state.get("done", [])]
    return [Send("work", {"item": item}) for item in pending[:2]] or "finish"


def work(task: dict[str, str]) -> dict[str, Any]:
    return {"done": [task["item"]]}


def finish(state: ToyState) -> dict[str, Any]:
    return {"finished": True}


def toy_graph() -> Any:
    builder = StateGraph(ToyState)
    add_fan_out(builder, plan=plan, dispatch=dispatch, work=work, finish=finish)
    builder.add_edge("finish", END)
    return builder.compile()


def test_every_dispatching_node_routes_to_the_same_places():
    drawn = toy_graph().get_graph()
    assert set(drawn.nodes) == {"__start__", "plan", "work", "gather", "finish", "__end__"}
    edges = {(edge.source, edge.target, edge.conditional) for edge in drawn.edges}
    routed = {(source, target, True) for source in ("plan", "gather") for target in ("work", "finish")}
    assert edges == {("__start__", "plan", False), ("work", "gather", False), ("finish", "__end__", False), *routed}


def test_the_fan_out_loops_in_batches_until_finish():
    result = toy_graph().invoke({"done": []})
    assert sorted(result["done"]) == ITEMS
    assert result["finished"] is True
