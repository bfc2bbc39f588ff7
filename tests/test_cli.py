"""The command line as a user meets it: messages, exit codes, resumable runs."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchsmith.cli import app
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.vectors import VectorStore, open_client
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction
from tests.embedders import HashingEmbedder
from tests.ingest_fixtures import ingest, write_corpus
from tests.openai_server import FakeOpenAIServer
from tests.stdlib_vectors import seed_stdlib_vectors

runner = CliRunner(env={"COLUMNS": "200"})  # tables and paths on one line


def invoke(*arguments: str):
    return runner.invoke(app, list(arguments))


def test_missing_path_exits_2_naming_it(tmp_path):
    result = invoke("ingest", str(tmp_path / "missing"), "-w", str(tmp_path / "ws"))
    assert result.exit_code == 2
    assert "missing: no such file or directory" in result.output
    assert "Traceback" not in result.output


def test_malformed_jsonl_exits_2_naming_file_and_line(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "a", "text": "ok"}\n{"_id": "b", "text": "broken"\n', encoding="utf-8")
    result = invoke("ingest", str(corpus), "-w", str(tmp_path / "ws"), "--run-id", "bad")
    assert result.exit_code == 2
    assert "corpus.jsonl:2: malformed JSON" in result.output


def test_empty_corpus_exits_2(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "blank.txt").write_text("", encoding="utf-8")
    result = invoke("ingest", str(tmp_path / "docs"), "-w", str(tmp_path / "ws"))
    assert result.exit_code == 2 and "empty corpus" in result.output


def test_bad_options_exit_2(tmp_path):
    assert invoke("ingest", str(tmp_path), "--quality", "vibes").exit_code == 2
    result = invoke("ingest", str(tmp_path), "--quality", "llm", "--llm", "nonsense:model")
    assert result.exit_code == 2 and "unknown model spec" in result.output


def test_dry_run_counts_and_writes_nothing(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", documents=5)
    workspace = tmp_path / "ws"
    result = invoke(
        "ingest",
        str(corpus),
        "--dry-run",
        "-w",
        str(workspace),
        "--chunk-size",
        "300",
        "--quality",
        "llm",
        "--llm",
        "openai:gpt-4o-mini",
    )
    assert result.exit_code == 0, result.output
    assert "5 files read" in result.output and "model calls" in result.output
    assert not workspace.exists()


def test_dry_run_names_the_files_it_would_skip(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", documents=3)
    (corpus / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    (corpus / "conf.py").write_text("project = 'x'\n", encoding="utf-8")
    result = invoke("ingest", str(corpus), "--dry-run", "-w", str(tmp_path / "ws"))
    assert result.exit_code == 0, result.output
    assert "2 skipped" in result.output
    assert "logo.png" in result.output and "conf.py" in result.output


def test_runs_lists_status_and_items(tmp_path):
    workspace = Workspace.resolve(tmp_path / "ws")
    ingest(workspace, "listed", [str(write_corpus(tmp_path / "corpus", documents=4))], HashingEmbedder())
    result = invoke("runs", "-w", str(workspace.root))
    assert result.exit_code == 0
    assert "listed" in result.output and "finished" in result.output and "chunks" in result.output


def test_help_explains_the_commands():
    result = invoke("--help")
    assert result.exit_code == 0
    for command in (
        "ingest",
        "cluster",
        "synthesize",
        "evaluate",
        "paraphrase",
        "robustness",
        "demo",
        "runs",
        "studio",
    ):
        assert command in result.output


def benchsmith(*arguments: str, workspace: Path, environment: dict[str, str] | None = None) -> subprocess.Popen:
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **(environment or {})}
    return subprocess.Popen(
        [sys.executable, "-m", "benchsmith.cli", *arguments, "-w", str(workspace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=environment,
        cwd=Path(__file__).resolve().parent.parent,
    )


@pytest.mark.slow
def test_sigkill_during_embedding_then_resume(tmp_path, monkeypatch):
    """A real kill -9 mid-embedding; the rerun stores every chunk once and embeds only the rest.

    The chunks are embedded by the loopback embedding server (``openai:hash``), each batch a request
    answered after a delay, so the kill lands mid-embedding without loading a model (torch). The
    store takes them in groups of up to 4,096 (tools/retrieval/indexing.py), so at the kill it may hold none of
    them: what was embedded is in the embedding cache, and the rerun asks the server only for the rest."""
    corpus = write_corpus(tmp_path / "corpus", documents=30)  # 90 chunks: the kill comes after 16
    workspace = Workspace.resolve(tmp_path / "ws")
    arguments = (
        "ingest",
        str(corpus),
        "--collection",
        "docs",
        "--run-id",
        "killed",
        "--batch-size",
        "8",
        "--chunk-size",
        "300",
        "--min-chars",
        "50",
        "--embedder",
        "openai:hash",
    )
    with FakeOpenAIServer(latency_s=0.1) as server:
        environment = {"OPENAI_BASE_URL": server.base_url}
        process = benchsmith(*arguments, workspace=workspace.root, environment=environment)
        run_dir = RunDirectory(workspace, "killed")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            progress = run_dir.load().progress.get("embed", {}) if run_dir.exists() else {}
            if progress.get("done", 0) >= 16:
                break
            assert process.poll() is None, process.stdout.read()
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
        total = progress["total"]
        assert progress["done"] < total, "the run finished before it could be killed"

        store = VectorStore(open_client(workspace), "docs", ChromaEmbeddingFunction(spec="openai:hash"), "openai:hash")
        stored_at_kill = store.count()
        assert stored_at_kill < total

        embedded_before_resume = -1
        while server.embedded_texts != embedded_before_resume:  # the killed run's request in flight answered
            embedded_before_resume = server.embedded_texts
            time.sleep(0.5)  # five times the server's latency
        resumed = benchsmith(*arguments, workspace=workspace.root, environment=environment)
        output, _ = resumed.communicate(timeout=300)
        assert resumed.returncode == 0, output
        assert "resumed from its last checkpoint" in output
        record = run_dir.load()
        assert record.status == "finished"
        assert record.summary["newly_embedded"] == total - stored_at_kill
        # The texts embedded before the kill (at least the 16 it reported) come from the cache.
        assert server.embedded_texts - embedded_before_resume <= total - 16
        kept_ids = [json.loads(line)["id"] for line in run_dir.file("kept.jsonl").read_text().splitlines()]
        assert sorted(store.collection.get(include=[])["ids"]) == sorted(kept_ids)

        # Run again, it reports the finished run (in this process: it only reads the run record).
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        again = invoke(*arguments, "-w", str(workspace.root))
        assert again.exit_code == 0 and "already finished; nothing redone" in again.output, again.output


@pytest.fixture(scope="module")
def clustered_workspace(tmp_path_factory) -> Workspace:
    from tests.synthesis_fixtures import build_collection

    root = tmp_path_factory.mktemp("cli-synthesis")
    workspace = Workspace.resolve(root / "ws")
    build_collection(workspace, root / "corpus")
    return workspace


def test_cluster_prints_the_path_quality(clustered_workspace):
    result = invoke("cluster", "--collection", "docs", "--size", "4", "-w", str(clustered_workspace.root))
    assert result.exit_code == 0, result.output
    assert "clusters" in result.output and "mean similarity of consecutive chunks" in result.output


def test_cluster_and_synthesize_name_a_missing_collection(clustered_workspace):
    for command in (["cluster", "--collection", "nope"], ["synthesize", "--collection", "nope"]):
        result = invoke(*command, "-w", str(clustered_workspace.root))
        assert result.exit_code == 2 and "no collection 'nope'" in result.output


def test_synthesize_dry_run_counts_calls_and_calls_nothing(clustered_workspace):
    runs_before = set(clustered_workspace.runs_dir.iterdir())
    result = invoke(
        "synthesize",
        "--collection",
        "docs",
        "--conversations",
        "5",
        "--turns",
        "3",
        "--llm",
        "openai:gpt-4o-mini",
        "--dry-run",
        "-w",
        str(clustered_workspace.root),
    )
    assert result.exit_code == 0, result.output
    assert f"{5 * (3 * 3 - 1)} model calls" in result.output and "$" in result.output
    assert set(clustered_workspace.runs_dir.iterdir()) == runs_before


def test_synthesize_offline_then_report_the_finished_run(clustered_workspace):
    arguments = (
        "synthesize",
        "--collection",
        "docs",
        "--conversations",
        "4",
        "--turns",
        "3",
        "--cluster-size",
        "4",
        "--run-id",
        "cli-synth",
        "-w",
        str(clustered_workspace.root),
    )
    first = invoke(*arguments)
    assert first.exit_code == 0, first.output
    assert "Benchmark statistics" in first.output and "tokens per question" in first.output
    assert "most used question frame" in first.output and "most used question type" in first.output
    # 4 conversations of 3 turns: too small a benchmark to rank retrievers, and the summary says so
    assert "fewer than 25: too few to rank retrievers" in " ".join(first.output.split())
    again = invoke(*arguments)
    assert again.exit_code == 0 and "already finished; nothing redone" in again.output
    too_many = invoke(
        "synthesize",
        "--collection",
        "docs",
        "--conversations",
        "500",
        "--cluster-size",
        "4",
        "-w",
        str(clustered_workspace.root),
    )
    assert too_many.exit_code == 2 and "ask for at most" in too_many.output


@pytest.mark.slow
def test_demo_runs_every_job_offline_and_ends_with_the_evaluation_report(tmp_path):
    """The README's first command, as a new user runs it (real embedder, baseline agents), in a
    workspace that already holds the model's vectors of the stdlib chunks (tests/stdlib_vectors.py:
    embedding them is two of the demo's two and a half minutes; the README test embeds from scratch)."""
    seed_stdlib_vectors(tmp_path / "ws")
    process = benchsmith("demo", workspace=tmp_path / "ws")
    output, _ = process.communicate(timeout=900)
    assert process.returncode == 0, output
    report = tmp_path / "ws" / "runs" / "demo-evaluate" / "report.html"
    assert report.exists() and "data:image/png;base64," in report.read_text(encoding="utf-8")
    results = json.loads((report.parent / "results.json").read_text(encoding="utf-8"))
    assert sorted(results["aggregate"]) == sorted(
        f"{retriever}@{history}"
        for history in ("full", "oracle")
        for retriever in ("dense", "bm25", "hybrid:rrf(dense,bm25)")
    )
    # 30 conversations of 4 turns; a turn the quality gate refused in every attempt is dropped and counted
    gate = json.loads((tmp_path / "ws" / "runs" / "demo-synthesize" / "stats.json").read_text())["quality_gate"]
    kept = gate["turns_kept"]
    assert kept + gate["turns_dropped"] == 120 and kept >= 0.9 * 120
    assert results["benchmark"]["queries"] == kept and set(results["by_switch"]["bm25@full"]) >= {"start", "follow-up"}
    assert "report.html" in output and "hybrid:rrf(dense,bm25)@oracle" in output
    assert f"{kept} kept" in output  # the gate's counts in the synthesis table
    diversity = json.loads((tmp_path / "ws" / "runs" / "demo-paraphrase" / "diversity.json").read_text())
    assert diversity["turns"] == kept and diversity["generated_before_filtering"]["paraphrases"] == 2 * kept
    robustness = json.loads((tmp_path / "ws" / "runs" / "demo-robustness" / "robustness.json").read_text())
    assert robustness["sets"] == ["original", "R1", "R2"] and "bm25@oracle" in robustness["by_configuration"]


@pytest.mark.parametrize("words", [["runs"], ["synthesize"], ["hardneg", "build"]], ids=" ".join)
def test_help_paragraphs_are_reflowed_not_broken_where_the_source_wraps(words):
    """A docstring paragraph spans several source lines; --help joins them so the terminal wraps
    them (Typer kept the source's breaks: at 80 columns sentences broke twice)."""
    import inspect

    from benchsmith.cli import app as cli_app

    result = CliRunner(env={"COLUMNS": "400"}).invoke(cli_app, [*words, "--help"])
    assert result.exit_code == 0, result.output
    command = next(
        info
        for info in (
            [*cli_app.registered_commands]
            + [c for group in cli_app.registered_groups for c in group.typer_instance.registered_commands]
        )
        if info.callback.__name__ == words[-1]
    )
    paragraph = inspect.cleandoc(command.callback.__doc__).split("\n\n")[1]
    assert "\n" in paragraph  # the source wraps it
    assert " ".join(paragraph.split("\n"))[:150] in result.output.replace("\n", "\x00")  # on one output line


def test_synthesize_by_default_fits_a_collection_with_fewer_clusters(clustered_workspace):
    # a new user's first run on a small tree: the default number of conversations fits, and says so; a number
    # asked for is never cut (above)
    result = invoke(
        "synthesize",
        "--collection",
        "docs",
        "--turns",
        "2",
        "--cluster-size",
        "8",
        "--run-id",
        "cli-synth-default",
        "-w",
        str(clustered_workspace.root),
    )
    assert result.exit_code == 0, result.output
    fitted = re.search(r"synthesizing (\d+) conversations, not the default 20", " ".join(result.output.split()))
    assert fitted is not None, result.output
    dialogues = clustered_workspace.runs_dir / "cli-synth-default" / "dialogues.jsonl"
    assert len(dialogues.read_text().splitlines()) == int(fitted[1]) < 20
    # the dry run prices the conversations the run will make, not the default's 20
    dry = invoke(
        "synthesize", "--collection", "docs", "--turns", "2", "--cluster-size", "8", "--dry-run",
        "-w", str(clustered_workspace.root),
    )  # fmt: skip
    assert dry.exit_code == 0 and f"dry run: {fitted[1]} conversations × 2 turns" in " ".join(dry.output.split())
