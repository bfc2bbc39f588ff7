"""User text is printed as written, never read as console markup: ``[/x]`` in a path, a query id
or a model's reply reaches the terminal verbatim through every command that prints it (rich
would raise MarkupError on a closing tag nothing opened, and swallow ``[null, null]``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.errors import MarkupError
from typer.testing import CliRunner

from benchsmith.agents.seam.backends import ModelSettings, ScriptedBackend
from benchsmith.agents.seam.errors import InvalidOutput
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.cli import app
from benchsmith.graphs.runtime.resources import register_embedder, register_model
from tests.embedders import HashingEmbedder

runner = CliRunner(env={"COLUMNS": "400"})  # long paths on one line
MARKUP = "[/x]"
REPLY = "[null, null] [/x] [bold]"


def folder_with_markup(tmp_path: Path) -> Path:
    """A folder whose path holds ``[/x]`` (a folder ``a[`` holding ``x]b``)."""
    folder = tmp_path / f"a{MARKUP}b"
    folder.mkdir(parents=True)
    assert MARKUP in str(folder)
    return folder


def invoke(*arguments: str):
    result = runner.invoke(app, list(arguments))
    assert not isinstance(result.exception, MarkupError), result.exception
    return result, " ".join(result.output.split())


def commands(folder: Path) -> dict[str, tuple[list[str], Path]]:
    """Each command given an input under ``folder`` that it refuses (an empty file or folder),
    and the path its message must show."""
    (folder / "bench" / "qrels").mkdir(parents=True)
    for name in (
        "bench/corpus.jsonl",
        "bench/queries.jsonl",
        "bench/qrels/test.tsv",
        "empty.jsonl",
        "task1.csv",
        "Posts.xml",
    ):
        (folder / name).write_bytes(b"")
    (folder / "docs").mkdir()
    (folder / "docs" / "notes.md").write_text("# Notes\n\nUse sorted() to sort a list.\n", encoding="utf-8")
    (folder / "no-documents").mkdir()
    workspace = ["-w", str(folder / "ws")]
    return {
        "evaluate": (
            ["evaluate", str(folder / "bench"), "--retriever", "bm25", *workspace],
            folder / "bench" / "qrels" / "test.tsv",
        ),
        "evaluate --run": (
            ["evaluate", "--run", str(folder / "empty.jsonl"), "--qrels", str(folder / "empty.jsonl")],
            folder / "empty.jsonl",
        ),
        "audit": (["audit", str(folder / "bench"), *workspace], folder / "bench" / "qrels" / "test.tsv"),
        "nuggets": (
            ["nuggets", str(folder / "Posts.xml"), "--corpus", str(folder / "docs"), *workspace],
            folder / "Posts.xml",
        ),
        "select": (
            [
                "select",
                str(folder / "empty.jsonl"),
                "--corpus",
                str(folder / "docs"),
                "--retriever",
                "bm25",
                *workspace,
            ],
            folder / "empty.jsonl",
        ),
        "paraphrase": (["paraphrase", str(folder / "empty.jsonl"), *workspace], folder / "empty.jsonl"),
        "robustness": (["robustness", str(folder / "bench"), "--judge", "baseline", *workspace], folder / "bench"),
        "hardneg build": (["hardneg", "build", str(folder / "no-documents"), *workspace], folder / "no-documents"),
        "hardneg score": (["hardneg", "score", "--task1", str(folder / "task1.csv")], folder / "task1.csv"),
    }


@pytest.mark.parametrize(
    "command",
    [
        "evaluate",
        "evaluate --run",
        "audit",
        "nuggets",
        "select",
        "paraphrase",
        "robustness",
        "hardneg build",
        "hardneg score",
    ],
)
def test_a_path_with_markup_is_printed_verbatim_in_headers_and_errors(command, tmp_path):
    arguments, named = commands(folder_with_markup(tmp_path))[command]
    result, output = invoke(*arguments)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "error:" in output and str(named) in output.split("error:", 1)[1], output  # brackets and all


def test_the_workspace_path_with_markup_is_printed_verbatim_by_runs(tmp_path):
    workspace = folder_with_markup(tmp_path)
    result, output = invoke("runs", "-w", str(workspace))
    assert result.exit_code == 0 and f"no runs in {workspace}" in output, output


def test_query_ids_with_markup_are_printed_verbatim(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    (tmp_path / "system.run").write_text(f"q1 Q0 d1 1 2.0 t\n{MARKUP}q9 Q0 d1 1 2.0 t\n", encoding="utf-8")
    result, output = invoke(
        "evaluate", "--run", str(tmp_path / "system.run"), "--qrels", str(tmp_path / "qrels.txt"), "--measure", "AP"
    )
    assert result.exit_code == 0, result.output
    assert f"1 queries have no judgments and were not measured ('{MARKUP}q9')" in output, output


def test_a_configuration_named_with_markup_is_printed_verbatim_in_the_measure_table(tmp_path):
    qrels = folder_with_markup(tmp_path) / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    run = tmp_path / "[bold]system.run"  # a configuration is named by its run file
    run.write_text("q1 Q0 d1 1 2.0 t\n", encoding="utf-8")
    result, _ = invoke("evaluate", "--run", str(run), "--qrels", str(qrels), "--measure", "AP")
    assert result.exit_code == 0, result.output
    unwrapped = "".join(result.output.split())  # the table wraps its title at its width
    assert f"judgedqueries·{qrels}" in unwrapped and "[bold]system.run" in unwrapped, result.output


def test_a_model_reply_with_brackets_is_printed_verbatim_when_a_run_fails(tmp_path):
    """A reply that fails validation ends the run (one attempt); the message quotes it whole."""

    def reply(messages, schema):
        raise InvalidOutput(f"the reply {REPLY!r} is not a {schema.__name__}", reply=REPLY)

    # A registered seam keeps its own settings (--max-attempts reaches only the seams a job builds):
    # one attempt, or it would back off for about 20 s before giving up.
    model = register_model(
        "bracketed-replier", ModelSeam(ScriptedBackend(replier=reply), settings=ModelSettings(max_attempts=1))
    )
    turns = tmp_path / "turns.jsonl"
    turns.write_text(
        "".join(
            json.dumps(turn) + "\n"
            for turn in [
                {"id": "c1_t0", "conversation_id": "c1", "turn": 0, "question": "what is a fox", "gold_ids": ["d1"]},
                {
                    "id": "c1_t1",
                    "conversation_id": "c1",
                    "turn": 1,
                    "question": "where does it live",
                    "gold_ids": ["d1"],
                    "history": [{"question": "what is a fox", "answer": "an animal"}],
                },
            ]
        ),
        encoding="utf-8",
    )
    result, output = invoke(
        "paraphrase",
        str(turns),
        "--per-turn",
        "1",
        "--llm",
        model,
        "--max-attempts",
        "1",
        "--embedder",
        register_embedder(HashingEmbedder()),
        "--run-id",
        "reply",
        "-w",
        str(tmp_path / "ws"),
    )
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert REPLY in output, output  # brackets and all: nothing swallowed as a style
    assert "Resume with: benchsmith" in output and "--run-id reply" in output, output
