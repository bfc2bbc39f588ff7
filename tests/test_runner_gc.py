"""While a run streams, the objects alive before it are frozen for the garbage collector, and thawed
when it ends, also when it crashes (graphs/runtime/runner.garbage_collection_of_the_run)."""

from __future__ import annotations

import gc

import pytest
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from benchsmith.graphs.runtime.runner import run_job
from benchsmith.stores.persistence.workspace import Workspace


class Seen(TypedDict, total=False):
    run_id: str
    frozen: int


def graph_seeing_the_freeze(fail: bool = False) -> StateGraph:
    def look(state: Seen) -> dict:
        if fail:
            raise RuntimeError("the node failed")
        return {"frozen": gc.get_freeze_count()}

    builder = StateGraph(Seen)
    builder.add_node("look", look)
    builder.add_edge(START, "look")
    builder.add_edge("look", END)
    return builder


def test_the_objects_alive_before_a_run_are_frozen_while_it_runs_and_thawed_after(tmp_path):
    before = gc.get_freeze_count()
    workspace = Workspace.resolve(tmp_path / "ws")
    outcome = run_job(
        graph_seeing_the_freeze(),
        job="look",
        workspace=workspace,
        run_id="look",
        inputs={"run_id": "look"},
        context=None,
        settings={},
    )
    assert outcome.values["frozen"] > 1000  # the modules loaded, the graph, the workspace...
    assert gc.get_freeze_count() == before
    with pytest.raises(RuntimeError, match="the node failed"):
        run_job(
            graph_seeing_the_freeze(fail=True),
            job="look",
            workspace=workspace,
            run_id="crash",
            inputs={"run_id": "crash"},
            context=None,
            settings={},
        )
    assert gc.get_freeze_count() == before
