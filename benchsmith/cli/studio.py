"""``benchsmith studio``: every graph in LangGraph Studio, served by `langgraph dev`.

The server's configuration and state live in ``<workspace>/studio/`` (never in the source
tree, and the same from any working directory): a ``langgraph.json`` naming the graphs by
module, so it works for any installation of benchsmith, and the server's ``.langgraph_api/``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from benchsmith.cli.console import WorkspaceOption, console, fail, shown
from benchsmith.graphs.runtime.bounds import PORT_BOUNDS
from benchsmith.jobs.registry import studio_graphs
from benchsmith.stores.persistence.files import write_json_atomic
from benchsmith.stores.persistence.workspace import WORKSPACE_ENV, Workspace

GRAPHS = studio_graphs()  # every job's graphs (benchsmith/jobs/registry.py)


def studio_config(workspace: Workspace) -> Path:
    """Write ``<workspace>/studio/langgraph.json``; returns its path."""
    path = workspace.root / "studio" / "langgraph.json"
    # langgraph dev wants a dependency; "." (this folder) adds nothing: benchsmith is installed.
    write_json_atomic(path, {"dependencies": ["."], "graphs": GRAPHS})
    return path


def studio(
    port: Annotated[int, typer.Option(**PORT_BOUNDS, help="Port for the local LangGraph server.")] = 2024,
    reload: Annotated[
        bool, typer.Option("--reload", help="Restart the server when benchsmith's code changes.")
    ] = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Open every graph in LangGraph Studio (needs the studio extra: pip install 'benchsmith\\[studio]').

    Each graph shows its input, output and settings (context) with what each setting means;
    the graphs read and write the workspace, as the CLI does.
    """
    executable = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or shutil.which("langgraph")
    if executable is None:
        fail("LangGraph Studio needs the studio extra: pip install 'benchsmith[studio]' (in a checkout: make studio)")
    resolved = Workspace.resolve(workspace)
    config = studio_config(resolved)
    command = [
        executable,
        "dev",
        "--config",
        str(config),
        "--port",
        str(port),
        "--no-browser",
        *([] if reload else ["--no-reload"]),
    ]
    console.print("starting: " + shown(" ".join(command)), highlight=False)
    console.print(
        f"graphs: {', '.join(json.loads(config.read_text())['graphs'])} · workspace {shown(resolved.root)}",
        highlight=False,
    )
    environment = {**os.environ, WORKSPACE_ENV: str(resolved.root), "LANGGRAPH_CLI_NO_ANALYTICS": "1"}
    sys.stdout.flush()
    # The server replaces this process: a signal to `benchsmith studio` reaches the server itself,
    # so stopping one never leaves the other running, orphaned.
    os.chdir(config.parent)
    os.execve(executable, command, environment)
