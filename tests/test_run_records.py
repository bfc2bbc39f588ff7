"""Run records tell the truth: a run that dies is crashed or interrupted, never running; a
setting that cannot work is refused before any run entry exists."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import benchsmith
from benchsmith.graphs.cli import app
from benchsmith.stores.errors import InputError
from benchsmith.stores.runs import RunDirectory, list_runs
from benchsmith.stores.workspace import Workspace
from tests.test_ingest_graph import write_corpus

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner(env={"COLUMNS": "200"})


@pytest.mark.parametrize("arguments, message", [
    (["ingest", "{corpus}", "--quality", "llm"], "--quality llm asks a model"),
    (["ingest", "{corpus}", "--collection", "x"], "invalid collection name 'x'"),
    (["ingest", "{corpus}", "--llm", "nonsense:model"], "unknown model spec"),
    (["ingest", "{corpus}", "--run-id", ".hidden"], "invalid run id"),
    (["synthesize", "--collection", "missing-collection"], "no collection 'missing-collection'"),
    (["ingest", "{corpus}", "--structured-output", "xml"], "structured output 'xml' is not one of"),
    (["synthesize", "--collection", "docs", "--switch-rate", "1.5"], "--switch-rate must be within [0, 1]"),
    (["evaluate", "{tmp}/nowhere", "--retriever", "bm25"], "not a BEIR directory"),
    (["evaluate", "{tmp}/nowhere", "--test", "coin-flip"], "--test must be one of"),
    (["audit", "{tmp}/nowhere", "--judge", "baseline", "--judge", "baseline"], "each --judge may be given once"),
])
def test_settings_that_cannot_work_are_refused_before_any_run_exists(tmp_path, arguments, message):
    corpus = write_corpus(tmp_path / "corpus", documents=2)
    workspace = tmp_path / "ws"
    filled = [argument.format(corpus=corpus, tmp=tmp_path) for argument in arguments]
    result = runner.invoke(app, [*filled, "-w", str(workspace)])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not list((workspace / "runs").glob("*")) if workspace.exists() else True


def test_the_api_refuses_the_same_way(tmp_path):
    with pytest.raises(InputError, match="--quality llm asks a model"):
        benchsmith.ingest([tmp_path], quality="llm", workspace=tmp_path / "ws")
    assert list_runs(Workspace.resolve(tmp_path / "ws")) == []


def start_ingest(corpus: Path, workspace: Path, run_id: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "benchsmith.graphs.cli", "ingest", str(corpus), "--collection", "docs",
               "--run-id", run_id, "--batch-size", "4", "--chunk-size", "300", "--min-chars", "50",
               "-w", str(workspace)]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})


def wait_until_running(run_dir: RunDirectory, process: subprocess.Popen) -> None:
    """Until the run's record exists and its process works on it (60 documents take it many
    seconds more to embed)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if run_dir.exists() and run_dir.load().status == "running":
            time.sleep(0.5)
            assert process.poll() is None, process.stdout.read()
            return
        assert process.poll() is None, process.stdout.read()
        time.sleep(0.02)
    raise AssertionError("the run never started")


@pytest.mark.slow
def test_a_terminated_run_is_crashed_and_a_killed_one_interrupted(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", documents=60)
    workspace = Workspace.resolve(tmp_path / "ws")

    terminated = start_ingest(corpus, workspace.root, "terminated")
    wait_until_running(RunDirectory(workspace, "terminated"), terminated)
    terminated.send_signal(signal.SIGTERM)
    terminated.wait(timeout=60)
    record = RunDirectory(workspace, "terminated").load()
    assert record.status == "crashed" and "SIGTERM" in record.error

    killed = start_ingest(corpus, workspace.root, "killed")
    wait_until_running(RunDirectory(workspace, "killed"), killed)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=60)
    record = RunDirectory(workspace, "killed").load()
    assert record.status == "running" and record.effective_status() == "interrupted"

    listing = runner.invoke(app, ["runs", "-w", str(workspace.root)])
    assert listing.exit_code == 0
    assert "interrupted" in listing.output and "crashed" in listing.output and "running" not in listing.output
    assert "resume with: benchsmith ingest" in listing.output and "--run-id killed" in listing.output
