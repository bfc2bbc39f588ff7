"""One process per run: a second start of a run id whose process is alive stops with exit 2 and
names that process, in the workspace and, with a database, from another machine's workspace; a
dead process (kill -9) never blocks the resume."""

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from benchsmith.stores.persistence.run_claims import RunInUse, workspace_claim
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from tests.ingest_fixtures import write_corpus
from tests.ingest_processes import start_ingest, wait_until_embedding
from tests.openai_server import FakeOpenAIServer


def finish(process: subprocess.Popen, timeout: float = 300) -> str:
    """Wait for ``process`` and return its output."""
    output, _ = process.communicate(timeout=timeout)
    return output


def stop_all(*processes: subprocess.Popen) -> None:
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.communicate()


def test_a_claim_held_in_this_process_refuses_a_second_one_and_is_free_after(tmp_path):
    with (
        workspace_claim(tmp_path / "run", "r1"),  # held: a second claim of the run is refused
        pytest.raises(RunInUse, match=f"process {os.getpid()} on host {socket.gethostname()}"),
        workspace_claim(tmp_path / "run", "r1"),
    ):
        pass
    with workspace_claim(tmp_path / "run", "r1"):  # released when the block ended
        pass


@pytest.mark.slow
def test_a_second_start_of_a_running_run_is_refused_and_a_killed_one_resumes(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", documents=20)  # 30 batches of 4 chunks, 1 s each
    workspace = Workspace.resolve(tmp_path / "ws")
    run_dir = RunDirectory(workspace, "twice")
    with FakeOpenAIServer(latency_s=1.0) as embeddings:
        first = start_ingest(corpus, workspace.root, "twice", embeddings)
        try:
            wait_until_embedding(run_dir, first, embeddings)
            second = start_ingest(corpus, workspace.root, "twice", embeddings)
            output = finish(second)
            assert second.returncode == 2, output
            assert f"process {first.pid} on host {socket.gethostname()}" in " ".join(output.split())
            assert "Traceback" not in output
            record = run_dir.load()  # the refused start changed nothing
            assert record.status == "running" and record.pid == first.pid
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=60)
        finally:
            stop_all(first)
        embeddings.latency_s = 0.0
        resumed = start_ingest(corpus, workspace.root, "twice", embeddings)
        output = finish(resumed)
    assert resumed.returncode == 0, output
    assert "resumed" in output
    assert run_dir.load().status == "finished"


@pytest.mark.slow
def test_two_starts_of_a_new_run_at_once_run_it_once(tmp_path):
    """Both processes find no run; one claims it and the other stops, so no checkpoint thread
    is deleted under the process writing it and every chunk is embedded once."""
    corpus = write_corpus(tmp_path / "corpus", documents=20)
    workspace = Workspace.resolve(tmp_path / "ws")
    with FakeOpenAIServer(latency_s=2.0) as embeddings:  # slow until one stopped: both surely overlap
        processes = [start_ingest(corpus, workspace.root, "at-once", embeddings) for _ in range(2)]
        try:
            deadline = time.monotonic() + 300
            while all(process.poll() is None for process in processes):
                assert time.monotonic() < deadline, "neither process stopped"
                time.sleep(0.05)
            embeddings.latency_s = 0.0
            refused = next(process for process in processes if process.poll() is not None)
            running = next(process for process in processes if process is not refused)
            refused_output = finish(refused)
            running_output = finish(running)
        finally:
            stop_all(*processes)
        assert refused.returncode == 2, refused_output
        assert f"process {running.pid} on host" in " ".join(refused_output.split())
        assert running.returncode == 0, running_output
        record = RunDirectory(workspace, "at-once").load()
        assert record.status == "finished" and record.pid == running.pid
        assert embeddings.embedded_texts == record.summary["indexed"] > 0


@pytest.mark.slow
def test_a_run_with_a_database_is_refused_from_another_workspace_while_it_runs(tmp_path, database):
    """The same run id from another machine (its own workspace, the shared database): the
    refusal names the host and process that hold the run."""
    corpus = write_corpus(tmp_path / "corpus", documents=20)
    here, there = Workspace.resolve(tmp_path / "here"), Workspace.resolve(tmp_path / "there")
    environment = {"BENCHSMITH_DATABASE_URL": database}
    with FakeOpenAIServer(latency_s=1.0) as embeddings:
        first = start_ingest(corpus, here.root, "shared-id", embeddings, environment)
        try:
            wait_until_embedding(RunDirectory(here, "shared-id"), first, embeddings)
            second = start_ingest(corpus, there.root, "shared-id", embeddings, environment)
            output = finish(second)
        finally:
            stop_all(first)
    assert second.returncode == 2, output
    assert f"process {first.pid} on host {socket.gethostname()}" in " ".join(output.split())
    assert not RunDirectory(there, "shared-id").exists()


def test_the_claim_file_names_no_holder_once_released(tmp_path):
    run_path = Path(tmp_path / "run")
    with workspace_claim(run_path, "r2"):
        assert str(os.getpid()) in (run_path / "process.lock").read_text(encoding="utf-8")
    assert (run_path / "process.lock").read_text(encoding="utf-8") == ""
