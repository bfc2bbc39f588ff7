"""Runs shared through a real PostgreSQL by worker processes (synthesis, audit, paraphrasing): one
worker is killed with SIGKILL mid-run, the other takes its items over when their leases run out, every item is done once, and
the files written are byte for byte those of a single process with the same seed.

The synthesis workers have separate workspaces and share one Chroma server (`chroma run`), as
workers on separate machines do; the model is the loopback OpenAI-compatible server. Three workers
of one workspace (`benchsmith work RUN --workers 3`) write the same files at once.

Only the workers (and the killed process) are subprocesses: the single process each run is compared
with runs in the test's own process through the Python API, and the audit and paraphrase runs embed
with ``openai:hash`` on a loopback embeddings server (no torch in any process), since neither the
embedder nor the command line of the reference run is under test here."""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

import pytest

import benchsmith
from benchsmith.agents.seam.embeddings import EMBEDDINGS_BASE_URL_ENV
from benchsmith.graphs.ingest import IngestContext
from benchsmith.graphs.ingest import builder as ingest_builder
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.stores.persistence.postgres import connection as connection_to  # the schema made on first use
from benchsmith.stores.persistence.workspace import Workspace
from tests.audit_fixtures import server_judge, write_audit_benchmark
from tests.doc_pages import write_pages
from tests.embedders import HashingEmbedder
from tests.local_servers import free_port, local_server
from tests.openai_server import FakeOpenAIServer
from tests.paraphrase_fixtures import server_replier as paraphrase_replier
from tests.synthesis_fixtures import COLLECTION, TOPICS, server_replier

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
LEASE_S = 3
SYNTHESIS_FILES = [
    "dialogues.jsonl",
    "plan.jsonl",
    "qrels.trec",
    "stats.json",
    "beir/corpus.jsonl",
    "beir/queries.jsonl",
    "beir/qrels/test.tsv",
]
AUDIT_FILES = ["instances.jsonl", "judgments.jsonl", "extra_qrels.tsv", "audit.json", "audit-report.md"]
PARAPHRASE_FILES = [
    "turns.jsonl",
    "paraphrases.jsonl",
    "diversity.json",
    "test-sets.json",
    "paraphrase.json",
    "paraphrase-report.md",
    "test-sets/R1/queries.jsonl",
    "test-sets/original/queries.jsonl",
]


def write_corpus(directory: Path, documents: int) -> Path:
    """One-chunk documentation pages, each about one topic (as tests/synthesis_fixtures.build_collection
    writes them)."""
    return write_pages(directory, TOPICS, documents)


def ingest(workspace: Workspace, corpus: Path, chroma_host: str | None = None) -> None:
    context = IngestContext(
        workspace=str(workspace.root),
        chroma_host=chroma_host,
        min_chars=20,
        embedder=register_embedder(HashingEmbedder()),
    )
    run_job(
        ingest_builder,
        job="ingest",
        workspace=workspace,
        run_id="ingest",
        context=context,
        settings={},
        inputs={"run_id": "ingest", "sources": [str(corpus)], "collection": COLLECTION},
    )


def items_done(url: str, run_id: str) -> int:
    with connection_to(url) as connection:
        return done_count(connection, run_id)


def done_count(connection, run_id: str) -> int:
    return connection.execute(
        "SELECT count(*) FROM benchsmith_items WHERE run_id = %s AND status = 'done'", (run_id,)
    ).fetchone()[0]


def item_attempts(url: str, run_id: str) -> dict[str, int]:
    with connection_to(url) as connection:
        rows = connection.execute(
            "SELECT item_id, attempts FROM benchsmith_items WHERE run_id = %s", (run_id,)
        ).fetchall()
    return dict(rows)


def wait_until(
    url: str,
    run_id: str,
    done: int,
    process: subprocess.Popen,
    timeout_s: float,
    also: Callable[[], bool] = lambda: True,
) -> None:
    """Poll (one connection for the whole wait) until ``done`` items of ``run_id`` are done and
    ``also()`` holds; ``process`` must still be running meanwhile."""
    deadline = time.monotonic() + timeout_s
    with connection_to(url) as connection:
        while time.monotonic() < deadline and not (done_count(connection, run_id) >= done and also()):
            assert process.poll() is None, process.stdout.read()
            time.sleep(0.05)


def start(command: list[str], environment: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def kill_when_done(process: subprocess.Popen, url: str, run_id: str, at_least: int, total: int) -> int:
    """SIGKILL ``process`` once ``at_least`` items are done; the items done at that moment."""
    wait_until(url, run_id, at_least, process, timeout_s=240)
    process.send_signal(signal.SIGKILL)
    process.wait()
    done = items_done(url, run_id)
    assert done < total, "the run finished before a worker could be killed"
    return done


def share_and_kill_the_first(
    first_command: list[str], environment: dict[str, str], url: str, second_workspace: Path, at_least: int, total: int
) -> int:
    """Start the run with ``first_command``; once it has done an item, a second worker joins
    (`benchsmith work shared`); SIGKILL the first once ``at_least`` items are done and let the second
    finish. The items done when the first was killed."""
    first = start(first_command, environment)
    wait_until(url, "shared", 1, first, timeout_s=120)  # registered and under way
    second = start(
        [sys.executable, "-m", "benchsmith.cli", "work", "shared", "--concurrency", "2", "-w", str(second_workspace)],
        environment,
    )
    done_at_kill = kill_when_done(first, url, "shared", at_least=at_least, total=total)
    output, _ = second.communicate(timeout=300)
    assert second.returncode == 0, output
    return done_at_kill


@contextmanager
def model_and_embeddings(
    replier: Callable[[dict], dict], latency_s: float, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[FakeOpenAIServer, dict[str, str]]]:
    """The loopback model (``latency_s`` a call, so a worker can be killed mid-run) and a loopback
    embeddings server without latency for ``--embedder openai:hash``; the environment pointing at
    both, set in this process too (the reference runs here) and returned for the subprocesses."""
    with FakeOpenAIServer(replier=replier, latency_s=latency_s) as model, FakeOpenAIServer() as embeddings:
        settings = {
            "OPENAI_API_KEY": "sk-test-workers",
            "OPENAI_BASE_URL": model.base_url,
            EMBEDDINGS_BASE_URL_ENV: embeddings.base_url,
        }
        for name, value in settings.items():
            monkeypatch.setenv(name, value)
        yield model, {**os.environ, **settings}


def assert_same_files(first: Path, second: Path, names: list[str]) -> None:
    for name in names:
        assert (first / name).exists(), name
        assert filecmp.cmp(first / name, second / name, shallow=False), f"{name} differs"


def test_two_audit_workers_one_killed_judge_each_instance_once_and_export_the_single_process_report(
    tmp_path, database, monkeypatch
):
    turns, corpus = write_audit_benchmark(tmp_path / "bench")
    judges = ["openai:judge-a", "openai:judge-b"]
    with model_and_embeddings(server_judge, 0.1, monkeypatch) as (model, environment):
        # The single process judges 8 instances at once: its files must not depend on that either.
        solo = benchsmith.audit(
            str(turns),
            judges=judges,
            corpus=str(corpus),
            embedder="openai:hash",
            concurrency=8,
            run_id="solo",
            workspace=tmp_path / "solo",
        )
        total = solo.instances

        audit = [
            sys.executable,
            "-m",
            "benchsmith.cli",
            "audit",
            str(turns),
            "--corpus",
            str(corpus),
            *[part for judge in judges for part in ("--judge", judge)],
            "--concurrency",
            "2",
            "--embedder",
            "openai:hash",
        ]
        shared_environment = {**environment, "BENCHSMITH_DATABASE_URL": database}
        share_and_kill_the_first(
            [*audit, "--lease", str(LEASE_S), "--run-id", "shared", "-w", str(tmp_path / "first")],
            shared_environment,
            database,
            tmp_path / "second",
            at_least=4,
            total=total,
        )
        calls_with_workers = len(model.requests)

        runs = subprocess.run(
            [sys.executable, "-m", "benchsmith.cli", "runs"],
            cwd=ROOT,
            env={**shared_environment, "COLUMNS": "200"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        # The one `benchsmith export` command line of the suite: its exit status is checked here.
        exported = subprocess.run(
            [sys.executable, "-m", "benchsmith.cli", "export", "shared", "-w", str(tmp_path / "third")],
            cwd=ROOT,
            env=shared_environment,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert exported.returncode == 0, exported.stdout + exported.stderr
        assert len(model.requests) == calls_with_workers  # an export judges nothing

    assert len((tmp_path / "solo" / "runs" / "solo" / "instances.jsonl").read_text().splitlines()) == total
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
    path.write_text(
        json.dumps(
            [
                {
                    "number": 100 + number,
                    "title": subjects[number % len(subjects)],
                    "turn": [
                        {
                            "number": turn + 1,
                            "raw_utterance": f"What is question {turn + 1} about {subjects[number % len(subjects)]}?"
                            if turn == 0
                            else f"And how does it relate to point {turn + 1}?",
                        }
                        for turn in range(turns)
                    ],
                }
                for number in range(topics)
            ]
        ),
        encoding="utf-8",
    )
    return path


def test_two_paraphrase_workers_one_killed_paraphrase_each_turn_once_and_write_the_single_process_files(
    tmp_path, database, monkeypatch
):
    topics = write_topics(tmp_path / "2019_evaluation_topics.json", topics=6, turns=4)
    total = 24
    with model_and_embeddings(paraphrase_replier, 0.3, monkeypatch) as (_model, environment):
        benchsmith.paraphrase(
            str(topics),
            per_turn=3,
            llm="openai:sim",
            min_similarity=0.0,
            concurrency=8,
            embedder="openai:hash",
            run_id="solo",
            workspace=tmp_path / "solo",
        )

        paraphrase = [
            sys.executable,
            "-m",
            "benchsmith.cli",
            "paraphrase",
            str(topics),
            "--per-turn",
            "3",
            "--llm",
            "openai:sim",
            "--min-similarity",
            "0",
            "--concurrency",
            "2",
            "--embedder",
            "openai:hash",
        ]
        shared_environment = {**environment, "BENCHSMITH_DATABASE_URL": database}
        share_and_kill_the_first(
            [*paraphrase, "--lease", str(LEASE_S), "--run-id", "shared", "-w", str(tmp_path / "first")],
            shared_environment,
            database,
            tmp_path / "second",
            at_least=8,
            total=total,
        )

    assert items_done(database, "shared") == total
    assert sum(count > 1 for count in item_attempts(database, "shared").values()) <= 2
    assert_same_files(tmp_path / "solo" / "runs" / "solo", tmp_path / "second" / "runs" / "shared", PARAPHRASE_FILES)


class SynthesisSetup:
    """What both synthesis tests share: the Chroma server holding the collection, the loopback model,
    and the single process's run (embedded Chroma in a workspace of its own) over the same corpus."""

    conversations = 16
    command: ClassVar[list[str]] = [
        sys.executable,
        "-m",
        "benchsmith.cli",
        "synthesize",
        "--collection",
        COLLECTION,
        "--conversations",
        str(conversations),
        "--turns",
        "3",
        "--llm",
        "openai:sim",
        "--cluster-size",
        "4",
        "--seed",
        "3",
    ]

    def __init__(self, chroma_host: str, model: FakeOpenAIServer, solo_dir: Path):
        self.chroma_host, self.model, self.solo_dir = chroma_host, model, solo_dir

    def environment(self, database: str) -> dict[str, str]:
        return {
            **os.environ,
            "OPENAI_API_KEY": "sk-test-workers",
            "OPENAI_BASE_URL": self.model.base_url,
            "BENCHSMITH_DATABASE_URL": database,
            "COLUMNS": "200",
        }

    def shared_run(self, workspace: Path) -> list[str]:
        """The command that starts the shared run from ``workspace``."""
        return [
            *self.command,
            "--concurrency",
            "2",
            "--lease",
            str(LEASE_S),
            "--chroma-host",
            self.chroma_host,
            "--run-id",
            "shared",
            "-w",
            str(workspace),
        ]


@pytest.fixture(scope="module")
def synthesis(tmp_path_factory) -> Iterator[SynthesisSetup]:
    chroma = shutil.which("chroma", path=str(Path(sys.executable).parent))
    if chroma is None:
        pytest.skip("the chroma command is not installed")
    root = tmp_path_factory.mktemp("synthesis")
    # 400 documents: the corpus export streams from the Chroma server long enough for three
    # processes' writes of it to overlap.
    corpus = write_corpus(root / "corpus", documents=400)
    port = free_port()
    server_command = [chroma, "run", "--path", str(root / "chroma"), "--host", "127.0.0.1", "--port", str(port)]
    with (
        local_server(server_command, "/api/v2/heartbeat", port),
        FakeOpenAIServer(replier=server_replier, latency_s=0.1) as model,
    ):
        chroma_host = f"127.0.0.1:{port}"
        solo_workspace = Workspace.resolve(root / "solo")
        ingest(solo_workspace, corpus)  # the single process: embedded Chroma, its own workspace
        ingest(Workspace.resolve(root / "loader"), corpus, chroma_host)  # the shared collection
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("OPENAI_API_KEY", "sk-test-workers")
            patch.setenv("OPENAI_BASE_URL", model.base_url)
            patch.delenv("BENCHSMITH_DATABASE_URL", raising=False)
            benchsmith.synthesize(
                COLLECTION,
                conversations=SynthesisSetup.conversations,
                turns=3,
                llm="openai:sim",
                cluster_size=4,
                seed=3,
                concurrency=4,
                run_id="solo",
                workspace=solo_workspace.root,
            )
        yield SynthesisSetup(chroma_host, model, solo_workspace.run_dir("solo"))


def test_two_synthesis_workers_sharing_chroma_one_killed_give_the_single_process_files(
    tmp_path, database, synthesis, monkeypatch
):
    conversations = synthesis.conversations
    done_at_kill = share_and_kill_the_first(
        synthesis.shared_run(tmp_path / "first"),
        synthesis.environment(database),
        database,
        tmp_path / "second",
        at_least=6,
        total=conversations,
    )
    # A machine that joins after the end only writes the files (from the database and the server).
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-workers")
    monkeypatch.setenv("OPENAI_BASE_URL", synthesis.model.base_url)
    calls_with_workers = len(synthesis.model.requests)
    benchsmith.export("shared", database=database, workspace=tmp_path / "third")
    assert len(synthesis.model.requests) == calls_with_workers  # an export asks the model nothing

    assert items_done(database, "shared") == conversations
    attempts = item_attempts(database, "shared")
    # Done once each: only the conversations the killed worker held were taken over (a second attempt).
    assert sum(count > 1 for count in attempts.values()) <= 2 and done_at_kill >= 6
    for worker in ("second", "third"):
        assert_same_files(synthesis.solo_dir, tmp_path / worker / "runs" / "shared", SYNTHESIS_FILES)
        assert not (tmp_path / worker / "chroma").exists()  # the vectors came from the Chroma server


def child_processes(pid: int) -> list[int]:
    """The processes ``pid`` started (Linux)."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in children.read_text().split()] if children.exists() else []


def test_three_workers_in_one_workspace_one_killed_write_the_single_process_files(tmp_path, database, synthesis):
    """`benchsmith work RUN --workers 3` as the README shows it: three processes of one workspace
    write the run's files at once (each through its own temporary file; the corpus export streams
    from the Chroma server, a long write), one is SIGKILLed mid-run, and the files are byte for byte
    those of one process with the same seed."""
    conversations = synthesis.conversations
    shared_environment = synthesis.environment(database)
    # The run is started (and registered) by one process, killed once it has done an item.
    starter = start(synthesis.shared_run(tmp_path / "starter"), shared_environment)
    kill_when_done(starter, database, "shared", at_least=1, total=conversations)

    workers = start(
        [
            sys.executable,
            "-m",
            "benchsmith.cli",
            "work",
            "shared",
            "--workers",
            "3",
            "--concurrency",
            "2",
            "-w",
            str(tmp_path / "one"),
        ],
        shared_environment,
    )
    wait_until(database, "shared", 6, workers, timeout_s=120, also=lambda: len(child_processes(workers.pid)) >= 3)
    os.kill(child_processes(workers.pid)[0], signal.SIGKILL)
    assert items_done(database, "shared") < conversations, "the run finished before a worker could be killed"
    output, _ = workers.communicate(timeout=300)

    assert items_done(database, "shared") == conversations
    assert "1 of 3 workers failed (killed by SIGKILL)" in output and "the run is finished" in output, output
    assert workers.returncode == 0, output
    run_dir = tmp_path / "one" / "runs" / "shared"
    assert_same_files(synthesis.solo_dir, run_dir, SYNTHESIS_FILES)
    assert not list(run_dir.rglob("*.tmp"))  # every temporary renamed or removed
    assert json.loads((run_dir / "run.json").read_text())["status"] == "finished"
