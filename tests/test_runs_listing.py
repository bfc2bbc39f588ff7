"""``benchsmith runs`` lists a workspace whatever jobs ran in it: one finished run of every job
(its summary the job's declared output, as the runner records it), one crashed, one running."""

from __future__ import annotations

import importlib
import typing
from typing import Any

from typer.testing import CliRunner

from benchsmith.cli import app
from benchsmith.cli.runs import ITEMS_OF_JOB
from benchsmith.cli.studio import GRAPHS
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace

JOBS = {graph_id: target for graph_id, target in GRAPHS.items() if graph_id != "conversation"}  # a subgraph, no job


def example_of(hint: Any) -> Any:
    """A value of the declared type, as a finished run's summary holds one (two items where it holds many)."""
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, __import__("types").UnionType):
        return example_of(next(argument for argument in arguments if argument is not type(None)))
    if hint is int:
        return 2
    if hint is float:
        return 0.5
    if hint is str:
        return "x"
    if origin is list:
        return [example_of(arguments[0]) if arguments else "x" for _ in range(2)]
    if origin is dict or hint is dict:
        value = example_of(arguments[1]) if len(arguments) == 2 else "x"
        return {"a": value, "b": value}
    return "x"


def summary_of(graph_id: str) -> dict[str, Any]:
    module, _ = JOBS[graph_id].split(":")
    builder = importlib.import_module(module).builder
    return {name: example_of(hint) for name, hint in typing.get_type_hints(builder.output_schema).items()}


def test_every_job_says_what_it_made():
    assert set(ITEMS_OF_JOB) == set(JOBS)


def test_runs_lists_a_workspace_holding_a_run_of_every_job(tmp_path):
    workspace = Workspace.resolve(tmp_path / "ws")
    for job in JOBS:
        run = RunDirectory(workspace, f"{job}-done")
        run.start(job, {})
        run.finish(summary_of(job))
    crashed = RunDirectory(workspace, "audit-crashed")
    crashed.start("audit", {}, resume="benchsmith audit x --run-id audit-crashed")
    crashed.set_progress("judge", 3, 10)
    crashed.crash("RuntimeError: boom")
    result = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["runs", "-w", str(workspace.root)])
    assert result.exit_code == 0, result.output
    for job, (_, unit) in ITEMS_OF_JOB.items():
        row = next(line for line in result.output.splitlines() if f"{job}-done" in line)
        assert f"2 {unit}" in row, row
    row = next(line for line in result.output.splitlines() if "audit-crashed" in line and "judge" in line)
    assert "judge 3/10" in row and "crashed" in row
    assert "resume with: benchsmith audit x --run-id audit-crashed" in result.output
