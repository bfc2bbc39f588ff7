"""A graph run in line (graphs/runtime/inline.py) gives what LangGraph gives, and a graph that is
not one path of nodes is refused before it runs."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from langgraph.errors import InvalidUpdateError
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from typing_extensions import TypedDict

from benchsmith.graphs.contexts.synthesize import SynthesisContext
from benchsmith.graphs.runtime.inline import InlineGraph, once_per_run
from benchsmith.graphs.runtime.resources import register_model
from benchsmith.graphs.synthesis.conversation import conversation_builder
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.workspace import Workspace
from tests.synthesis_fixtures import COLLECTION
from tests.turn_type_fixtures import ALL_RATES, QUESTION_MIX, build_rich_collection
from tests.turn_type_replies import typed_seam


@pytest.fixture(scope="module")
def clustered(tmp_path_factory) -> Workspace:
    from benchsmith.jobs.synthesize import _store
    from benchsmith.tools.corpus.corpus_clusters import cluster_collection

    root = tmp_path_factory.mktemp("inline")
    workspace = Workspace.resolve(root / "ws")
    build_rich_collection(workspace, root / "corpus", documents=60)
    cluster_collection(workspace, _store(workspace, COLLECTION, None), 4)
    return workspace


@pytest.mark.parametrize("gate", ["off", "replan"])
def test_conversations_in_line_are_langgraphs_turn_for_turn(clustered, gate):
    """Every turn type, re-planned and dropped turns (the label judge's, the quality gate's),
    clarifications: the same output dicts."""
    seam, _ = typed_seam()
    context = SynthesisContext(
        workspace=str(clustered.root),
        llm=register_model(f"inline-typed-{gate}", seam),
        cluster_size=4,
        question_types=QUESTION_MIX,
        quality_gate=gate,
        **ALL_RATES,
    )
    pregel, inline = conversation_builder.compile(checkpointer=False), InlineGraph(conversation_builder)
    kinds = set()
    for cluster in range(6):
        task = {
            "collection": COLLECTION,
            "conversation_id": f"c{cluster}",
            "cluster_id": cluster,
            "turns_wanted": 6,
            "run_id": f"inline-{gate}",
            "ignored": "not an input key",
        }
        expected = pregel.invoke(task, context=context)
        assert inline.invoke(task, context=context) == expected
        assert inline.invoke(task, context=vars(context)) == expected  # a dict context, as LangGraph takes it
        kinds |= {turn["turn_type"] for turn in expected["turns"]}
    if gate == "off":  # the scripted model's typed questions are templates the gate refuses
        assert kinds >= {"answerable", "unanswerable", "partial", "underspecified", "clarification", "multi-passage"}


def test_a_nodes_error_reaches_the_caller_as_from_langgraph(clustered):
    context = SynthesisContext(workspace=str(clustered.root), cluster_size=4)
    task = {"collection": COLLECTION, "conversation_id": "x", "cluster_id": 999}
    with pytest.raises(InputError, match="no cluster 999"):
        InlineGraph(conversation_builder).invoke(task, context=context)


class Counting(TypedDict, total=False):
    count: int
    seen: Annotated[list[str], operator.add]


def counting_step(state: Counting) -> dict:
    return {"count": state.get("count", 0) + 1, "seen": [f"step{state.get('count', 0)}"]}


def looping_graph(step=counting_step) -> StateGraph:
    def check(state: Counting) -> Command:
        return Command(goto=END if state["count"] >= 3 else "step", update={"seen": ["check"]})

    builder = StateGraph(Counting)
    builder.add_node("step", step)
    builder.add_node("check", check)
    builder.add_edge(START, "step")
    builder.add_edge("step", "check")
    return builder


def test_reducers_loops_and_commands_as_langgraph():
    builder = looping_graph()
    assert (
        InlineGraph(builder).invoke({})
        == builder.compile().invoke({})
        == {"count": 3, "seen": ["step0", "check", "step1", "check", "step2", "check"]}
    )


def test_a_lookup_is_made_once_per_run_in_line_and_at_every_node_under_langgraph():
    made: list[int] = []

    def look_up() -> int:
        made.append(len(made))
        return made[-1]

    def step(state: Counting) -> dict:
        return {"count": state.get("count", 0) + 1, "seen": [f"lookup {once_per_run('thing', look_up)}"]}

    builder = looping_graph(step)
    inline = InlineGraph(builder)
    assert inline.invoke({})["seen"][::2] == ["lookup 0"] * 3  # one lookup for the run's three steps
    assert inline.invoke({})["seen"][::2] == ["lookup 1"] * 3  # a new run looks again
    assert builder.compile().invoke({})["seen"][::2] == ["lookup 2", "lookup 3", "lookup 4"]
    assert once_per_run("thing", look_up) == 5


def test_an_update_to_a_key_the_state_lacks_is_refused():
    builder = StateGraph(Counting)
    builder.add_node("stray", lambda state: {"missing": 1})
    builder.add_edge(START, "stray")
    with pytest.raises(InvalidUpdateError, match="missing"):
        InlineGraph(builder).invoke({})


def branching(kind: str) -> StateGraph:
    builder = StateGraph(Counting)
    for name in ("a", "b", "c"):
        builder.add_node(name, lambda state: {"count": 1})
    builder.add_edge(START, "a")
    if kind == "fan-out":
        builder.add_edge("a", "b")
        builder.add_edge("a", "c")
    elif kind == "conditional":
        builder.add_conditional_edges("a", lambda state: "b", ["b", "c"])
    else:
        builder.add_edge(["a", "b"], "c")
    return builder


@pytest.mark.parametrize("kind", ["fan-out", "conditional", "join"])
def test_a_graph_that_is_not_one_path_is_refused_when_built(kind):
    with pytest.raises(ValueError, match="not a single path"):
        InlineGraph(branching(kind))


def test_a_goto_beside_an_edge_out_is_refused():
    """LangGraph would follow both the edge and the goto: two paths."""
    builder = StateGraph(Counting)
    builder.add_node("a", lambda state: Command(goto="b", update={"count": 1}))
    builder.add_node("b", lambda state: {"count": 2})
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    with pytest.raises(ValueError, match="not a single path"):
        InlineGraph(builder).invoke({})
