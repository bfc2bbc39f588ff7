"""An ingestion started as a CLI subprocess against the fake embedding server, and the wait until it
embeds, for the crash and claim tests."""

import os
import subprocess
import sys
import time
from pathlib import Path

from benchsmith.agents.seam.embeddings import EMBEDDINGS_BASE_URL_ENV
from benchsmith.stores.persistence.runs import RunDirectory
from tests.openai_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parent.parent


def start_ingest(
    corpus: Path, workspace: Path, run_id: str, embeddings: FakeOpenAIServer, environment: dict[str, str] | None = None
) -> subprocess.Popen:
    """The ingest CLI in a process of its own, embedding through the loopback server (the
    embedder is not under test: no torch to load)."""
    command = [
        sys.executable,
        "-m",
        "benchsmith.cli",
        "ingest",
        str(corpus),
        "--collection",
        "docs",
        "--run-id",
        run_id,
        "--batch-size",
        "4",
        "--chunk-size",
        "300",
        "--min-chars",
        "50",
        "--embedder",
        "openai:hash",
        "-w",
        str(workspace),
    ]
    return subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", EMBEDDINGS_BASE_URL_ENV: embeddings.base_url, **(environment or {})},
    )


def wait_until_embedding(run_dir: RunDirectory, process: subprocess.Popen, embeddings: FakeOpenAIServer) -> None:
    """Until the run's record says running and its process has asked for its first batch of
    vectors (each batch takes the server a second: the run is many batches from its end)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if embeddings.embedding_requests and run_dir.exists() and run_dir.load().status == "running":
            assert process.poll() is None, process.stdout.read()
            return
        assert process.poll() is None, process.stdout.read()
        time.sleep(0.02)
    raise AssertionError("the run never started embedding")
