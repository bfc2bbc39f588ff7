"""Model specs a user mistypes or lacks are refused before any work, with what to do instead."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from benchsmith.cli import app
from tests.evaluate_fixtures import write_benchmark

runner = CliRunner(env={"COLUMNS": "200", "HF_HUB_OFFLINE": "1"})


def test_a_reranker_missing_from_this_machine_says_how_to_point_at_a_local_folder(tmp_path: Path):
    benchmark = write_benchmark(tmp_path / "bench")
    workspace = tmp_path / "ws"
    result = runner.invoke(
        app,
        [
            "evaluate",
            str(benchmark),
            "--retriever",
            "bm25",
            "--history",
            "current",
            "--rerank",
            "cross-encoder/no-such-model-here",
            "-w",
            str(workspace),
        ],
    )
    assert result.exit_code == 2, result.output
    output = " ".join(result.output.split())
    assert "cross-encoder/no-such-model-here" in output and "local sentence-transformers model folder" in output
    assert "Traceback" not in output and "OSError" not in output
    assert not (workspace / "runs").exists() or not any((workspace / "runs").iterdir())  # no run record


def test_a_file_given_as_a_reranker_folder_is_named(tmp_path: Path):
    benchmark = write_benchmark(tmp_path / "bench")
    model_file = tmp_path / "model.bin"
    model_file.write_bytes(b"\0")
    result = runner.invoke(
        app,
        [
            "evaluate",
            str(benchmark),
            "--retriever",
            "bm25",
            "--history",
            "current",
            "--rerank",
            str(model_file),
            "-w",
            str(tmp_path / "ws"),
        ],
    )
    assert result.exit_code == 2, result.output
    assert "not a model folder" in " ".join(result.output.split())


no_key = CliRunner(
    env={
        "COLUMNS": "200",
        "HF_HUB_OFFLINE": "1",
        "OPENAI_API_KEY": None,
        "OPENAI_BASE_URL": None,
        "OPENAI_API_BASE": None,
    }
)


def test_a_run_whose_model_has_no_key_stops_before_any_work(tmp_path: Path):
    benchmark = write_benchmark(tmp_path / "bench")
    workspace = tmp_path / "ws"
    result = no_key.invoke(app, ["audit", str(benchmark), "--judge", "openai:gpt-4o-mini", "-w", str(workspace)])
    assert result.exit_code == 2, result.output
    assert "OPENAI_API_KEY" in result.output and "Traceback" not in result.output
    assert not (workspace / "runs").exists() or not any((workspace / "runs").iterdir())


def test_a_dry_run_prices_the_run_and_says_the_key_is_missing(tmp_path: Path):
    benchmark = write_benchmark(tmp_path / "bench")
    result = no_key.invoke(
        app, ["audit", str(benchmark), "--judge", "openai:gpt-4o-mini", "--dry-run", "-w", str(tmp_path / "ws")]
    )
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "model calls" in output and "would stop at once" in output and "OPENAI_API_KEY" in output
