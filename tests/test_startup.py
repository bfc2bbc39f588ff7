"""Starting benchsmith loads nothing heavy (issue 21): ``import benchsmith``, ``benchsmith --help`` and every
command's ``--help`` leave model clients, Chroma, torch and scipy unloaded. Checked by module name in a fresh
interpreter (a test process has them all loaded already), not by time."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import benchsmith

HEAVY_MODULES = (
    "torch",
    "chromadb",
    "openai",
    "scipy",
    "sentence_transformers",
    "langchain_openai",
    "transformers",
    "matplotlib",
    "bm25s",
    "numba",
)

# Runs in a fresh interpreter: the body, then writes the names of the loaded modules as JSON to argv[1].
PROBE = """
import json, sys
{body}
with open(sys.argv[1], "w") as out:
    json.dump(sorted(sys.modules), out)
"""

HELP_OF_EVERY_COMMAND = """
import click, typer
from benchsmith.cli import app

def help_of(words):
    try:
        app([*words, "--help"], prog_name="benchsmith")
    except SystemExit as ending:
        assert ending.code == 0, (words, ending.code)

def command_paths(command, words=()):
    yield list(words)
    for name, sub in getattr(command, "commands", {}).items():
        yield from command_paths(sub, (*words, name))

paths = list(command_paths(typer.main.get_command(app)))
assert len(paths) > 10, paths  # the top level, every command, hardneg's subcommands
for words in paths:
    help_of(words)
print("helped", len(paths))
"""


def loaded_modules(body: str, tmp_path: Path) -> set[str]:
    listing = tmp_path / "modules.json"
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(body=body), str(listing)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return set(json.loads(listing.read_text()))


def heavy_among(modules: set[str]) -> list[str]:
    return sorted(name for name in modules if name.split(".")[0] in HEAVY_MODULES)


def test_import_benchsmith_loads_nothing_heavy(tmp_path):
    modules = loaded_modules("import benchsmith\nnames = dir(benchsmith)", tmp_path)
    assert "benchsmith" in modules
    assert heavy_among(modules) == []
    # The job table (it imports nothing) and no job.
    assert [name for name in modules if name.startswith("benchsmith.jobs.")] == ["benchsmith.jobs.registry"]


def test_help_of_the_cli_and_every_command_loads_nothing_heavy(tmp_path):
    modules = loaded_modules(HELP_OF_EVERY_COMMAND, tmp_path)
    assert "benchsmith.cli.select" in modules and "benchsmith.cli.hardneg" in modules
    assert heavy_among(modules) == []


def test_the_probe_sees_a_heavy_module_once_a_job_is_used(tmp_path):
    # Using the API loads the job and its dependencies: the probe above would see a regression.
    modules = loaded_modules("import benchsmith\nbenchsmith.synthesize", tmp_path)
    assert "benchsmith.jobs.synthesize" in modules
    assert {"openai", "chromadb"} <= set(heavy_among(modules))


def test_every_public_name_resolves_and_is_listed():
    assert set(benchsmith.__all__) <= set(dir(benchsmith))
    for name in benchsmith.__all__:
        value = getattr(benchsmith, name)
        assert getattr(value, "__name__", name) == name, name
    from benchsmith import InputError, synthesize  # the ``from`` form goes through the same table

    assert synthesize is benchsmith.synthesize and InputError is benchsmith.InputError


def test_unknown_name_is_an_attribute_error():
    try:
        benchsmith.no_such_name  # noqa: B018
    except AttributeError as error:
        assert "no_such_name" in str(error)
    else:
        raise AssertionError("benchsmith.no_such_name resolved")


def test_type_checking_imports_match_the_lazy_table():
    """IDEs read the TYPE_CHECKING imports, the runtime reads the table: they must name the same things."""
    tree = ast.parse(Path(benchsmith.__file__).read_text())
    guarded = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    )
    imported = {
        alias.name: statement.module
        for statement in guarded.body
        if isinstance(statement, ast.ImportFrom)
        for alias in statement.names
    }
    assert imported == benchsmith._API_MODULES
    assert set(imported) == set(benchsmith.__all__)
