"""Synthesis through the real langchain-openai client: injected faults change nothing, and a
kill -9 mid-run loses and repeats nothing but the calls in flight."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchsmith.agents.models import ModelSettings, build_seam
from benchsmith.stores.runs import RunDirectory
from benchsmith.stores.workspace import Workspace
from tests.openai_server import FakeOpenAIServer
from tests.synthesis_fixtures import build_collection, server_replier, synthesize

FAST_RETRIES = ModelSettings(timeout_s=0.5, backoff_initial_s=0.01, backoff_max_s=0.05, max_attempts=10)
ROOT = Path(__file__).resolve().parent.parent


def test_injected_faults_do_not_change_the_benchmark(tmp_path, monkeypatch):
    workspace = Workspace.resolve(tmp_path / "ws")
    build_collection(workspace, tmp_path / "corpus")
    with FakeOpenAIServer(replier=server_replier) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-faults")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        clean = build_seam("openai:sim", FAST_RETRIES)  # no cache: each run pays for its own replies
        synthesize(workspace, "clean", conversations=6, turns=3, model=clean)
        server.set_fault_rate(0.2, seed=3, slow_s=1.0)
        faulty = build_seam("openai:sim", FAST_RETRIES)
        synthesize(workspace, "faulty", conversations=6, turns=3, model=faulty)
    assert server.faults_served >= 5 and faulty.stats.retries == server.faults_served
    assert clean.stats.retries == 0
    assert (RunDirectory(workspace, "faulty").file("dialogues.jsonl").read_text()
            == RunDirectory(workspace, "clean").file("dialogues.jsonl").read_text())


@pytest.mark.slow
def test_sigkill_mid_synthesis_then_resume(tmp_path):
    conversations, turns, concurrency = 20, 3, 4
    calls_needed = conversations * (3 * turns - 1)
    workspace = Workspace.resolve(tmp_path / "ws")
    build_collection(workspace, tmp_path / "corpus", documents=100)
    dialogues = RunDirectory(workspace, "killed").file("dialogues.jsonl")
    with FakeOpenAIServer(replier=server_replier, latency_s=0.05) as server:
        environment = {**os.environ, "OPENAI_API_KEY": "sk-test-kill", "OPENAI_BASE_URL": server.base_url}
        command = [sys.executable, "-m", "benchsmith.graphs.cli", "synthesize", "--collection", "docs",
                   "--conversations", str(conversations), "--turns", str(turns), "--llm", "openai:sim",
                   "--concurrency", str(concurrency), "--cluster-size", "4", "--run-id", "killed",
                   "-w", str(workspace.root)]
        process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if dialogues.exists() and len(dialogues.read_text().splitlines()) >= 6:
                break
            assert process.poll() is None, process.stdout.read()
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
        written_at_kill = len(dialogues.read_text().splitlines())
        assert written_at_kill < conversations, "the run finished before it could be killed"

        resumed = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert "resumed from its last checkpoint" in resumed.stdout
        requests = len(server.requests)

    written = [json.loads(line) for line in dialogues.read_text().splitlines()]
    assert len(written) == conversations
    assert len({d["conversation_id"] for d in written}) == conversations
    assert all([t["index"] for t in d["turns"]] == list(range(turns)) for d in written)
    # Every call was paid once, except at most the ones in flight when the process died.
    assert calls_needed <= requests <= calls_needed + concurrency
