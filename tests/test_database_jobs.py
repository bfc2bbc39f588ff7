"""Jobs that keep their state in a real PostgreSQL with ``database=``: the run record in ``benchsmith_runs``, the checkpoints under the run id,
and (paraphrase) the model cache and usage ledger; what a rerun of the same run id in a new
workspace (another machine) does; and ``--database`` on the six commands."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

import benchsmith
from benchsmith.cli import app
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.graphs.runtime.runner import checkpoint_thread
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.postgres import connection as connection_to
from benchsmith.stores.persistence.postgres_runs import database_claim, find_run, save_run
from benchsmith.stores.persistence.runs import RunDirectory, RunRecord
from benchsmith.stores.persistence.vectors import VectorStore, open_client
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction
from tests.embedders import HashingEmbedder
from tests.ingest_fixtures import write_corpus
from tests.openai_server import FakeOpenAIServer
from tests.paraphrase_fixtures import server_replier, write_cast_files

BATCH_SIZE = 2
# (command words, the command's module, the job function it calls)
COMMANDS = [
    (["ingest"], "ingest", "run_ingest"),
    (["paraphrase"], "paraphrase", "run_paraphrase"),
    (["robustness"], "robustness", "run_robustness"),
    (["hardneg", "build"], "hardneg", "run_build"),
    (["nuggets"], "nuggets", "run_nuggets"),
    (["select"], "select", "run_selection"),
    (["evaluate"], "evaluate", "run_evaluation"),
    (["synthesize"], "synthesize", "run_synthesis"),
    (["audit"], "audit", "run_audit"),
]


def thread(run_id: str, workspace: Workspace) -> str:
    return checkpoint_thread(run_id, workspace, "postgresql://")


def checkpoint_threads(url: str) -> dict[str, int]:
    with connection_to(url) as connection:
        return dict(connection.execute("SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id").fetchall())


def count_rows(url: str, table: str, run_id: str | None = None) -> int:
    where = " WHERE run_id = %s" if run_id else ""
    with connection_to(url) as connection:
        return connection.execute(f"SELECT count(*) FROM {table}{where}", (run_id,) if run_id else ()).fetchone()[0]


def ingest(tmp_path: Path, workspace: str, url: str, embedder: HashingEmbedder):
    return benchsmith.ingest(
        [tmp_path / "corpus"],
        collection="docs",
        embedder=register_embedder(embedder),
        chunk_size=300,
        min_chars=50,
        batch_size=BATCH_SIZE,
        workspace=tmp_path / workspace,
        database=url,
        run_id="ingest-db",
    )


def stored_chunks(workspace: Path, embedder: HashingEmbedder) -> int:
    store = VectorStore(
        open_client(Workspace.resolve(workspace)), "docs", ChromaEmbeddingFunction(embedder), embedder.name
    )
    return store.collection.count()


def test_ingest_resumes_from_postgresql_and_a_new_workspace_starts_the_run_over(tmp_path, database):
    write_corpus(tmp_path / "corpus", documents=8)
    with pytest.raises(RuntimeError, match="injected embedding failure"):
        ingest(tmp_path, "first", database, HashingEmbedder(fail_on_call=3))  # two batches stored, then a crash
    first = Workspace.resolve(tmp_path / "first")
    assert RunDirectory(first, "ingest-db").load().status == "crashed"
    assert find_run(database, "ingest-db").status == "crashed"  # the database's record says so too
    # One thread for the run in this workspace.
    assert checkpoint_threads(database).keys() == {thread("ingest-db", first)}
    assert not first.checkpoints_path.exists()  # nothing of it in the workspace's SQLite

    resumed_embedder = HashingEmbedder()
    resumed = ingest(tmp_path, "first", database, resumed_embedder)
    assert resumed.resumed and not resumed.already_finished
    assert resumed_embedder.texts_embedded == resumed.indexed - 2 * BATCH_SIZE  # the stored batches are not redone
    recorded = find_run(database, "ingest-db")
    assert (recorded.job, recorded.status, recorded.summary["indexed"]) == ("ingest", "finished", resumed.indexed)
    again_embedder = HashingEmbedder()
    assert ingest(tmp_path, "first", database, again_embedder).already_finished and again_embedder.calls == 0

    # Another workspace (another machine): the run is its own there, with its own thread: done in
    # full (its collection and files are the workspace's own), leaving the first one's thread alone.
    elsewhere_embedder = HashingEmbedder()
    elsewhere = ingest(tmp_path, "second", database, elsewhere_embedder)
    assert not elsewhere.resumed and not elsewhere.already_finished
    assert elsewhere_embedder.texts_embedded == elsewhere.indexed == resumed.indexed
    assert stored_chunks(tmp_path / "second", elsewhere_embedder) == elsewhere.indexed
    assert find_run(database, "ingest-db").status == "finished"
    assert checkpoint_threads(database).keys() == {
        thread("ingest-db", first),
        thread("ingest-db", Workspace.resolve(tmp_path / "second")),
    }


def test_a_run_crashed_here_and_finished_elsewhere_resumes_with_this_workspaces_collection_complete(tmp_path, database):
    write_corpus(tmp_path / "corpus", documents=8)
    with pytest.raises(RuntimeError, match="injected embedding failure"):
        ingest(tmp_path, "first", database, HashingEmbedder(fail_on_call=3))
    ingest(tmp_path, "second", database, HashingEmbedder())
    embedder = HashingEmbedder()
    resumed = ingest(tmp_path, "first", database, embedder)
    assert stored_chunks(tmp_path / "first", embedder) == resumed.indexed


def paraphrase(files: dict[str, Path], workspace: Path, url: str):
    return benchsmith.paraphrase(
        [files["2019"], files["2020"]],
        per_turn=3,
        llm="openai:sim",
        min_similarity=0.3,
        embedder=register_embedder(HashingEmbedder()),
        concurrency=2,
        workspace=workspace,
        database=url,
        run_id="paraphrase-db",
    )


def test_paraphrase_keeps_model_cache_and_usage_in_postgresql_so_a_new_workspace_asks_the_model_nothing(
    tmp_path, database, monkeypatch
):
    files = write_cast_files(tmp_path / "cast")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-database-jobs")
    with FakeOpenAIServer(replier=server_replier) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        first = paraphrase(files, tmp_path / "first", database)
        asked = len(server.requests)
        assert asked > 0 and first.usage.calls == asked and first.usage.cached_calls == 0
        assert count_rows(database, "benchsmith_usage", "paraphrase-db") == asked
        assert count_rows(database, "benchsmith_llm_cache") > 0
        workspace = Workspace.resolve(tmp_path / "first")
        assert not workspace.llm_cache_path.exists() and not workspace.checkpoints_path.exists()
        recorded = find_run(database, "paraphrase-db")
        assert (recorded.job, recorded.status, recorded.summary["paraphrases"]) == (
            "paraphrase",
            "finished",
            first.paraphrases,
        )
        # One thread for the run in this workspace, as any job's.
        assert checkpoint_threads(database).keys() == {thread("paraphrase-db", workspace)}

        # Another workspace (another machine) runs the same run id as its own, with its own thread:
        # the model cache in PostgreSQL answers every call, so the model is asked nothing again.
        elsewhere = paraphrase(files, tmp_path / "second", database)
        assert not elsewhere.resumed and not elsewhere.already_finished
        assert len(server.requests) == asked
        assert checkpoint_threads(database).keys() == {
            thread("paraphrase-db", workspace),
            thread("paraphrase-db", Workspace.resolve(tmp_path / "second")),
        }
    for kind in ("paraphrases", "diversity"):
        assert elsewhere.files[kind].read_bytes() == first.files[kind].read_bytes(), kind


@pytest.mark.parametrize("words", [words for words, _, _ in COMMANDS], ids=" ".join)
def test_each_command_lists_database(words):
    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, [*words, "--help"])
    assert result.exit_code == 0, result.output
    assert "--database" in result.output and "BENCHSMITH_DATABASE_URL" in result.output


@pytest.mark.parametrize(("words", "module", "job"), COMMANDS, ids=[" ".join(words) for words, _, _ in COMMANDS])
def test_each_command_passes_database_on_to_its_job(words, module, job, tmp_path, monkeypatch):
    received: dict = {}

    def stand_in(**arguments):
        received.update(arguments)
        raise InputError("stopped by the test")

    # The module itself: benchsmith.cli.select is the command function of that name.
    monkeypatch.setattr(importlib.import_module(f"benchsmith.cli.{module}"), job, stand_in)
    inputs = {
        "ingest": ["docs"],
        "paraphrase": ["topics.json"],
        "robustness": ["paraphrase-run"],
        "hardneg": ["docs"],
        "nuggets": ["questions.jsonl", "--corpus", "docs"],
        "select": ["queries.txt", "--corpus", "docs"],
        "evaluate": ["bench"],
        "synthesize": ["--collection", "docs"],
        "audit": ["bench"],
    }[words[0]]
    url = "postgresql://user@db.example:5432/bench"
    result = CliRunner(env={"COLUMNS": "200"}).invoke(
        app, [*words, *inputs, "--database", url, "-w", str(tmp_path / "ws")]
    )
    assert "stopped by the test" in result.output and result.exit_code == 2, result.output
    assert received["database"] == url


def test_bad_input_a_new_run_meets_in_its_first_step_leaves_no_record_here_or_in_the_database(tmp_path, database):
    """The database holds a run's record from its start: an ingest whose corpus is bad is forgotten
    there too, and its run id is free; another workspace's record of the same id is not touched."""
    (tmp_path / "bad.jsonl").write_text('{"_id": "d1", "text": "fine"}\n{"_id": "d2"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.jsonl:2: missing 'text'"):
        benchsmith.ingest(
            [tmp_path / "bad.jsonl"],
            workspace=tmp_path / "ws",
            database=database,
            run_id="bad-run",
            embedder=register_embedder(HashingEmbedder()),
        )
    assert find_run(database, "bad-run") is None and count_rows(database, "benchsmith_workers", "bad-run") == 0
    assert not RunDirectory(Workspace.resolve(tmp_path / "ws"), "bad-run").exists()

    write_corpus(tmp_path / "corpus", documents=4)
    ingest(tmp_path, "first", database, HashingEmbedder())  # run ingest-db, finished, from another workspace
    with pytest.raises(InputError, match="other settings"):  # the same id, another corpus: not this run
        benchsmith.ingest(
            [tmp_path / "bad.jsonl"],
            collection="docs",
            embedder=register_embedder(HashingEmbedder()),
            chunk_size=300,
            min_chars=50,
            batch_size=BATCH_SIZE,
            workspace=tmp_path / "second",
            database=database,
            run_id="ingest-db",
        )
    for document in (tmp_path / "corpus").iterdir():  # the same settings, and a corpus gone empty
        document.unlink()
    with pytest.raises(InputError, match="empty corpus"):
        ingest(tmp_path, "second", database, HashingEmbedder())
    assert find_run(database, "ingest-db").status == "finished"  # the other workspace's record is untouched
    assert not RunDirectory(Workspace.resolve(tmp_path / "second"), "ingest-db").exists()


def test_runs_lists_the_database_runs_with_the_process_that_drives_each(database):
    """`benchsmith runs --database`: a running run whose claim a live process holds names it; a
    running run nobody holds (its process died without a word) is stalled; a finished one is finished."""
    for run_id, status in (("held", "running"), ("orphan", "running"), ("done", "finished")):
        save_run(database, RunRecord(run_id=run_id, job="synthesize", status=status))
    with database_claim(database, "held"):
        result = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["runs", "--database", database])
    assert result.exit_code == 0, result.output
    rows = {
        line.split()[1]: line
        for line in result.output.splitlines()
        if line.split()[1:2] in (["held"], ["orphan"], ["done"])
    }
    assert "running" in rows["held"] and f"process {os.getpid()} on host" in rows["held"]
    assert "stalled" in rows["orphan"] and "finished" in rows["done"]
