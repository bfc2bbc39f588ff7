"""A configuration search killed mid-judging and resumed writes the files an uninterrupted search
writes: the verdicts its killed attempt paid for are its own, not "reused from earlier runs"."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from langgraph.runtime import Runtime

from benchsmith.agents.pool_judge import FactMatch
from benchsmith.graphs.contexts.select import SelectContext
from benchsmith.graphs.select import graph
from benchsmith.graphs.select.graph import dispatch_judging
from benchsmith.graphs.select.state import JUDGMENTS_FILE, POOL_FILE
from benchsmith.stores.persistence.jsonl import write_jsonl_atomic
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from tests.openai_server import FakeOpenAIServer
from tests.select_fixtures import PASSAGE, QUESTION, TOPICS, write_labelled_corpus

ROOT = Path(__file__).resolve().parent.parent
RELEVANT_TEXTS = {question: set(texts) for question, texts in TOPICS.values()}
RUN_ID = "search"
# run.json's fields that say when and by which process, not what the run computed (stores/persistence/runs.py).
PROCESS_FIELDS = ("created", "updated", "pid", "host")


class LabelJudges:
    """Judges behind the loopback server answering from the labels; with ``hang_model`` the
    ``hang_at``-th request to that model never gets an answer (the client is killed meanwhile)."""

    def __init__(self, hang_model: str | None = None, hang_at: int = 0):
        self.hang_model, self.hang_at = hang_model, hang_at
        self.requests: dict[str, int] = {}
        self.hanging, self.release = threading.Event(), threading.Event()
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> dict:
        with self._lock:
            self.requests[body["model"]] = self.requests.get(body["model"], 0) + 1
            hang = body["model"] == self.hang_model and self.requests[body["model"]] == self.hang_at
        if hang:
            self.hanging.set()
            self.release.wait(timeout=300)
            raise RuntimeError("the client was killed while this request waited")
        if body["response_format"]["json_schema"]["name"] == FactMatch.__name__:
            return {"rationale": "scripted", "same": False}
        content = body["messages"][-1]["content"]
        question = QUESTION.search(content).group(1)
        return {
            "judgments": [
                {
                    "passage": int(number),
                    "rationale": "scripted",
                    "relevant": text in RELEVANT_TEXTS[question],
                    "facts": [text] if text in RELEVANT_TEXTS[question] else [],
                }
                for number, text in PASSAGE.findall(content)
            ]
        }


def search_command(queries: Path, corpus: Path, workspace: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "benchsmith.cli",
        "select",
        str(queries),
        "--corpus",
        str(corpus),
        "--retriever",
        "bm25",
        "--top-k",
        "3",
        "--top-k",
        "6",
        "--judge",
        "openai:first",
        "--judge",
        "openai:second",
        "--min-votes",
        "1",
        "--batch-size",
        "2",
        "--concurrency",
        "1",
        "--resamples",
        "50",
        "--run-id",
        RUN_ID,
        "-w",
        str(workspace),
    ]


def environment(server: FakeOpenAIServer) -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": "sk-test-resume", "OPENAI_BASE_URL": server.base_url, "COLUMNS": "200"}


def run_files(workspace: Path) -> dict[str, object]:
    """Every file of the run, its workspace path replaced (the two runs live in two workspaces),
    run.json without its process fields."""
    run_dir = RunDirectory(Workspace.resolve(workspace), RUN_ID).path
    files: dict[str, object] = {}
    for path in sorted(run_dir.rglob("*")):
        if not path.is_file() or path.name.endswith(".lock"):
            continue
        text = path.read_text(encoding="utf-8").replace(str(Path(workspace).resolve()), "WORKSPACE")
        if path.name == "run.json":
            record = json.loads(text)
            files[path.name] = {key: value for key, value in record.items() if key not in PROCESS_FIELDS}
        elif path.name == "usage.jsonl":  # a ledger of calls: the same calls, in the order they were answered
            files[path.name] = sorted(text.splitlines())
        else:
            files[str(path.relative_to(run_dir))] = text
    return files


@pytest.mark.slow
def test_a_search_killed_mid_judging_and_resumed_writes_the_uninterrupted_search_files(tmp_path):
    corpus, queries, _ = write_labelled_corpus(tmp_path / "data")
    uninterrupted, resumed = tmp_path / "uninterrupted", tmp_path / "resumed"
    with FakeOpenAIServer(replier=LabelJudges()) as server:
        finished = subprocess.run(
            search_command(queries, corpus, uninterrupted),
            cwd=ROOT,
            env=environment(server),
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert finished.returncode == 0, finished.stdout + finished.stderr

    # The second judge's third batch hangs: the first judge's verdicts on it are stored, not yet logged.
    judges = LabelJudges(hang_model="second", hang_at=3)
    with FakeOpenAIServer(replier=judges) as server:
        command = search_command(queries, corpus, resumed)
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment(server), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        try:
            while not judges.hanging.wait(timeout=0.1):
                assert process.poll() is None, process.stdout.read()
            process.send_signal(signal.SIGKILL)
            process.wait()
        finally:
            judges.release.set()
            process.stdout.close()
        again = subprocess.run(command, cwd=ROOT, env=environment(server), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "resumed from its last checkpoint" in again.stdout

    expected, got = run_files(uninterrupted), run_files(resumed)
    assert sorted(got) == sorted(expected)
    for name in expected:
        assert got[name] == expected[name], name
    selection = json.loads(str(got["selection.json"]))
    assert selection["judgments"]["verdicts_in_run"]["stored"] == 0


def test_judging_batches_are_the_uninterrupted_ones_whatever_a_killed_attempt_logged(tmp_path, monkeypatch):
    """A kill between two appends of one batch leaves half of it logged: the resumed run judges
    that batch as it was cut, not a batch of the half left and the next batch's pairs (the offline
    judge weighs each passage against its batch)."""
    monkeypatch.setattr(graph, "progress_reporter", lambda stage: lambda done, total=None: None)  # no stream here

    workspace = Workspace.resolve(tmp_path / "ws")
    run_dir = RunDirectory(workspace, RUN_ID)
    pairs = [f"q1::{letter}" for letter in "abcde"]
    write_jsonl_atomic(run_dir.file(POOL_FILE), [{"pair": pair, "query_id": "q1"} for pair in pairs])
    runtime = Runtime(context=SelectContext(workspace=str(workspace.root), batch_size=2))
    state = {"run_id": RUN_ID, "queries": "", "judges": ["baseline"]}

    def batches() -> list[list[str]]:
        sends = dispatch_judging(state, runtime)
        return [] if sends == "facts" else [send.arg["pairs"] for send in sends]

    assert batches() == [pairs[0:2], pairs[2:4], pairs[4:5]]
    write_jsonl_atomic(run_dir.file(JUDGMENTS_FILE), [{"pair": pair} for pair in pairs[:3]])  # killed mid-batch
    assert batches() == [pairs[2:4], pairs[4:5]]
    write_jsonl_atomic(run_dir.file(JUDGMENTS_FILE), [{"pair": pair} for pair in pairs])
    assert batches() == []
