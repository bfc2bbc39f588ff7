"""`benchsmith replay`: a synthesized benchmark's conversations sent to the user's own assistant (a
LangGraph RAG graph built here, and an OpenAI-compatible endpoint on the tests' loopback server),
scored per turn; killed and resumed with identical results; the graph's per-turn retrieval
measures equal `evaluate`'s for the same retriever and history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from typer.testing import CliRunner
from typing_extensions import TypedDict

import benchsmith
from benchsmith.cli import app
from benchsmith.graphs.runtime.resources import clear_registry
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from tests.openai_server import RagReply, conversation_messages
from tests.outside_systems import corpus_texts, overlap_search, synthesized_beir

runner = CliRunner(env={"COLUMNS": "200"})
MEASURES = ("nDCG@10", "R@5", "RR@10")
TOP = 5  # passages the assistant answers from


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory) -> Path:
    return synthesized_beir(tmp_path_factory.mktemp("synthesized"))


@pytest.fixture(autouse=True)
def _forget_registered():
    yield
    clear_registry()


class RagState(TypedDict, total=False):
    question: str
    history: list[dict[str, str]]
    passages: list[str]
    reply: str


def rag_graph(documents: dict[str, str], fail_on_call: int | None = None) -> Any:
    """A prototype's RAG graph: retrieve by the question alone, answer from the first passage."""
    calls = {"count": 0}

    def retrieve(state: RagState) -> dict[str, Any]:
        calls["count"] += 1
        if calls["count"] == fail_on_call:
            raise LookupError("the prototype's store went away")  # not retried: the run stops
        return {"passages": [doc_id for doc_id, _ in overlap_search(documents, state["question"], TOP)]}

    def answer(state: RagState) -> dict[str, Any]:
        if not state["passages"]:
            return {"reply": "I cannot find that in the documents."}
        return {"reply": "From the notes: " + documents[state["passages"][0]][:80]}

    builder = StateGraph(RagState)
    builder.add_node("retrieve", retrieve)
    builder.add_node("answer", answer)
    builder.add_edge(START, "retrieve")
    builder.add_edge("retrieve", "answer")
    builder.add_edge("answer", END)
    graph = builder.compile(name="prototype")
    graph.calls = calls  # type: ignore[attr-defined]
    return graph


def test_a_langgraph_assistant_scores_as_evaluate_scores_its_retriever(tmp_path, synthesized):
    documents = corpus_texts(synthesized)
    graph = rag_graph(documents)
    result = benchsmith.replay(
        synthesized, assistant=graph, measures=MEASURES, workspace=str(tmp_path / "ws"), run_id="graph", worst=2
    )
    evaluated = benchsmith.evaluate(
        synthesized,
        # the graph's passages count in the order it used them; scores by that order, so ties are not
        # broken by document id as trec_eval breaks them
        retrievers=[
            lambda query, history, k: [
                (doc_id, float(k - rank)) for rank, (doc_id, _) in enumerate(overlap_search(documents, query, k))
            ]
        ],
        histories=["current"],
        measures=list(MEASURES),
        depth=TOP,
        workspace=str(tmp_path / "ws"),
        run_id="same-retriever",
    )
    replayed = result.results()
    assert replayed["per_turn"] == evaluated.results()["per_query"]["<lambda>@current"]
    assert replayed["aggregate"] == pytest.approx(evaluated.aggregate["<lambda>@current"])
    assert replayed["turns"] == len(load_jsonl(synthesized / "queries.jsonl"))
    assert set(replayed["by_switch"]) >= {"start"} and replayed["by_label"]
    assert len(replayed["worst"]) == 2 and all(conversation["turns"] for conversation in replayed["worst"])
    assert 1 <= result.answers["faithfulness"] <= 5 and 1 <= result.answers["quality"] <= 5  # the baseline judges
    turn = replayed["worst"][0]["turns"][0]
    assert set(turn["judged"]["baseline"]) == {"faithfulness", "quality", "agreement"}
    assert 1 <= result.answers["agreement"] <= 5  # with the benchmark's reference answers
    markdown = result.report["markdown"].read_text(encoding="utf-8")
    assert "Worst conversations" in markdown and "Per switch type" in markdown


def test_a_killed_replay_resumes_to_the_same_results(tmp_path, synthesized):
    documents = corpus_texts(synthesized)
    options: dict[str, Any] = dict(measures=MEASURES, workspace=str(tmp_path / "ws"), concurrency=1)
    whole = benchsmith.replay(synthesized, assistant=rag_graph(documents), run_id="whole", **options)
    failing = rag_graph(documents, fail_on_call=5)  # in the second conversation
    benchsmith.register_assistant("prototype", failing)
    with pytest.raises(LookupError):
        benchsmith.replay(synthesized, assistant="prototype", run_id="killed", **options)
    finished = load_jsonl(Path(tmp_path / "ws" / "runs" / "killed" / "conversations.jsonl"))
    assert finished and len(finished) < 3  # the conversations finished before the failure are kept
    calls_before = failing.calls["count"]
    resumed = benchsmith.replay(synthesized, assistant="prototype", run_id="killed", **options)
    turns = len(load_jsonl(synthesized / "queries.jsonl"))
    # The resumed run asks the turns of the unfinished conversations only (an interrupted one from its first turn).
    assert failing.calls["count"] - calls_before == turns - sum(len(record["turns"]) for record in finished)
    assert resumed.results()["per_turn"] == whole.results()["per_turn"]
    assert resumed.aggregate == whole.aggregate


def test_an_openai_compatible_endpoint_is_replayed_through_the_cli(tmp_path, synthesized, openai_server):
    documents = corpus_texts(synthesized)

    def rag_reply(request: dict) -> RagReply:
        question = conversation_messages(request)[-1]["content"]
        found = [doc_id for doc_id, _ in overlap_search(documents, question, TOP)]
        return RagReply("Which page do you mean?" if not found else "It says: " + documents[found[0]][:60], found)

    openai_server.replier = rag_reply
    url = f"{openai_server.base_url}/chat/completions#rag"
    workspace = str(tmp_path / "ws")
    dry = runner.invoke(app, ["replay", str(synthesized), "--assistant", url, "--dry-run", "--workspace", workspace])
    assert dry.exit_code == 0, dry.output
    assert "conversations" in dry.output and not openai_server.requests
    ran = runner.invoke(app, ["replay", str(synthesized), "--assistant", url, "--workspace", workspace,
                              "--run-id", "endpoint", "--measure", "nDCG@10"])  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert "nDCG@10" in ran.output and "replies judged" in ran.output
    asked = openai_server.requests
    assert len(asked) == len(load_jsonl(synthesized / "queries.jsonl")) and {r["model"] for r in asked} == {"rag"}
    assert max(len(r["messages"]) for r in asked) == 5  # the third turn carries two earlier exchanges
    results = RunDirectory(Workspace.resolve(workspace), "endpoint").path / "results.json"
    assert results.exists()


def test_an_unknown_assistant_stops_before_the_run(tmp_path, synthesized):
    workspace = tmp_path / "ws"
    result = runner.invoke(app, ["replay", str(synthesized), "--assistant", "py:nowhere_at_all:chat",
                                 "--workspace", str(workspace)])  # fmt: skip
    assert result.exit_code == 2 and "cannot import 'nowhere_at_all'" in result.output
    assert not (workspace / "runs").exists() or not any((workspace / "runs").iterdir())
