"""Run records tell the truth: a run that dies is crashed or interrupted, never running; a
setting that cannot work is refused before any run entry exists."""

import json
import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest
from typer.testing import CliRunner

import benchsmith
from benchsmith.agents.seam.backends import ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.cli import app
from benchsmith.graphs.audit.graph import builder as audit_builder
from benchsmith.graphs.contexts.audit import AuditContext
from benchsmith.graphs.contexts.paraphrase import ParaphraseContext
from benchsmith.graphs.contexts.synthesize import SynthesisContext
from benchsmith.graphs.paraphrase.graph import builder as paraphrase_builder
from benchsmith.graphs.runtime.resources import register_embedder, register_model
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.graphs.synthesis.run import builder as synthesis_builder
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.runs import RunDirectory, list_runs
from benchsmith.stores.persistence.workspace import Workspace
from tests.audit_fixtures import judge_reply, write_audit_benchmark
from tests.embedders import HashingEmbedder
from tests.ingest_fixtures import write_corpus
from tests.ingest_processes import ROOT, start_ingest, wait_until_embedding
from tests.local_servers import free_port
from tests.openai_server import FakeOpenAIServer
from tests.paraphrase_fixtures import scripted_reply as paraphrase_reply
from tests.paraphrase_fixtures import server_replier as paraphrase_server_reply
from tests.paraphrase_fixtures import write_cast_files
from tests.postgres_server import PostgresUnavailable, running_postgres
from tests.synthesis_fixtures import COLLECTION, build_collection
from tests.synthesis_fixtures import scripted_reply as synthesis_reply

runner = CliRunner(env={"COLUMNS": "200"})


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["ingest", "{corpus}", "--quality", "llm"], "--quality llm asks a model"),
        (["ingest", "{corpus}", "--collection", "x"], "invalid collection name 'x'"),
        (["ingest", "{corpus}", "--llm", "nonsense:model"], "unknown model spec"),
        (["ingest", "{corpus}", "--run-id", ".hidden"], "invalid run id"),
        (["synthesize", "--collection", "missing-collection"], "no collection 'missing-collection'"),
        (["ingest", "{corpus}", "--structured-output", "xml"], "structured output 'xml' is not one of"),
        (["synthesize", "--collection", "docs", "--switch-rate", "1.5"], "Invalid value for '--switch-rate'"),
        (["evaluate", "{tmp}/nowhere", "--retriever", "bm25"], "not a BEIR directory"),
        (["evaluate", "{tmp}/nowhere", "--significance-test", "coin-flip"], "--significance-test must be one of"),
        (["audit", "{tmp}/nowhere", "--judge", "baseline", "--judge", "baseline"], "each --judge may be given once"),
    ],
)
def test_settings_that_cannot_work_are_refused_before_any_run_exists(tmp_path, arguments, message):
    corpus = write_corpus(tmp_path / "corpus", documents=2)
    workspace = tmp_path / "ws"
    filled = [argument.format(corpus=corpus, tmp=tmp_path) for argument in arguments]
    result = runner.invoke(app, [*filled, "-w", str(workspace)])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not list((workspace / "runs").glob("*")) if workspace.exists() else True


def test_the_api_refuses_the_same_way(tmp_path):
    with pytest.raises(InputError, match="quality=llm asks a model"):
        benchsmith.ingest([tmp_path], quality="llm", workspace=tmp_path / "ws")
    assert list_runs(Workspace.resolve(tmp_path / "ws")) == []


@pytest.mark.slow
def test_a_terminated_run_is_crashed_and_a_killed_one_interrupted(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", documents=20)  # 120 chunks: 30 batches of 4
    workspace = Workspace.resolve(tmp_path / "ws")

    with FakeOpenAIServer(latency_s=1.0) as for_terminated, FakeOpenAIServer(latency_s=1.0) as for_killed:
        terminated = start_ingest(corpus, workspace.root, "terminated", for_terminated)
        killed = start_ingest(corpus, workspace.root, "killed", for_killed)  # both at once: half the wait
        try:
            wait_until_embedding(RunDirectory(workspace, "terminated"), terminated, for_terminated)
            terminated.send_signal(signal.SIGTERM)  # the embedding node stops at its next batch
            wait_until_embedding(RunDirectory(workspace, "killed"), killed, for_killed)
            killed.send_signal(signal.SIGKILL)
            terminated.wait(timeout=60)
            killed.wait(timeout=60)
        finally:
            for process in (terminated, killed):
                if process.poll() is None:
                    process.kill()
                    process.wait()
            for process in (terminated, killed):
                process.stdout.close()
    record = RunDirectory(workspace, "terminated").load()
    assert record.status == "crashed" and "SIGTERM" in record.error
    # It stopped at its next batch instead of embedding the 30 batches to the end first.
    assert len(for_terminated.embedding_requests) < 30 // 2, len(for_terminated.embedding_requests)
    record = RunDirectory(workspace, "killed").load()
    assert record.status == "running" and record.effective_status() == "interrupted"

    listing = runner.invoke(app, ["runs", "-w", str(workspace.root)])
    assert listing.exit_code == 0
    assert "interrupted" in listing.output and "crashed" in listing.output and "running" not in listing.output
    assert "resume with: benchsmith ingest" in listing.output and "--run-id killed" in listing.output


# ---------------------------------------------------------------------------------------
# A resumed run's summary is the whole run's: a run that crashed on the Nth model call and
# was resumed records the same run.json summary as one that never stopped.


def crashing_seam(
    replier, crash_on_call: int | None, model: str = "scripted", *, slow: bool | None = None
) -> ModelSeam:
    """A scripted model whose call ``crash_on_call`` raises at once (None: never). In a run that
    crashes (``slow``; default: this seam crashes) each other call takes a moment: the items in
    flight beside the crash finish after it, their records written but their step never
    checkpointed, as when a process dies. Runs that do not crash get their answers at once."""

    def slowly(messages, schema):
        time.sleep(0.05)
        return replier(messages, schema)

    answer = slowly if (crash_on_call is not None if slow is None else slow) else replier
    replies = (
        []
        if crash_on_call is None
        else [*[answer] * (crash_on_call - 1), RuntimeError(f"model crashed on call {crash_on_call}")]
    )
    return ModelSeam(ScriptedBackend(replies=replies, replier=answer, model=model))


def run_synthesis(root: Path, run_id: str, crash_on_call: int | None, database: str | None = None):
    workspace = Workspace.resolve(root / "ws")
    if not RunDirectory(workspace, "ingest").exists():
        build_collection(workspace, root / "corpus")
    llm = register_model(f"scripted-{run_id}", crashing_seam(synthesis_reply, crash_on_call))
    context = SynthesisContext(workspace=str(workspace.root), llm=llm, cluster_size=4, concurrency=2, database=database)
    return run_job(
        synthesis_builder,
        job="synthesize",
        workspace=workspace,
        run_id=run_id,
        inputs={"run_id": run_id, "collection": COLLECTION, "conversations": 8, "turns": 4},
        context=context,
        settings={},
        max_concurrency=2,
        database=database,
    )


def run_audit(root: Path, run_id: str, crash_on_call: int | None, database: str | None = None):
    workspace = Workspace.resolve(root / "ws")
    turns, corpus = write_audit_benchmark(root / "bench")
    judges = {
        "scripted:judge-a": crashing_seam(judge_reply, crash_on_call, "judge-a"),
        "scripted:judge-b": crashing_seam(
            partial(judge_reply, strict=True), None, "judge-b", slow=crash_on_call is not None
        ),
    }
    for spec, seam in judges.items():
        register_model(spec, seam)
    context = AuditContext(
        workspace=str(workspace.root),
        corpus=str(corpus),
        embedder=register_embedder(HashingEmbedder()),
        database=database,
    )
    return run_job(
        audit_builder,
        job="audit",
        workspace=workspace,
        run_id=run_id,
        inputs={"run_id": run_id, "benchmark": str(turns), "judges": list(judges)},
        context=context,
        settings={},
        max_concurrency=2,
        database=database,
    )


def run_paraphrase(root: Path, run_id: str, crash_on_call: int | None, database: str | None = None):
    workspace = Workspace.resolve(root / "ws")
    files = write_cast_files(root / "cast")
    context = ParaphraseContext(
        workspace=str(workspace.root),
        llm=register_model(f"scripted-paraphraser-{run_id}", crashing_seam(paraphrase_reply, crash_on_call)),
        embedder=register_embedder(HashingEmbedder()),
        min_similarity=0.3,
        per_turn=4,
        test_sets=3,
        import_ecast=str(files["ecast"]),
        database=database,
    )
    return run_job(
        paraphrase_builder,
        job="paraphrase",
        workspace=workspace,
        run_id=run_id,
        inputs={"run_id": run_id, "benchmarks": [str(files["2019"]), str(files["2020"])]},
        context=context,
        settings={},
        max_concurrency=2,
        database=database,
    )


RUNS = {"synthesize": run_synthesis, "audit": run_audit, "paraphrase": run_paraphrase}
CRASHED = 3  # the exit status of a child whose run crashed as injected


def crash_in_child(*runs: str) -> None:
    """In a process of its own (another worker, as a rerun of the command is): each run given as
    JOB ROOT CRASH_ON_CALL DATABASE crashes on that model call, and a line says so."""
    for job, root, crash_on_call, database in zip(*[iter(runs)] * 4):
        try:
            RUNS[job](Path(root), "resumed", int(crash_on_call), database)
        except RuntimeError as error:
            if f"call {crash_on_call}" not in str(error):
                raise
            print(f"{job}: crashed on call {crash_on_call} as injected", flush=True)
    sys.exit(CRASHED)


def recorded_summary(root: Path, run_id: str) -> dict:
    """run.json's summary, the run's own id and folder written as RUN (they differ by design)."""
    record = RunDirectory(Workspace.resolve(root / "ws"), run_id).load()
    assert record.status == "finished"
    text = json.dumps(record.summary, sort_keys=True)
    return json.loads(
        text.replace(str(Workspace.resolve(root / "ws").run_dir(run_id)), "RUN").replace(f'"{run_id}"', '"RUN"')
    )


CRASHES = [("synthesize", 41), ("audit", 30), ("paraphrase", 9)]


def assert_same_summary(root: Path, job: str, database: str | None = None) -> None:
    whole, resumed = recorded_summary(root, "whole"), recorded_summary(root, "resumed")
    assert resumed == whole
    assert any(isinstance(value, int) and value > 0 for value in whole.values())  # it counts something
    # The result a finished run reports again is the recorded summary.
    record = RunDirectory(Workspace.resolve(root / "ws"), "resumed").load()
    assert RUNS[job](root, "resumed", None, database).values == record.summary


@pytest.mark.slow
@pytest.mark.parametrize("job, crash_on_call", CRASHES, ids=[job for job, _ in CRASHES])
def test_a_run_resumed_after_a_crash_records_the_summary_of_an_uninterrupted_run(tmp_path, job, crash_on_call):
    run = RUNS[job]
    run(tmp_path, "whole", None)
    with pytest.raises(RuntimeError, match=f"call {crash_on_call}"):
        run(tmp_path, "resumed", crash_on_call)
    assert RunDirectory(Workspace.resolve(tmp_path / "ws"), "resumed").load().status == "crashed"
    assert run(tmp_path, "resumed", None).resumed
    assert_same_summary(tmp_path, job)


def new_database(server_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')
    return server_url.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(scope="module")
def crashed_in_another_process(tmp_path_factory, postgres_url) -> dict[str, tuple[Path, str, str]]:
    """Per job: its root, its database and the output of the one other process in which the
    database run ``resumed`` of every job crashed (one process for the three: its imports are
    paid once)."""
    runs = {
        job: (tmp_path_factory.mktemp(f"shared-{job}"), new_database(postgres_url, f"t_shared_resume_{job}"))
        for job, _ in CRASHES
    }
    arguments = [
        str(value) for job, crash_on_call in CRASHES for value in (job, runs[job][0], crash_on_call, runs[job][1])
    ]
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from tests.test_run_records import crash_in_child; crash_in_child(*sys.argv[1:])",
            *arguments,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    output = f"exit status {child.returncode}\n{child.stdout}{child.stderr}"
    return {job: (root, database, output) for job, (root, database) in runs.items()}


@pytest.mark.slow
@pytest.mark.parametrize("job, crash_on_call", CRASHES, ids=[job for job, _ in CRASHES])
def test_database_resume_counts_whole_run(crashed_in_another_process, job, crash_on_call):
    """A run in the database crashed in another process and resumed in this one: what one process
    counted in its state is not the run's, the summary counts the whole run."""
    root, database, child_output = crashed_in_another_process[job]
    assert f"exit status {CRASHED}\n" in child_output, child_output
    assert f"{job}: crashed on call {crash_on_call} as injected" in child_output, child_output
    record = RunDirectory(Workspace.resolve(root / "ws"), "resumed").load()
    assert record.status == "crashed" and f"call {crash_on_call}" in record.error
    run = RUNS[job]
    run(root, "whole", None, database)
    run(root, "resumed", None, database)
    assert_same_summary(root, job, database)


# ---------------------------------------------------------------------------------------
# A run whose database goes away is recorded as crashed with the reason, never left running.


def stop_database(url: str) -> None:
    """Shut the server down at once (fast shutdown: every session is cut), as when it fails."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        data = connection.execute("SHOW data_directory").fetchone()[0]
    postmaster = int((Path(data) / "postmaster.pid").read_text().split()[0])
    os.kill(postmaster, signal.SIGINT)


@pytest.mark.slow
def test_a_run_whose_database_fails_is_recorded_crashed_and_the_cli_says_so(tmp_path):
    try:
        server = running_postgres()
        url = server.__enter__()
    except PostgresUnavailable as reason:
        pytest.skip(str(reason))
    try:
        files = write_cast_files(tmp_path / "cast")
        calls = {"count": 0}

        def replier(request: dict) -> dict:
            calls["count"] += 1
            if calls["count"] == 6:
                stop_database(url)
            return paraphrase_server_reply(request)

        with FakeOpenAIServer(replier=replier) as model:
            result = CliRunner(
                env={"COLUMNS": "300", "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": model.base_url}
            ).invoke(
                app,
                [
                    "paraphrase",
                    str(files["2019"]),
                    "--llm",
                    "openai:sim",
                    "--per-turn",
                    "3",
                    "--min-similarity",
                    "0",
                    "--concurrency",
                    "1",
                    "--database",
                    url,
                    "--run-id",
                    "lost",
                    "--embedder",
                    register_embedder(HashingEmbedder()),
                    "-w",
                    str(tmp_path / "ws"),
                ],
            )
    finally:
        server.__exit__(None, None, None)
    record = RunDirectory(Workspace.resolve(tmp_path / "ws"), "lost").load()
    assert record.status == "crashed" and record.error, record
    assert result.exit_code == 1, result.output
    assert "run lost failed" in result.output and "recorded as crashed" in result.output, result.output
    assert str(RunDirectory(Workspace.resolve(tmp_path / "ws"), "lost").record_path) in result.output.replace("\n", "")


def test_a_run_whose_database_cannot_be_reached_stops_before_it_exists(tmp_path):
    """The run's claim is taken in the database before the run starts: an unreachable database
    stops the command with exit 2 and leaves no run record to resume."""
    closed = f"postgresql://postgres@127.0.0.1:{free_port()}/postgres"  # nothing listens there
    files = write_cast_files(tmp_path / "cast")
    result = runner.invoke(
        app,
        [
            "paraphrase",
            str(files["2019"]),
            "--llm",
            "baseline",
            "--database",
            closed,
            "--run-id",
            "unreached",
            "-w",
            str(tmp_path / "ws"),
        ],
    )
    assert result.exit_code == 2 and "cannot connect to the database" in result.output, result.output
    assert not RunDirectory(Workspace.resolve(tmp_path / "ws"), "unreached").exists()
