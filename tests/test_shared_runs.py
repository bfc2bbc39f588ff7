"""Runs shared through a real PostgreSQL by worker processes (synthesis, audit, paraphrasing): one
worker is killed with SIGKILL mid-run, the other takes its items over when their leases run out, every item is done once, and
the files written are byte for byte those of a single process with the same seed.

The synthesis workers have separate workspaces and share one Chroma server (`chroma run`), as
workers on separate machines do; the model is the loopback OpenAI-compatible server. Three workers
of one workspace (`benchsmith work RUN --workers 3`) write the same files at once."""

from __future__ import annotations

import filecmp
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchsmith.graphs.ingest import IngestContext
from benchsmith.graphs.ingest import builder as ingest_builder
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.stores.postgres import connection as connection_to  # the schema made on first use
from benchsmith.stores.workspace import Workspace
from tests.audit_fixtures import server_judge, write_audit_benchmark
from tests.embedders import HashingEmbedder
from tests.local_servers import free_port, local_server
from tests.openai_server import FakeOpenAIServer
from tests.paraphrase_fixtures import server_replier as paraphrase_replier
from tests.postgres_server import database, postgres_url  # noqa: F401  (fixtures)
from tests.synthesis_fixtures import COLLECTION, TOPICS, server_replier

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
LEASE_S = 3
SYNTHESIS_FILES = ["dialogues.jsonl", "plan.jsonl", "qrels.trec", "stats.json", "beir/corpus.jsonl",
                   "beir/queries.jsonl", "beir/qrels/test.tsv"]
AUDIT_FILES = ["instances.jsonl", "judgments.jsonl", "extra_qrels.tsv", "audit.json", "audit-report.md"]
PARAPHRASE_FILES = ["turns.jsonl", "paraphrases.jsonl", "diversity.json", "test-sets.json", "paraphrase.json",
                    "paraphrase-report.md", "test-sets/R1/queries.jsonl", "test-sets/original/queries.jsonl"]


def write_corpus(directory: Path, documents: int) -> Path:
    """One-chunk documents, each about one topic (as tests/synthesis_fixtures.build_collection writes them)."""
    rng = random.Random(0)
    directory.mkdir(parents=True, exist_ok=True)
    for number in range(documents):
        topic = TOPICS[number % len(TOPICS)]
        words = " ".join(f"{topic}{rng.randrange(40)}" for _ in range(30))
        (directory / f"doc{number:03}.txt").write_text(
            f"Document {number} explains {topic}. It covers {words}. Finally it notes item{number} for {topic}.",
            encoding="utf-8")
    return directory


def ingest(workspace: Workspace, corpus: Path, chroma_host: str | None = None) -> None:
    context = IngestContext(workspace=str(workspace.root), chroma_host=chroma_host, min_chars=20,
                            embedder=register_embedder(HashingEmbedder()))
    run_job(ingest_builder, job="ingest", workspace=workspace, run_id="ingest", context=context, settings={},
            inputs={"run_id": "ingest", "sources": [str(corpus)], "collection": COLLECTION})


def items_done(url: str, run_id: str) -> int:
    with connection_to(url) as connection:
        return connection.execute("SELECT count(*) FROM benchsmith_items WHERE run_id = %s AND status = 'done'",
                                  (run_id,)).fetchone()[0]


def item_attempts(url: str, run_id: str) -> dict[str, int]:
    with connection_to(url) as connection:
        rows = connection.execute("SELECT item_id, attempts FROM benchsmith_items WHERE run_id = %s",
                                  (run_id,)).fetchall()
    return dict(rows)


def start(command: list[str], environment: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def kill_when_done(process: subprocess.Popen, url: str, run_id: str, at_least: int, total: int) -> int:
    """SIGKILL ``process`` once ``at_least`` items are done; the items done at that moment."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and items_done(url, run_id) < at_least:
        assert process.poll() is None, process.stdout.read()
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    done = items_done(url, run_id)
    assert done < total, "the run finished before a worker could be killed"
    return done


def share_and_kill_the_first(first_command: list[str], environment: dict[str, str], url: str,
                             second_workspace: Path, at_least: int, total: int) -> int:
    """Start the run with ``first_command``; once it has done an item, a second worker joins
    (`benchsmith work shared`); SIGKILL the first once ``at_least`` items are done and let the second
    finish. The items done when the first was killed."""
    first = start(first_command, environment)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and items_done(url, "shared") < 1:  # registered and under way
        assert first.poll() is None, first.stdout.read()
        time.sleep(0.05)
    second = start([sys.executable, "-m", "benchsmith.graphs.cli", "work", "shared", "--concurrency", "2",
                    "-w", str(second_workspace)], environment)
    done_at_kill = kill_when_done(first, url, "shared", at_least=at_least, total=total)
    output, _ = second.communicate(timeout=300)
    assert second.returncode == 0, output
    return done_at_kill


def assert_same_files(first: Path, second: Path, names: list[str]) -> None:
    for name in names:
        assert (first / name).exists(), name
        assert filecmp.cmp(first / name, second / name, shallow=False), f"{name} differs"


def test_two_synthesis_workers_sharing_chroma_one_killed_give_the_single_process_files(tmp_path, database):
    chroma = shutil.which("chroma", path=str(Path(sys.executable).parent))
    if chroma is None:
        pytest.skip("the chroma command is not installed")
    corpus = write_corpus(tmp_path / "corpus", documents=96)
    conversations, turns = 20, 3
    port = free_port()
    server_command = [chroma, "run", "--path", str(tmp_path / "chroma"), "--host", "127.0.0.1", "--port", str(port)]
    with local_server(server_command, "/api/v2/heartbeat", port), \
            FakeOpenAIServer(replier=server_replier, latency_s=0.1) as model:
        chroma_host = f"127.0.0.1:{port}"
        solo_workspace = Workspace.resolve(tmp_path / "solo")
        ingest(solo_workspace, corpus)  # the single process: embedded Chroma, its own workspace
        ingest(Workspace.resolve(tmp_path / "loader"), corpus, chroma_host)  # the shared collection
        environment = {**os.environ, "OPENAI_API_KEY": "sk-test-workers", "OPENAI_BASE_URL": model.base_url,
                       "BENCHSMITH_DATABASE_URL": database}

        solo_environment = {name: value for name, value in environment.items() if name != "BENCHSMITH_DATABASE_URL"}
        solo = subprocess.run(
            [sys.executable, "-m", "benchsmith.graphs.cli", "synthesize", "--collection", COLLECTION,
             "--conversations", str(conversations), "--turns", str(turns), "--llm", "openai:sim", "--cluster-size",
             "4", "--seed", "3", "--concurrency", "4", "--run-id", "solo", "-w", str(solo_workspace.root)],
            cwd=ROOT, env=solo_environment, capture_output=True, text=True, timeout=300)
        assert solo.returncode == 0, solo.stdout + solo.stderr

        done_at_kill = share_and_kill_the_first(
            [sys.executable, "-m", "benchsmith.graphs.cli", "synthesize", "--collection", COLLECTION,
             "--conversations", str(conversations), "--turns", str(turns), "--llm", "openai:sim", "--cluster-size",
             "4", "--seed", "3", "--concurrency", "2", "--lease", str(LEASE_S), "--chroma-host", chroma_host,
             "--run-id", "shared", "-w", str(tmp_path / "first")],
            environment, database, tmp_path / "second", at_least=6, total=conversations)
        # A machine that joins after the end only writes the files (from the database and the server).
        exported = subprocess.run([sys.executable, "-m", "benchsmith.graphs.cli", "export", "shared", "-w",
                                   str(tmp_path / "third")], cwd=ROOT, env=environment, capture_output=True,
                                  text=True, timeout=300)
        assert exported.returncode == 0, exported.stdout + exported.stderr

    assert items_done(database, "shared") == conversations
    attempts = item_attempts(database, "shared")
    # Done once each: only the conversations the killed worker held were taken over (a second attempt).
    assert sum(count > 1 for count in attempts.values()) <= 2 and done_at_kill >= 6
    for worker in ("second", "third"):
        assert_same_files(solo_workspace.run_dir("solo"), tmp_path / worker / "runs" / "shared", SYNTHESIS_FILES)
        assert not (tmp_path / worker / "chroma").exists()  # the vectors came from the Chroma server


def test_two_audit_workers_one_killed_judge_each_instance_once_and_export_the_single_process_report(
        tmp_path, database):
    turns, corpus = write_audit_benchmark(tmp_path / "bench")
    judges = ["openai:judge-a", "openai:judge-b"]
    with FakeOpenAIServer(replier=server_judge, latency_s=0.1) as model:
        environment = {**os.environ, "OPENAI_API_KEY": "sk-test-workers", "OPENAI_BASE_URL": model.base_url,
                       "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        audit = [sys.executable, "-m", "benchsmith.graphs.cli", "audit", str(turns), "--corpus", str(corpus),
                 *[part for judge in judges for part in ("--judge", judge)], "--concurrency", "2"]
        solo = subprocess.run([*audit, "--run-id", "solo", "-w", str(tmp_path / "solo")], cwd=ROOT, env=environment,
                              capture_output=True, text=True, timeout=300)
        assert solo.returncode == 0, solo.stdout + solo.stderr
        total = len((tmp_path / "solo" / "runs" / "solo" / "instances.jsonl").read_text().splitlines())

        shared_environment = {**environment, "BENCHSMITH_DATABASE_URL": database}
        share_and_kill_the_first([*audit, "--lease", str(LEASE_S), "--run-id", "shared", "-w", str(tmp_path / "first")],
                                 shared_environment, database, tmp_path / "second", at_least=4, total=total)
        calls_with_workers = len(model.requests)

        runs = subprocess.run([sys.executable, "-m", "benchsmith.graphs.cli", "runs"], cwd=ROOT,
                              env={**shared_environment, "COLUMNS": "200"}, capture_output=True, text=True,
                              timeout=120)
        exported = subprocess.run([sys.executable, "-m", "benchsmith.graphs.cli", "export", "shared", "-w",
                                   str(tmp_path / "third")], cwd=ROOT, env=shared_environment, capture_output=True,
                                  text=True, timeout=300)
        assert exported.returncode == 0, exported.stdout + exported.stderr
        assert len(model.requests) == calls_with_workers  # an export judges nothing

    assert items_done(database, "shared") == total
    assert sum(count > 1 for count in item_attempts(database, "shared").values()) <= 2
    solo_dir = tmp_path / "solo" / "runs" / "solo"
    assert_same_files(solo_dir, tmp_path / "second" / "runs" / "shared", AUDIT_FILES)
    assert_same_files(solo_dir, tmp_path / "third" / "runs" / "shared", AUDIT_FILES)
    assert runs.returncode == 0 and "shared" in runs.stdout and "finished" in runs.stdout, runs.stdout
    assert str(total) in runs.stdout  # items done


def write_topics(path: Path, topics: int, turns: int) -> Path:
    """CAsT 2019-style topics (no resolved rewrites: every later turn is rewritten by the model)."""
    subjects = ["honey bees", "throat cancer", "solar panels", "sourdough bread", "the Roman army", "tidal energy"]
    path.write_text(json.dumps([
        {"number": 100 + number, "title": subjects[number % len(subjects)], "turn": [
            {"number": turn + 1, "raw_utterance": f"What is question {turn + 1} about {subjects[number % len(subjects)]}?"
             if turn == 0 else f"And how does it relate to point {turn + 1}?"} for turn in range(turns)]}
        for number in range(topics)]), encoding="utf-8")
    return path


def test_two_paraphrase_workers_one_killed_paraphrase_each_turn_once_and_write_the_single_process_files(
        tmp_path, database):
    topics = write_topics(tmp_path / "2019_evaluation_topics.json", topics=6, turns=4)
    total = 24
    with FakeOpenAIServer(replier=paraphrase_replier, latency_s=0.3) as model:
        environment = {**os.environ, "OPENAI_API_KEY": "sk-test-workers", "OPENAI_BASE_URL": model.base_url,
                       "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        paraphrase = [sys.executable, "-m", "benchsmith.graphs.cli", "paraphrase", str(topics), "--per-turn", "3",
                      "--llm", "openai:sim", "--min-similarity", "0", "--concurrency", "2"]
        solo = subprocess.run([*paraphrase, "--run-id", "solo", "-w", str(tmp_path / "solo")], cwd=ROOT,
                              env=environment, capture_output=True, text=True, timeout=300)
        assert solo.returncode == 0, solo.stdout + solo.stderr

        shared_environment = {**environment, "BENCHSMITH_DATABASE_URL": database}
        share_and_kill_the_first([*paraphrase, "--lease", str(LEASE_S), "--run-id", "shared", "-w",
                                  str(tmp_path / "first")],
                                 shared_environment, database, tmp_path / "second", at_least=8, total=total)

    assert items_done(database, "shared") == total
    assert sum(count > 1 for count in item_attempts(database, "shared").values()) <= 2
    assert_same_files(tmp_path / "solo" / "runs" / "solo", tmp_path / "second" / "runs" / "shared",
                      PARAPHRASE_FILES)


def child_processes(pid: int) -> list[int]:
    """The processes ``pid`` started (Linux)."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in children.read_text().split()] if children.exists() else []


def test_three_workers_in_one_workspace_one_killed_write_the_single_process_files(tmp_path, database):
    """`benchsmith work RUN --workers 3` as the README shows it: three processes of one workspace
    write the run's files at once (each through its own temporary file; the corpus export streams
    from the Chroma server, a long write), one is SIGKILLed mid-run, and the files are byte for byte
    those of one process with the same seed."""
    chroma = shutil.which("chroma", path=str(Path(sys.executable).parent))
    if chroma is None:
        pytest.skip("the chroma command is not installed")
    corpus = write_corpus(tmp_path / "corpus", documents=400)
    conversations, turns = 16, 3
    port = free_port()
    server_command = [chroma, "run", "--path", str(tmp_path / "chroma"), "--host", "127.0.0.1", "--port", str(port)]
    with local_server(server_command, "/api/v2/heartbeat", port), \
            FakeOpenAIServer(replier=server_replier, latency_s=0.1) as model:
        chroma_host = f"127.0.0.1:{port}"
        solo_workspace = Workspace.resolve(tmp_path / "solo")
        ingest(solo_workspace, corpus)
        ingest(Workspace.resolve(tmp_path / "loader"), corpus, chroma_host)
        environment = {**os.environ, "OPENAI_API_KEY": "sk-test-workers", "OPENAI_BASE_URL": model.base_url,
                       "COLUMNS": "200"}
        synthesize = [sys.executable, "-m", "benchsmith.graphs.cli", "synthesize", "--collection", COLLECTION,
                      "--conversations", str(conversations), "--turns", str(turns), "--llm", "openai:sim",
                      "--cluster-size", "4", "--seed", "3"]
        solo = subprocess.run([*synthesize, "--concurrency", "4", "--run-id", "solo", "-w", str(solo_workspace.root)],
                              cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)
        assert solo.returncode == 0, solo.stdout + solo.stderr

        # The run is started (and registered) by one process, killed once it has done an item.
        shared_environment = {**environment, "BENCHSMITH_DATABASE_URL": database}
        starter = start([*synthesize, "--concurrency", "2", "--lease", str(LEASE_S), "--chroma-host", chroma_host,
                         "--run-id", "shared", "-w", str(tmp_path / "starter")], shared_environment)
        kill_when_done(starter, database, "shared", at_least=1, total=conversations)

        workers = start([sys.executable, "-m", "benchsmith.graphs.cli", "work", "shared", "--workers", "3",
                         "--concurrency", "2", "-w", str(tmp_path / "one")], shared_environment)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (len(child_processes(workers.pid)) < 3
                                               or items_done(database, "shared") < 6):
            assert workers.poll() is None, workers.stdout.read()
            time.sleep(0.05)
        os.kill(child_processes(workers.pid)[0], signal.SIGKILL)
        assert items_done(database, "shared") < conversations, "the run finished before a worker could be killed"
        output, _ = workers.communicate(timeout=300)

    assert items_done(database, "shared") == conversations
    assert "1 of 3 workers failed (killed by SIGKILL)" in output and "the run is finished" in output, output
    assert workers.returncode == 0, output
    run_dir = tmp_path / "one" / "runs" / "shared"
    assert_same_files(solo_workspace.run_dir("solo"), run_dir, SYNTHESIS_FILES)
    assert not list(run_dir.rglob("*.tmp"))  # every temporary renamed or removed
    assert json.loads((run_dir / "run.json").read_text())["status"] == "finished"
