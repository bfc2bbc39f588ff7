"""Output piped at 80 columns wraps and never cuts: every command's ``--help`` and every table keep
each character of a long name (an option, an environment variable, a configuration) instead of
ending it with "…"."""

from __future__ import annotations

import ast
from pathlib import Path

import click
import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from benchsmith.cli import app, console
from benchsmith.cli.console import Table, print_group_table, print_measure_table

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner(env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"})
LONG_NAMES = ["hybrid:wsum(dense=0.7,bm25=0.3)+rerank@oracle", "BENCHSMITH_EMBEDDINGS_BASE_URL_SOMEWHERE_ELSE"]


def commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    found = []
    for name, command in sorted(group.commands.items()):
        found.append(((*path, name), command))
        if isinstance(command, click.Group):
            found += commands(command, (*path, name))
    return found


EVERY_COMMAND = commands(typer.main.get_command(app))


def cell_column(output: str, column: int) -> str:
    """The text of one column of a rich table, its lines joined: a folded name is whole again."""
    cells = [line.split("│")[column + 1].strip() for line in output.splitlines() if line.count("│") > column + 1]
    return "".join(cells)


def first_words(output: str) -> str:
    """The first word of each line of the help's panels, joined: a flag folded over two lines of
    its column reads whole again."""
    words = []
    for line in output.splitlines():
        inside = line.strip().strip("│").split()
        words += [word for word in inside[:2] if word != "*"][:1]
    return "".join(words)


@pytest.mark.parametrize("path, command", EVERY_COMMAND, ids=[" ".join(path) for path, _ in EVERY_COMMAND])
def test_help_wraps_at_80_columns_and_cuts_nothing(path, command):
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "…" not in result.output, result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    names = first_words(result.output)
    for parameter in command.params:
        if getattr(parameter, "hidden", False):  # a renamed option's former flag, taken but not shown
            continue
        for flag in parameter.opts:
            assert flag in result.output or flag in names, flag
        if getattr(parameter, "envvar", None) and getattr(parameter, "show_envvar", False):
            assert parameter.envvar in "".join(result.output.replace("│", "").split()), parameter.envvar


def test_the_top_level_help_names_every_command():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0 and "…" not in result.output
    for path, _ in EVERY_COMMAND:
        if len(path) == 1:
            assert path[0] in result.output


def narrow_console(monkeypatch) -> Console:
    narrow = Console(width=80, record=True, force_terminal=False, color_system=None)
    monkeypatch.setattr(console, "console", narrow)
    return narrow


def test_a_table_folds_a_name_wider_than_its_column(monkeypatch):
    narrow = narrow_console(monkeypatch)
    table = Table(title="names")
    table.add_column("configuration", no_wrap=True)  # asked not to wrap: it folds rather than cut
    for number in range(6):
        table.add_column(f"measure{number}", justify="right", no_wrap=True)
    for name in LONG_NAMES:
        table.add_row(name, *(f"{0.123456:.6f}" for _ in range(6)))
    narrow.print(table)
    output = narrow.export_text()
    assert "…" not in output and max(len(line) for line in output.splitlines()) <= 80
    for name in LONG_NAMES:
        assert name in cell_column(output, 0)


def test_the_score_tables_keep_every_configuration_name_at_80_columns(monkeypatch):
    narrow = narrow_console(monkeypatch)
    aggregate = {name: {"nDCG@10": 0.5, "R@10": 0.6, "RR@10": 0.4, "AP": 0.3} for name in LONG_NAMES}
    print_measure_table(aggregate, ["nDCG@10", "R@10", "RR@10", "AP"], "scores", "nDCG@10")
    by_group = {
        name: {group: {"nDCG@10": 0.5, "queries": 3} for group in ("start", "follow-up", "soft", "hard")}
        for name in LONG_NAMES
    }
    print_group_table(by_group, "nDCG@10", "by switch")
    output = narrow.export_text()
    assert "…" not in output and max(len(line) for line in output.splitlines()) <= 80
    for name in LONG_NAMES:
        assert output.count(name) + cell_column(output, 0).count(name) >= 2


def test_every_command_prints_its_tables_through_the_folding_table():
    """rich's own Table cuts; the commands import the console's."""
    for path in (ROOT / "benchsmith" / "cli").glob("*.py"):
        if path.name == "console.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = [
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "rich.table"
            for alias in node.names
        ]
        assert "Table" not in imported, path


def test_a_prose_paragraph_with_a_line_opening_on_an_option_is_reflowed_but_a_list_keeps_its_breaks():
    from benchsmith.cli.console import reflowed_help

    prose = "Summary.\n\n    Each turn is paraphrased\n    --per-turn times, then filtered.\n"
    listed = "Summary.\n\n    - one item\n    - another\n"
    assert reflowed_help(prose).split("\n\n")[1] == "Each turn is paraphrased --per-turn times, then filtered."
    assert reflowed_help(listed).split("\n\n")[1] == "- one item\n- another"
