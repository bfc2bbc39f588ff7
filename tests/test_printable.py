"""Control characters in user text are shown as escapes wherever user text reaches a person: the
terminal (file names, errors, listings) and the reports (benchsmith/printable.py, the one helper)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from benchsmith.cli import app
from benchsmith.printable import printable

runner = CliRunner(env={"COLUMNS": "400"})
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what a terminal would act on (a tab and newline aside)


@pytest.mark.parametrize(
    ("text", "shown", "shown_on_lines"),
    [
        ("plain text\twith a tab", "plain text\twith a tab", "plain text\twith a tab"),
        ("a\x1b[2Jb", "a\\x1b[2Jb", "a\\x1b[2Jb"),  # clear screen
        ("t\x1b]0;title\x07", "t\\x1b]0;title\\x07", "t\\x1b]0;title\\x07"),  # OSC window title
        ("one\ntwo", "one\\ntwo", "one\ntwo"),  # a forged line in a name; a line break in a reply
        ("one\r\ntwo\rthree", "one\\r\\ntwo\\rthree", "one\ntwo\\rthree"),  # a carriage return overwrites
        ("\x9b31m\x7f\x00", "\\x9b31m\\x7f\\x00", "\\x9b31m\\x7f\\x00"),  # C1 CSI, DEL, NUL
        ("café ✓ 日本", "café ✓ 日本", "café ✓ 日本"),
    ],
)
def test_control_characters_become_escapes_and_other_text_stays(text, shown, shown_on_lines):
    assert printable(text) == shown
    assert printable(text, keep_line_breaks=True) == shown_on_lines


def test_file_names_with_escape_sequences_and_newlines_reach_the_terminal_escaped(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "good.md").write_text("# Good\n\n" + "A sentence about rivers and bridges. " * 10, encoding="utf-8")
    (corpus / "title\x1b]0;pwned\x07.bin").write_bytes(b"x")  # skipped: unsupported type
    (corpus / "forged\nline.md").write_bytes(b"\x00binary")  # skipped: binary
    result = runner.invoke(app, ["ingest", str(corpus), "--dry-run", "-w", str(tmp_path / "ws")])
    assert result.exit_code == 0, result.output
    assert not RAW_CONTROL.search(result.output), repr(result.output)
    assert "title\\x1b]0;pwned\\x07.bin" in result.output and "forged\\nline.md" in result.output
    assert not any(line.startswith("line.md") for line in result.output.splitlines())


def test_an_error_naming_a_path_with_escape_sequences_is_escaped(tmp_path):
    missing = tmp_path / "no\x1b[2Jsuch\ndir"
    result = runner.invoke(app, ["ingest", str(missing), "-w", str(tmp_path / "ws")])
    assert result.exit_code == 2, result.output
    assert not RAW_CONTROL.search(result.output) and "no\\x1b[2Jsuch\\ndir" in result.output, repr(result.output)


def test_runs_lists_a_crash_reason_holding_control_characters_escaped(tmp_path):
    from benchsmith.stores.persistence.runs import RunDirectory
    from benchsmith.stores.persistence.workspace import Workspace

    run = RunDirectory(Workspace.resolve(tmp_path / "ws"), "r1")
    run.start("ingest", {}, resume="benchsmith ingest 'a\x1b[2J'")
    run.crash("InputError: a\x1b]0;pwned\x07\nforged")
    result = runner.invoke(app, ["runs", "-w", str(tmp_path / "ws")])
    assert result.exit_code == 0, result.output
    assert not RAW_CONTROL.search(result.output) and "a\\x1b]0;pwned\\x07\\nforged" in result.output
