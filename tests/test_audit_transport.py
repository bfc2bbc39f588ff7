"""The audit through the real openai SDK client and the command line: two judge models
on the loopback server, injected faults and out-of-range verdicts change no verdict, and a
kill -9 mid-audit judges no instance twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchsmith.agents.seam.backends import ModelSettings
from benchsmith.agents.seam.models import build_seam
from benchsmith.cli import app
from benchsmith.graphs.audit.state import JUDGMENTS_FILE
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.workspace import Workspace
from tests.audit_fixtures import SUBSTANCES, server_judge, write_audit_benchmark
from tests.audit_runs import audit
from tests.openai_server import FakeOpenAIServer, conversation_messages

FAST_RETRIES = ModelSettings(timeout_s=0.5, backoff_initial_s=0.01, backoff_max_s=0.05, max_attempts=12)
JUDGES = ["openai:judge-a", "openai:judge-b"]
ROOT = Path(__file__).resolve().parent.parent
INSTANCES = len(SUBSTANCES) * 2
CALLS_PER_INSTANCE = 4  # alignment, choice, faithfulness, quality


def test_faults_and_out_of_range_verdicts_change_no_verdict(tmp_path, monkeypatch):
    turns, corpus = write_audit_benchmark(tmp_path / "bench")
    workspace = Workspace.resolve(tmp_path / "ws")
    invalid_served = []

    def sometimes_out_of_range(request):
        reply = server_judge(request)
        prompt = json.dumps(conversation_messages(request))  # the same prompt, corrected or not
        if "score" in reply and prompt not in invalid_served and len(invalid_served) < 10:
            invalid_served.append(prompt)
            return {**reply, "score": 9}  # fails the schema: must be retried, never clipped to 5
        return reply

    with FakeOpenAIServer(replier=server_judge) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-audit")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        clean = {spec: build_seam(spec, FAST_RETRIES) for spec in JUDGES}  # no cache: each run pays
        audit(workspace, turns, corpus, "clean", models=clean)
        assert sorted(server._models_seen()) == ["judge-a", "judge-b"]
        server.replier = sometimes_out_of_range
        server.set_fault_rate(0.15, seed=5, slow_s=1.0)
        faulty = {spec: build_seam(spec, FAST_RETRIES) for spec in JUDGES}
        audit(workspace, turns, corpus, "faulty", models=faulty)
    retries = sum(seam.stats.retries for seam in faulty.values())
    assert server.faults_served >= 5 and len(invalid_served) == 10
    assert retries == server.faults_served + len(invalid_served)
    clean_verdicts = load_jsonl(workspace.run_dir("clean") / JUDGMENTS_FILE)
    faulty_verdicts = load_jsonl(workspace.run_dir("faulty") / JUDGMENTS_FILE)
    assert sorted(clean_verdicts, key=lambda r: r["instance"]) == sorted(faulty_verdicts, key=lambda r: r["instance"])
    assert faulty_verdicts
    assert all(
        verdict["alignment"]["score"] <= 5 for record in faulty_verdicts for verdict in record["verdicts"].values()
    )


def test_cli_dry_run_and_input_errors(tmp_path):
    turns, corpus = write_audit_benchmark(tmp_path / "bench")
    runner = CliRunner(env={"COLUMNS": "200"})
    result = runner.invoke(
        app,
        [
            "audit",
            str(turns),
            "--corpus",
            str(corpus),
            "--judge",
            "openai:judge-a",
            "--judge",
            "baseline",
            "--position-check",
            "--dry-run",
            "-w",
            str(tmp_path / "ws"),
        ],
    )
    assert result.exit_code == 0, result.output
    calls = INSTANCES * 2 * (CALLS_PER_INSTANCE + 1)
    assert f"{INSTANCES} instances × 2 judge(s) → {calls} model calls" in result.output
    assert not (tmp_path / "ws" / "runs").exists() or not any((tmp_path / "ws" / "runs").iterdir())
    result = runner.invoke(app, ["audit", str(turns), "-w", str(tmp_path / "ws")])
    assert result.exit_code == 2 and "--corpus" in result.output
    result = runner.invoke(
        app, ["audit", str(turns), "--corpus", str(corpus), "--judge", "gpt4", "-w", str(tmp_path / "ws")]
    )
    assert result.exit_code == 2 and "gpt4" in result.output
    lines = turns.read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[2])
    del broken["gold_ids"]
    lines[2] = json.dumps(broken)
    turns.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["audit", str(turns), "--corpus", str(corpus), "-w", str(tmp_path / "ws")])
    assert result.exit_code == 2 and f"{turns}:3" in result.output and "gold_ids" in result.output


@pytest.mark.slow
def test_sigkill_mid_audit_then_resume_judges_no_instance_twice(tmp_path):
    turns, corpus = write_audit_benchmark(tmp_path / "bench")
    workspace = tmp_path / "ws"
    judgments = workspace / "runs" / "killed" / JUDGMENTS_FILE
    concurrency = 2
    with FakeOpenAIServer(replier=server_judge, latency_s=0.05) as server:
        environment = {
            **os.environ,
            "OPENAI_API_KEY": "sk-test-kill",
            "OPENAI_BASE_URL": server.base_url,
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
        command = [
            sys.executable,
            "-m",
            "benchsmith.cli",
            "audit",
            str(turns),
            "--corpus",
            str(corpus),
            *[part for spec in JUDGES for part in ("--judge", spec)],
            "--concurrency",
            str(concurrency),
            "--embedder",
            "openai:hash",  # the server's, not the default model (torch): not under test here
            "--run-id",
            "killed",
            "-w",
            str(workspace),
        ]
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if judgments.exists() and len(judgments.read_text().splitlines()) >= 5:
                break
            assert process.poll() is None, process.stdout.read()
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
        judged_at_kill = len(judgments.read_text().splitlines())
        assert judged_at_kill < INSTANCES, "the audit finished before it could be killed"

        resumed = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert "resumed from its last checkpoint" in resumed.stdout
        requests = sum(1 for request in server.requests if "messages" in request)  # judge calls, not embeddings

    written = load_jsonl(judgments)
    assert len(written) == len({record["instance"] for record in written}) == INSTANCES
    needed = INSTANCES * len(JUDGES) * CALLS_PER_INSTANCE
    # Every verdict was paid once, except at most the calls in flight when the process died.
    assert needed <= requests <= needed + concurrency
    assert (workspace / "runs" / "killed" / "audit-report.html").exists()
