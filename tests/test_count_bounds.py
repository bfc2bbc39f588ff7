"""Every count option of every command has a bound that ``--help`` shows, and a value past it
exits 2 naming the option before any work or run record (``synthesize --turns 1000000`` ran 83 s
into the step limit; ``hardneg build --conditions`` with a huge value wrote 133 MB of empty tables).
The API refuses the same values with the same bounds."""

from __future__ import annotations

import dataclasses
import typing

import pytest
import typer
from typer.testing import CliRunner

import benchsmith
from benchsmith.cli import app
from benchsmith.graphs.runtime.settings import check_bounds, flags_of, type_hints, user_settings
from benchsmith.stores.errors import InputError
from tests.job_commands import COMMANDS, compiled

runner = CliRunner(env={"COLUMNS": "400"})


def count_options() -> list[tuple[list[str], typer.core.TyperOption]]:
    """(command words, option) of every option whose values are whole numbers, in every command."""
    found = []

    def walk(command: object, words: list[str]) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*words, name])
            return
        for parameter in command.params:
            annotation = parameter.type_descriptor.annotation
            arguments = [argument for argument in typing.get_args(annotation) if argument is not type(None)]
            inner = arguments[0] if arguments else annotation
            inner = (typing.get_args(inner) or [inner])[0] if typing.get_origin(inner) is list else inner
            if inner is int and parameter.opts and parameter.opts[0].startswith("--"):
                found.append((words, parameter))

    walk(typer.main.get_command(app), [])
    return found


COUNT_OPTIONS = count_options()


def test_the_table_holds_the_options_of_the_issue():
    flags = {(" ".join(words), option.opts[0]) for words, option in COUNT_OPTIONS}
    assert {("synthesize", "--turns"), ("hardneg build", "--conditions"), ("ingest", "--chunk-size")} <= flags
    assert len(COUNT_OPTIONS) > 60


@pytest.mark.parametrize(
    ("words", "option"), COUNT_OPTIONS, ids=[f"{' '.join(words)} {option.opts[0]}" for words, option in COUNT_OPTIONS]
)
def test_each_count_option_is_bounded_in_help_and_refused_past_it(words, option, tmp_path):
    assert option.max is not None and option.min is not None, "a count option without a documented bound"
    command = typer.main.get_command(app)
    for word in words:
        command = command.commands[word]
    arguments = []
    for parameter in command.params:  # the command's required inputs, any value: the bound is checked first
        if parameter.required and parameter is not option:
            arguments += (
                ["x"] if not parameter.opts or not parameter.opts[0].startswith("-") else [parameter.opts[0], "x"]
            )
    result = runner.invoke(
        app,
        [*words, *arguments, option.opts[0], str(option.max + 1), "-w", str(tmp_path / "ws")]
        if any(p.opts and p.opts[0] == "--workspace" for p in command.params)
        else [*words, *arguments, option.opts[0], str(option.max + 1)],
    )
    assert result.exit_code == 2, result.output
    assert option.opts[0] in result.output and f"less than or equal to {option.max}" in result.output, result.output
    assert not (tmp_path / "ws" / "runs").exists()
    shown = runner.invoke(app, [*words, "--help"]).output
    assert f"<={option.max}]" in shown, shown


def count_settings(graph_id: str) -> list[tuple[type, dataclasses.Field]]:
    context_type = compiled(graph_id).builder.context_schema
    return [
        (context_type, item)
        for item in user_settings(context_type)
        if type_hints(context_type)[item.name] in (int, int | None)
    ]


@pytest.mark.parametrize("graph_id", list(COMMANDS))
def test_every_count_setting_declares_both_bounds_and_the_api_refuses_past_them(graph_id):
    for context_type, item in count_settings(graph_id):
        assert item.metadata.get("min") is not None and item.metadata.get("max") is not None, item.name
        with pytest.raises(InputError, match=f"^{flags_of(item)[0]} must be"):
            check_bounds(context_type(**{item.name: item.metadata["max"] + 1}))


def test_synthesize_refuses_a_million_turns_through_the_api_before_any_run(tmp_path):
    with pytest.raises(InputError, match=r"^turns must be within \[1, 50\], got 1000000"):
        benchsmith.synthesize("any-collection", turns=1_000_000, workspace=tmp_path / "ws")
    assert not (tmp_path / "ws" / "runs").exists()


def test_a_chunk_size_below_the_minimum_chunk_is_refused_not_an_empty_collection(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\n" + "Words about foxes and whales. " * 20, encoding="utf-8")
    result = runner.invoke(app, ["ingest", str(tmp_path / "docs"), "--chunk-size", "50", "-w", str(tmp_path / "ws")])
    assert result.exit_code == 2, result.output
    assert "--chunk-size 50 is below --min-chars 100" in " ".join(result.output.split())
    assert not (tmp_path / "ws" / "runs").exists()
    result = runner.invoke(app, ["ingest", str(tmp_path / "docs"), "--chunk-size", "1", "-w", str(tmp_path / "ws")])
    assert result.exit_code == 2 and "--chunk-size" in result.output
