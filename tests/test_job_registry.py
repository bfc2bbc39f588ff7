"""One table of jobs (benchsmith/jobs/registry.py): the CLI's commands, the API's names and Studio's
graphs are read from it, and a new job is its own files plus one line in it."""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import benchsmith
from benchsmith.jobs.registry import JOBS, api_modules, command_targets, studio_graphs

ROOT = Path(__file__).resolve().parent.parent


def test_the_api_exports_every_name_of_the_table_from_its_job_module():
    assert api_modules() and set(api_modules()) <= set(benchsmith.__all__)
    for name, module in api_modules().items():
        assert getattr(benchsmith, name).__module__ in (module, "benchsmith.jobs.api_names"), name


def test_the_names_editors_read_are_the_apis_names():
    """The TYPE_CHECKING imports of benchsmith/__init__.py (what an editor resolves) name each
    exported name once, from the module the API loads it from."""
    tree = ast.parse((ROOT / "benchsmith" / "__init__.py").read_text(encoding="utf-8"))
    guarded = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    imported = {alias.name: node.module for node in guarded.body for alias in node.names}
    assert imported == {name: benchsmith._API_MODULES[name] for name in benchsmith.__all__}


def test_the_cli_has_the_commands_of_the_table_in_its_order():
    from benchsmith.cli import app

    names = [command.name or command.callback.__name__ for command in app.registered_commands]
    names += [group.name for group in app.registered_groups]
    expected = [
        module.rpartition(".")[2] if attribute == "app" else attribute for module, attribute in command_targets()
    ]
    assert names == expected and len(names) == sum(len(job.commands) for job in JOBS)


def test_studio_serves_the_graphs_of_the_table():
    from benchsmith.cli.studio import GRAPHS

    assert studio_graphs() == GRAPHS and len(GRAPHS) >= len([job for job in JOBS if job.graphs])


JOB_FUNCTION = '''"""``benchsmith.tally``: a job planted by tests/test_job_registry.py."""

from dataclasses import dataclass


@dataclass(frozen=True)
class TallyResult:
    count: int


def tally(words: list[str]) -> TallyResult:
    """Count the words."""
    return TallyResult(len(words))
'''
COMMAND = '''"""``benchsmith tally``: a command planted by tests/test_job_registry.py."""

import typer

from benchsmith.cli.deferred import deferred

run_tally = deferred("benchsmith.jobs.tally", "tally")


def tally(words: list[str] = typer.Argument(...)) -> None:
    """Count the words."""
    print(f"{run_tally(words).count} words")
'''
CHECK = """
import benchsmith
from typer.testing import CliRunner
from benchsmith.cli import app
assert benchsmith.__file__.startswith(%r), benchsmith.__file__
assert "tally" in benchsmith.__all__ and "TallyResult" in benchsmith.__all__
assert benchsmith.tally(["a", "b", "c"]) == benchsmith.TallyResult(3)
result = CliRunner().invoke(app, ["tally", "a", "b"])
assert result.exit_code == 0 and result.output == "2 words\\n", result.output
assert "tally" in CliRunner().invoke(app, ["--help"]).output
print("ok")
"""


def test_a_new_job_is_its_own_files_and_one_line_in_the_table(tmp_path):
    """A copy of the package face with a job added as a newcomer would: its job function
    (benchsmith/jobs/tally.py), its command (benchsmith/cli/tally.py) and one line in the table:
    ``benchsmith.tally`` and ``benchsmith tally`` both work, and nothing else was edited."""
    face = tmp_path / "benchsmith"
    shutil.copytree(ROOT / "benchsmith", face, ignore=shutil.ignore_patterns("__pycache__"))
    for folder in ("graphs", "agents", "tools", "stores", "evals"):  # the rooms below, as installed
        (face / folder).symlink_to(ROOT / folder, target_is_directory=True)
    (face / "jobs" / "tally.py").write_text(JOB_FUNCTION, encoding="utf-8")
    (face / "cli" / "tally.py").write_text(COMMAND, encoding="utf-8")
    registry = face / "jobs" / "registry.py"
    table = registry.read_text(encoding="utf-8")
    line = '    Job("tally", api=("TallyResult", "tally"), commands=("tally",)),\n'
    registry.write_text(table.replace("\n)\n", "\n" + line + ")\n", 1), encoding="utf-8")
    assert registry.read_text(encoding="utf-8").count("\n") == table.count("\n") + 1  # one line added

    result = subprocess.run(
        [sys.executable, "-c", CHECK % str(face)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        timeout=300,
    )
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stdout + result.stderr
