"""The layout's rules, checked on the source: imports flow one way, Studio can load every graph."""

import ast
import importlib
import json
from pathlib import Path

import pytest
from langgraph.graph.state import CompiledStateGraph

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("graphs", "agents", "tools", "stores", "evals")
ALLOWED = {"graphs": set(LAYERS), "tools": {"tools", "stores"}, "agents": {"agents"}, "stores": {"stores"},
           "evals": {"evals"}}


def imported_layers(path: Path) -> set[str]:
    layers = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else (
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else [])
        for name in names:
            parts = name.split(".")
            if parts[0] == "benchsmith" and len(parts) > 1 and parts[1] in LAYERS:
                layers.add(parts[1])
            elif parts[0] in LAYERS:  # an import of the bare folder name escapes the namespace
                layers.add(f"bare {parts[0]}")
    return layers


@pytest.mark.parametrize("layer", [layer for layer in LAYERS if (ROOT / layer).is_dir()])
def test_imports_flow_one_way(layer):
    for path in sorted((ROOT / layer).rglob("*.py")):
        forbidden = imported_layers(path) - ALLOWED[layer]
        assert not forbidden, f"{path.relative_to(ROOT)} imports {sorted(forbidden)}"


def test_langgraph_json_lists_every_graph_compiled_without_checkpointer():
    config = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
    graph_modules = {p.stem for p in (ROOT / "graphs").glob("*.py")} - {"__init__", "cli", "runner", "resources", "corpus_indexes"}
    listed = {target.split(":")[0].removeprefix("benchsmith.graphs.") for target in config["graphs"].values()}
    assert listed == graph_modules
    for target in config["graphs"].values():
        module_name, attribute = target.split(":")
        graph = getattr(importlib.import_module(module_name), attribute)
        assert isinstance(graph, CompiledStateGraph) and graph.checkpointer is None


@pytest.mark.slow
def test_studio_server_loads_every_graph():
    """`langgraph dev` (the studio extra) serves each graph of langgraph.json with its nodes."""
    import os
    import shutil
    import sys

    import httpx

    from tests.local_servers import free_port, local_server

    executable = shutil.which("langgraph", path=str(Path(sys.executable).parent))
    if executable is None:
        pytest.skip("the studio extra is not installed (pip install -e '.[studio]')")
    port = free_port()
    environment = {**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "true"}
    command = [executable, "dev", "--config", str(ROOT / "langgraph.json"), "--port", str(port), "--no-browser",
               "--no-reload"]
    with local_server(command, "/ok", port, cwd=ROOT, env=environment) as base:
        assistants = httpx.post(f"{base}/assistants/search", json={}, timeout=10).json()
        by_graph = {assistant["graph_id"]: assistant["assistant_id"] for assistant in assistants}
        config = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
        assert set(by_graph) == set(config["graphs"])

        def drawn(graph_id: str) -> tuple[set[str], set[tuple[str, str, bool]]]:
            graph = httpx.get(f"{base}/assistants/{by_graph[graph_id]}/graph", timeout=10).json()
            return ({node["id"] for node in graph["nodes"]},
                    {(edge["source"], edge["target"], bool(edge.get("conditional"))) for edge in graph["edges"]})

        assert drawn("ingest")[0] >= {"load", "clean", "chunk", "dedup", "quality", "embed"}
        assert drawn("synthesize")[0] >= {"plan", "converse", "export"}
        nodes, edges = drawn("conversation")
        assert nodes >= {"walker", "questioner", "responder", "polisher", "router", "record"}
        assert {("router", "walker", True), ("router", "record", True)} <= edges  # the branches Studio draws
