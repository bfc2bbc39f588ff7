"""A replay, and an evaluation of an HTTP retriever, killed as a user kills them: the CLI run as a
subprocess gets SIGKILL mid-run (once its own log shows finished conversations or queries, while
the user's system is answering the next request), then the same command with its --run-id resumes
it. The results equal an uninterrupted run's, and nothing the killed run finished is asked again."""

from __future__ import annotations

import json
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchsmith.cli import app
from benchsmith.stores.formats.beir import load_benchmark
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.query_building import HistoryMode, build_query
from tests.killed_runs import WAIT_S, kill_once_logged, resume
from tests.openai_server import FakeOpenAIServer, RagReply, conversation_messages
from tests.outside_systems import SearchEndpoint, corpus_texts, overlap_search, serving, synthesized_beir

pytestmark = pytest.mark.slow  # two CLI subprocesses each
runner = CliRunner(env={"COLUMNS": "200"})
TOP = 5


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory) -> Path:
    return synthesized_beir(tmp_path_factory.mktemp("synthesized"))


def results_of(workspace: Path, run_id: str) -> dict:
    return json.loads((RunDirectory(Workspace.resolve(workspace), run_id).path / "results.json").read_text())


def test_a_replay_killed_mid_run_resumes_to_the_uninterrupted_results_asking_no_finished_turn(tmp_path, synthesized):
    documents = corpus_texts(synthesized)
    hang_at = {"request": 0}
    hanging, release, lock = threading.Event(), threading.Event(), threading.Lock()
    asked: Counter[str] = Counter()

    def rag_reply(request: dict) -> RagReply:
        messages = conversation_messages(request)
        with lock:
            asked[json.dumps(messages)] += 1
            count = sum(asked.values())
        if count == hang_at["request"]:
            hanging.set()
            release.wait(WAIT_S)  # the client is killed meanwhile; this reply goes nowhere
        question = messages[-1]["content"]
        found = [doc_id for doc_id, _ in overlap_search(documents, question, TOP)]
        return RagReply("Which page do you mean?" if not found else "It says: " + documents[found[0]][:60], found)

    workspace = tmp_path / "ws"
    with FakeOpenAIServer(replier=rag_reply) as server:
        url = f"{server.base_url}/chat/completions#rag"
        arguments = ["replay", str(synthesized), "--assistant", url, "--concurrency", "1", "-w", str(workspace)]
        whole = runner.invoke(app, [*arguments, "--run-id", "whole"])
        assert whole.exit_code == 0, whole.output
        turns = sum(asked.values())
        asked.clear()
        hang_at["request"] = 4  # the first turn of the second conversation: the first one is logged by then
        command = [sys.executable, "-m", "benchsmith.cli", *arguments, "--run-id", "killed"]
        log = workspace / "runs" / "killed" / "conversations.jsonl"
        try:
            finished = kill_once_logged(command, log, hanging)
        finally:
            release.set()
        assert 1 <= len(finished) < 3, "the replay finished before it could be killed"
        asked_before_resume = Counter(asked)
        resume(command)

    # The resumed run asks every turn of the unfinished conversations (an interrupted one from its
    # first turn) and none of a finished one: the killed run's requests beyond its finished turns are
    # the only ones asked twice.
    finished_turns = sum(len(record["turns"]) for record in finished)
    assert sum(asked.values()) == turns + sum(asked_before_resume.values()) - finished_turns
    assert all(count == 1 for count in asked.values()) or sum(asked_before_resume.values()) > finished_turns
    killed, uninterrupted = results_of(workspace, "killed"), results_of(workspace, "whole")
    for key in ("per_turn", "aggregate", "by_switch", "by_label", "turns"):
        assert killed[key] == uninterrupted[key], key


def test_an_evaluation_of_an_http_retriever_killed_mid_run_resumes_asking_no_finished_query(tmp_path, synthesized):
    endpoint = SearchEndpoint(corpus_texts(synthesized))
    workspace = tmp_path / "ws"
    benchmark = load_benchmark(synthesized, Workspace.resolve(tmp_path / "ws"))
    with serving(endpoint) as url:
        arguments = ["evaluate", str(synthesized), "--retriever", url, "--history", "current", "--concurrency", "1"]
        arguments += ["--measure", "nDCG@10", "--measure", "R@20", "-w", str(workspace)]
        whole = runner.invoke(app, [*arguments, "--run-id", "whole"])
        assert whole.exit_code == 0, whole.output
        queries = len(endpoint.requests)
        endpoint.requests.clear()
        endpoint.hang_at = 4
        command = [sys.executable, "-m", "benchsmith.cli", *arguments, "--run-id", "killed"]
        logs = workspace / "runs" / "killed" / "outside"
        log = logs / next(iter(sorted(path.name for path in (workspace / "runs" / "whole" / "outside").iterdir())))
        try:
            finished = kill_once_logged(command, log, endpoint.hanging)
        finally:
            endpoint.release.set()
        assert 1 <= len(finished) < queries, "the evaluation finished before it could be killed"
        held = endpoint.requests[endpoint.hang_at - 1]["query"]  # asked when killed: asked again on resume
        resume(command)
        asked = Counter(request["query"] for request in endpoint.requests)

    texts = {query.id: build_query(query, HistoryMode("current")) for query in benchmark.queries}
    sharing = Counter(texts.values())
    for record in finished:  # a query finished before the kill was asked once (queries may share a text)
        text = texts[record["_id"]]
        assert asked[text] == sharing[text] + (text == held), record["_id"]
    assert set(asked) == set(texts.values()) and sum(asked.values()) == queries + 1  # only the held one twice
    killed, uninterrupted = results_of(workspace, "killed"), results_of(workspace, "whole")
    assert killed["per_query"] == uninterrupted["per_query"] and killed["aggregate"] == uninterrupted["aggregate"]
