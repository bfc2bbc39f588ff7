"""`replay` against a LangGraph `RemoteGraph`: the prototype's RAG graph served by a real `langgraph
dev` server the test starts on the loopback (in-memory, no network), replayed through the server's
API; its per-turn results equal those of the same graph replayed in process."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

import benchsmith
from benchsmith.graphs.runtime.resources import clear_registry
from tests.local_servers import free_port, local_server
from tests.outside_systems import synthesized_beir

pytestmark = pytest.mark.slow  # starts a LangGraph server

# The prototype as a module file of its own, as a user's langgraph.json names it.
PROTOTYPE = """
import json
import os
import re

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

CORPUS = {record["_id"]: record["text"] for record in map(json.loads, open(os.environ["PROTOTYPE_CORPUS"]))}
WORD = re.compile(r"\\w+")


def words(text):
    return {word.lower() for word in WORD.findall(text) if len(word) > 2}


class RagState(TypedDict, total=False):
    question: str
    history: list
    passages: list
    reply: str


def retrieve(state):
    asked = words(state["question"])
    scored = sorted(((-len(asked & words(body)), doc_id) for doc_id, body in CORPUS.items()))
    return {"passages": [doc_id for overlap, doc_id in scored if overlap < 0][:5]}


def answer(state):
    if not state["passages"]:
        return {"reply": "I cannot find that in the documents."}
    return {"reply": f"From the notes ({len(state.get('history') or [])} earlier turns): " + CORPUS[state["passages"][0]][:80]}


builder = StateGraph(RagState)
builder.add_node("retrieve", retrieve)
builder.add_node("answer", answer)
builder.add_edge(START, "retrieve")
builder.add_edge("retrieve", "answer")
builder.add_edge("answer", END)
graph = builder.compile(name="prototype")
"""


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory) -> Path:
    return synthesized_beir(tmp_path_factory.mktemp("synthesized"))


@pytest.fixture(autouse=True)
def _forget_registered():
    yield
    clear_registry()


def load_module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("prototype_in_process", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_remote_graph_replays_as_the_same_graph_in_process(tmp_path, synthesized, monkeypatch):
    executable = shutil.which("langgraph", path=str(Path(sys.executable).parent))
    if executable is None:
        pytest.skip("the studio extra (langgraph-cli, langgraph-api) is not installed")
    from langgraph.pregel.remote import RemoteGraph

    server_dir = tmp_path / "server"
    server_dir.mkdir()
    (server_dir / "prototype.py").write_text(PROTOTYPE, encoding="utf-8")
    (server_dir / "langgraph.json").write_text(
        json.dumps({"dependencies": ["."], "graphs": {"prototype": "./prototype.py:graph"}}), encoding="utf-8"
    )
    monkeypatch.setenv("PROTOTYPE_CORPUS", str(synthesized / "corpus.jsonl"))
    in_process = load_module(server_dir / "prototype.py").graph
    options = dict(measures=["nDCG@10", "R@5"], workspace=str(tmp_path / "ws"), concurrency=2)
    local = benchsmith.replay(synthesized, assistant=in_process, run_id="local", **options)

    port = free_port()
    command = [executable, "dev", "--config", "langgraph.json", "--port", str(port), "--no-browser", "--no-reload"]
    environment = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "PROTOTYPE_CORPUS": str(synthesized / "corpus.jsonl"),
    }
    with local_server(command, "/ok", port, cwd=server_dir, env=environment, timeout_s=120) as base:
        served_name = benchsmith.register_assistant("served-prototype", RemoteGraph("prototype", url=base))
        served = benchsmith.replay(synthesized, assistant=served_name, run_id="remote", **options)

    assert served.results()["per_turn"] == local.results()["per_turn"]
    assert served.aggregate == local.aggregate and served.answers == local.answers
    replies = {
        run: [turn["reply"] for line in (tmp_path / "ws" / "runs" / run / "conversations.jsonl").read_text().splitlines()
              for turn in json.loads(line)["turns"]]
        for run in ("local", "remote")
    }  # fmt: skip
    assert sorted(replies["remote"]) == sorted(replies["local"]) and any(
        "1 earlier turns" in r for r in replies["remote"]
    )
