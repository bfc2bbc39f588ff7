"""Each setting is declared once (issue 21, docs/design.md rule 11): a field of the graph's context. The CLI
option, the API argument and Studio's schema derived from it carry the same name, default and
description, and no command declares by hand an option its context declares."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re
from dataclasses import dataclass, field
from typing import Annotated, Any

import click
import pytest
import typer
from typer.testing import CliRunner

import benchsmith
from benchsmith import jobs
from benchsmith.cli import app
from benchsmith.cli.settings import RunOptions, settings_options
from benchsmith.graphs.runtime.settings import (
    ModelOptions,
    StoreOptions,
    accepts_old_setting_names,
    check_bounds,
    default_of,
    recorded_settings,
    settings_given,
    user_settings,
)
from benchsmith.stores.errors import InputError
from tests.job_commands import COMMANDS, GRAPHS, compiled

SHARED_NAMES = {item.name for base in (StoreOptions, ModelOptions, RunOptions) for item in dataclasses.fields(base)}


def test_every_graph_studio_serves_is_checked():
    assert set(COMMANDS) == set(GRAPHS)


def callbacks() -> dict[str, Any]:
    """Each command's function by its words (a group's subcommands as "group sub")."""
    found = {info.callback.__name__: info.callback for info in app.registered_commands}
    for group in app.registered_groups:
        found.update(
            {
                f"{group.name} {info.callback.__name__}": info.callback
                for info in group.typer_instance.registered_commands
            }
        )
    return found


def click_command(name: str) -> click.Command:
    command = typer.main.get_command(app)
    for word in name.split():
        command = command.commands[word]  # type: ignore[attr-defined]
    return command


def json_default(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


@pytest.mark.parametrize("graph_id", sorted(COMMANDS))
def test_cli_api_and_schema_carry_each_context_field_alike(graph_id):
    graph = compiled(graph_id)
    context_type = graph.builder.context_schema
    schema = graph.get_context_jsonschema()["properties"]
    command_name, job_name = COMMANDS[graph_id]
    options = {param.name: param for param in click_command(command_name).params}
    api = inspect.signature(getattr(benchsmith, job_name)).parameters
    for item in user_settings(context_type):
        description, default = item.metadata["description"], default_of(item)
        assert schema[item.name]["description"] == description, item.name
        assert schema[item.name].get("default") == json_default(default), item.name
        option = options[item.name]
        assert option.help == description, item.name
        if isinstance(default, tuple):  # repeatable: none given means the field's default
            assert option.multiple and option.default is None, item.name
        else:
            assert option.default == default, item.name
        assert api[item.name].default == default, item.name
        assert api[item.name].kind is inspect.Parameter.KEYWORD_ONLY, item.name


@pytest.mark.parametrize("command_name", sorted({command for command, _ in COMMANDS.values()}))
def test_no_command_declares_by_hand_what_a_context_or_the_shared_options_declare(command_name):
    graph_ids = [graph_id for graph_id, (command, _) in COMMANDS.items() if command == command_name]
    declared = SHARED_NAMES | {
        item.name for graph_id in graph_ids for item in dataclasses.fields(compiled(graph_id).builder.context_schema)
    }
    derived = callbacks()[command_name].__derived_options__
    for param in click_command(command_name).params:
        if param.name in declared:
            assert param.name in derived, f"{command_name} declares --{param.name} by hand"


def test_the_flags_a_user_knows_stay():
    flags = {opt for param in click_command("synthesize").params for opt in param.opts}
    assert {
        "--switch-rate",
        "--rate-limit",
        "--timeout",
        "--workspace",
        "-w",
        "--run-id",
        "--dry-run",
    } <= flags
    flags = {opt for param in click_command("evaluate").params for opt in param.opts}
    assert {"--rerank", "--significance-test", "--measure", "--strict"} <= flags


# ---------------------------------------------------------------------------------------
# The mechanism, on a context of its own.


@dataclass(kw_only=True)
class ToyContext(StoreOptions):
    rounds: int = field(default=3, metadata={"description": "Rounds to play.", "min": 1})
    words: tuple[str, ...] = field(default=("a", "b"), metadata={"description": "Words.", "cli": "--word"})
    speed: float = field(default=1.0, metadata={"description": "How fast.", "recorded": False})
    secret: str = field(default="x", metadata={"description": "Not a setting.", "internal": True})


def toy_app(command: Any) -> typer.Typer:
    toy = typer.Typer()
    toy.command()(command)
    toy.command("other")(lambda: None)  # two commands: the first is called by name
    return toy


def test_the_cli_hands_the_command_the_settings_it_was_given():
    seen = {}

    @settings_options(ToyContext)
    def play(name: Annotated[str, typer.Argument()], *, settings: dict[str, Any], run_options: RunOptions) -> None:
        seen.update(name=name, settings=settings, run=run_options)

    result = CliRunner().invoke(
        toy_app(play), ["play", "n", "--rounds", "5", "--word", "x", "--word", "y", "--run-id", "r1", "-w", "/tmp/ws"]
    )
    assert result.exit_code == 0, result.output
    assert seen["settings"]["rounds"] == 5 and seen["settings"]["words"] == ("x", "y")
    assert seen["settings"]["workspace"] == "/tmp/ws" and "secret" not in seen["settings"]
    assert seen["run"] == RunOptions(run_id="r1", dry_run=False)
    CliRunner().invoke(toy_app(play), ["play", "n"])
    assert seen["settings"]["words"] == ("a", "b") and seen["settings"]["rounds"] == 3
    refused = CliRunner().invoke(toy_app(play), ["play", "n", "--rounds", "0"])
    assert refused.exit_code == 2 and "--rounds" in refused.output


def test_a_command_that_declares_a_context_field_by_hand_is_refused():
    def play(rounds: Annotated[int, typer.Option()] = 3, *, settings: dict[str, Any]) -> None: ...

    with pytest.raises(TypeError, match="rounds"):
        settings_options(ToyContext)(play)


def test_the_api_takes_the_settings_and_records_the_run_defining_ones():
    @accepts_old_setting_names
    def job(
        source: str,
        *,
        run_id: str | None = None,
        rounds: int = 3,
        words: tuple[str, ...] = ("a", "b"),
        speed: float = 1.0,
        workspace: str | None = None,
        chroma_host: str | None = None,
        database: str | None = None,
    ) -> ToyContext:
        return settings_given(ToyContext, locals())

    parameters = inspect.signature(job).parameters
    assert parameters["rounds"].default == 3 and parameters["words"].default == ("a", "b")
    context = job("s", rounds=7, speed=2.0)
    assert context.rounds == 7 and context.secret == "x"
    recorded = recorded_settings(context)
    assert recorded["rounds"] == 7 and recorded["words"] == ["a", "b"]
    assert "speed" not in recorded and "workspace" not in recorded and "secret" not in recorded
    with pytest.raises(TypeError):
        job("s", no_such_setting=1)
    with pytest.raises(InputError, match="--rounds must be at least 1, got 0"):
        check_bounds(job("s", rounds=0))


def api_job_functions() -> dict[str, tuple[Any, type]]:
    """Every function of the job modules that builds its context from its keyword arguments, with
    that context (named in its ``settings_given(Context, ...)`` call)."""
    found = {}
    for module in pkgutil.iter_modules(jobs.__path__):
        loaded = importlib.import_module(f"benchsmith.jobs.{module.name}")
        for name, function in vars(loaded).items():
            if not inspect.isfunction(function) or function.__module__ != loaded.__name__:
                continue
            called = re.search(r"settings_given\((\w+),", inspect.getsource(inspect.unwrap(function)))
            if called:
                found[f"{module.name}.{name}"] = (function, getattr(loaded, called.group(1)))
    return found


def test_the_job_functions_that_take_settings_are_found():
    found = {inspect.unwrap(function) for function, _ in api_job_functions().values()}
    # Each job of COMMANDS (a subgraph shares its job's); its estimate is the same function, stopped before the run.
    assert len(found) == len({job_name for _, job_name in COMMANDS.values()})
    assert {inspect.unwrap(getattr(benchsmith, job_name)) for _, job_name in COMMANDS.values()} <= found


@pytest.mark.parametrize("name", sorted(api_job_functions()))
def test_a_job_function_lists_its_contexts_settings_last_with_their_defaults(name):
    """The settings are written out in each job function (help() and editors show them); written
    twice, they are held here to the context's fields: same names, order, types and defaults."""
    function, context_type = api_job_functions()[name]
    settings = user_settings(context_type)
    parameters = list(inspect.signature(function).parameters.values())
    listed = parameters[len(parameters) - len(settings) :]
    assert [parameter.name for parameter in listed] == [item.name for item in settings]
    own = {parameter.name for parameter in parameters[: len(parameters) - len(settings)]}
    assert not own & {item.name for item in dataclasses.fields(context_type)}, "a setting declared by hand"
    for parameter, item in zip(listed, settings):
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, item.name
        assert parameter.default == default_of(item), item.name
        assert parameter.annotation == item.type, item.name


def test_help_shows_every_setting_of_synthesize_with_its_default():
    parameters = inspect.signature(benchsmith.synthesize).parameters
    assert parameters["max_overlap"].default == 0.62 and parameters["switch_rate"].annotation == "float"
    assert "max_overlap: 'float' = 0.62" in str(inspect.signature(benchsmith.synthesize))
