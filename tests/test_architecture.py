"""The layout's rules, checked on the source: imports flow one way, Studio can load every graph."""

import ast
import importlib
import json
from pathlib import Path

import pytest
from langgraph.graph.state import CompiledStateGraph

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("graphs", "agents", "tools", "stores", "evals")
ALLOWED = {
    "graphs": set(LAYERS),
    "tools": {"tools", "stores"},
    "agents": {"agents"},
    "stores": {"stores"},
    "evals": {"evals"},
}


def imported_layers(path: Path) -> set[str]:
    layers = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = (
            [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else ([node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else [])
        )
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


# The rooms of three layers, top to bottom (docs/design.md): a module imports only modules of its own
# room, of a room below it, or of its layer's root (ROOT_MODULES: the light constants and shared
# vocabulary every room may use, which import no room).
ROOMS = {
    "tools": ("benchmark", "retrieval", "corpus", "text"),
    "stores": ("formats", "persistence"),
    "evals": ("reports", "quality_gate", "measures"),
}
ROOT_MODULES = {"tools": {"defaults", "offline"}, "stores": {"errors", "progress"}, "evals": {"defaults"}}


def room_of(module: str) -> tuple[str, int] | None:
    """``(layer, rank)`` of a module of a layer with rooms; rank 0 is the top room, the root is
    ``len(rooms)``, below every room. None for a module of another layer."""
    parts = module.split(".")
    if len(parts) < 3 or parts[1] not in ROOMS:
        return None
    rooms = ROOMS[parts[1]]
    return parts[1], rooms.index(parts[2]) if parts[2] in rooms else len(rooms)


def test_every_module_of_tools_stores_and_evals_lives_in_a_room():
    for layer, rooms in ROOMS.items():
        flat = {path.stem for path in (ROOT / layer).glob("*.py")} - {"__init__"}
        assert flat == ROOT_MODULES[layer], (
            f"{layer}/ holds modules outside its rooms: {sorted(flat - ROOT_MODULES[layer])}"
        )
        assert {path.name for path in (ROOT / layer).iterdir() if (path / "__init__.py").is_file()} == set(rooms)


def imports_up_a_room(graph: dict[str, set[str]]) -> list[str]:
    return [
        f"{module} imports {target}, a room above its own"
        for module, targets in sorted(graph.items())
        for target in sorted(targets)
        if (here := room_of(module)) and (there := room_of(target)) and there[0] == here[0] and there[1] < here[1]
    ]


def test_rooms_import_only_their_own_room_or_rooms_below():
    from tests.import_floors import import_graph

    assert imports_up_a_room(import_graph(ROOT)) == []


def test_an_import_planted_up_a_room_is_caught(tmp_path):
    """A text converter importing the corpus's records, and a root module importing a room."""
    import shutil

    from tests.import_floors import PRODUCT_FOLDERS, import_graph

    for folder in PRODUCT_FOLDERS:
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    headings = tmp_path / "tools" / "text" / "headings.py"
    headings.write_text(headings.read_text(encoding="utf-8") + "\nfrom benchsmith.tools.corpus import documents\n")
    errors = tmp_path / "stores" / "errors.py"
    errors.write_text(errors.read_text(encoding="utf-8") + "\nfrom benchsmith.stores.persistence import files\n")
    assert imports_up_a_room(import_graph(tmp_path)) == [
        "benchsmith.stores.errors imports benchsmith.stores.persistence.files, a room above its own",
        "benchsmith.tools.text.headings imports benchsmith.tools.corpus.documents, a room above its own",
    ]


def compiled_graphs() -> set[str]:
    """``module:attribute`` of every graph compiled at module level in graphs/ (the workflows, and
    the synthesis's conversation graph)."""
    found = set()
    for path in (ROOT / "graphs").rglob("*.py"):
        dotted = ".".join(path.relative_to(ROOT / "graphs").with_suffix("").parts)
        module = importlib.import_module(f"benchsmith.graphs.{dotted}")
        found |= {f"{dotted}:{name}" for name, value in vars(module).items() if isinstance(value, CompiledStateGraph)}
    return found


def test_langgraph_json_lists_every_graph_compiled_without_checkpointer():
    from benchsmith.cli.studio import GRAPHS

    config = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
    assert config["graphs"] == GRAPHS  # the checkout's Studio config and `benchsmith studio` serve the same graphs
    listed = {target.removeprefix("benchsmith.graphs.") for target in config["graphs"].values()}
    assert listed == compiled_graphs()
    for target in config["graphs"].values():
        module_name, attribute = target.split(":")
        graph = getattr(importlib.import_module(module_name), attribute)
        assert isinstance(graph, CompiledStateGraph) and graph.checkpointer is None


@pytest.mark.parametrize("target", json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))["graphs"].values())
def test_every_graph_has_input_output_and_described_context_schemas(target):
    module_name, attribute = target.split(":")
    graph = getattr(importlib.import_module(module_name), attribute)
    context = graph.get_context_jsonschema()
    assert context and context["properties"], f"{target}: no context schema"
    undescribed = [name for name, field in context["properties"].items() if not field.get("description")]
    assert not undescribed, f"{target}: context fields without a description: {undescribed}"
    assert graph.get_input_jsonschema()["properties"] and graph.get_output_jsonschema()["properties"]
    json.dumps([context, graph.get_input_jsonschema(), graph.get_output_jsonschema()])  # serializable


@pytest.mark.slow
def test_benchsmith_studio_serves_every_graph_with_schemas_and_runs_one(tmp_path):
    """`benchsmith studio` (the studio extra) from another directory: every graph drawn with its
    schemas, a graph run through the server's API with no context, the server's files kept in
    the workspace and none in the source tree."""
    import os
    import shutil
    import subprocess
    import sys

    import httpx

    import benchsmith
    from benchsmith.graphs.runtime.resources import register_embedder
    from tests.doc_pages import write_pages
    from tests.embedders import HashingEmbedder
    from tests.local_servers import free_port, local_server, processes_running
    from tests.synthesis_fixtures import TOPICS

    if shutil.which("langgraph", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("the studio extra is not installed (pip install -e '.[studio]')")
    workspace = tmp_path / "ws"
    corpus = tmp_path / "docs"
    write_pages(corpus, TOPICS, documents=6)  # documentation pages with something to ask (tests/doc_pages.py)
    ingested = benchsmith.ingest(
        [corpus],
        collection="studio-docs",
        embedder=register_embedder(HashingEmbedder()),
        min_chars=20,
        workspace=workspace,
    )
    chunk_ids = [json.loads(line)["id"] for line in (ingested.run_dir / "kept.jsonl").read_text().splitlines()]
    source_files_before = set(
        subprocess.run(
            ["git", "status", "--porcelain", "--ignored"], cwd=ROOT, capture_output=True, text=True
        ).stdout.splitlines()
    )
    port = free_port()
    environment = {**os.environ, "LANGGRAPH_NO_VERSION_CHECK": "true"}
    command = [sys.executable, "-m", "benchsmith.cli", "studio", "--port", str(port), "-w", str(workspace)]
    with local_server(command, "/ok", port, cwd=tmp_path, env=environment, timeout_s=120) as base:
        assistants = httpx.post(f"{base}/assistants/search", json={"limit": 100}, timeout=10).json()  # default page: 10
        by_graph = {assistant["graph_id"]: assistant["assistant_id"] for assistant in assistants}
        config = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
        assert set(by_graph) == set(config["graphs"])
        for graph_id, assistant in by_graph.items():
            schemas = httpx.get(f"{base}/assistants/{assistant}/schemas", timeout=10).json()
            assert schemas["context_schema"] and schemas["context_schema"]["properties"], graph_id
            assert schemas["input_schema"]["properties"] and schemas["output_schema"]["properties"], graph_id
            assert all(field.get("description") for field in schemas["context_schema"]["properties"].values())

        def drawn(graph_id: str) -> tuple[set[str], set[tuple[str, str, bool]]]:
            graph = httpx.get(f"{base}/assistants/{by_graph[graph_id]}/graph", timeout=10).json()
            return (
                {node["id"] for node in graph["nodes"]},
                {(edge["source"], edge["target"], bool(edge.get("conditional"))) for edge in graph["edges"]},
            )

        assert drawn("ingest")[0] >= {"load", "clean", "chunk", "dedup", "quality", "embed"}
        assert drawn("synthesize")[0] >= {"plan", "converse", "export"}
        nodes, edges = drawn("conversation")
        assert nodes >= {"begin", "walker", "questioner", "responder", "polisher", "router"}
        assert {("router", "walker", True), ("router", "__end__", True)} <= edges  # the branches Studio draws

        run = httpx.post(
            f"{base}/runs/wait",
            timeout=60,
            json={
                "assistant_id": by_graph["conversation"],
                "input": {
                    "collection": "studio-docs",
                    "conversation_id": "studio-1",
                    "chunk_ids": chunk_ids[:3],
                    "turns_wanted": 2,
                },
            },
        ).json()
        assert [turn["index"] for turn in run["turns"]] == [0, 1], run
        assert run["turns"][0]["gold_ids"][0] in chunk_ids

    assert not processes_running("dev", "--port", str(port)), "the Studio server outlived `benchsmith studio`"
    assert (workspace / "studio" / ".langgraph_api").is_dir()
    source_files_after = set(
        subprocess.run(
            ["git", "status", "--porcelain", "--ignored"], cwd=ROOT, capture_output=True, text=True
        ).stdout.splitlines()
    )
    assert not any(".langgraph_api" in line for line in source_files_after - source_files_before)


def test_no_module_imports_a_floor_above_its_own():
    from tests.import_floors import import_graph, imports_up

    assert imports_up(import_graph(ROOT)) == []


def test_no_modules_import_each_other_in_a_circle():
    from tests.import_floors import cycles, import_graph

    assert cycles(import_graph(ROOT)) == []


def test_an_import_planted_back_up_or_in_a_circle_is_caught(tmp_path):
    """The checks above on a copy of the tree with three planted imports: the shared runtime
    importing the API (inside a function, where a work-around would hide it), a graph module
    importing the CLI, and two stores importing each other."""
    import shutil

    from tests.import_floors import PRODUCT_FOLDERS, cycles, import_graph, imports_up

    for folder in PRODUCT_FOLDERS:
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    assert imports_up(import_graph(tmp_path)) == [] and cycles(import_graph(tmp_path)) == []
    progress = tmp_path / "graphs" / "runtime" / "progress.py"
    progress.write_text(
        progress.read_text(encoding="utf-8") + "\n\ndef planted():\n"
        "    from benchsmith.jobs.evaluate import evaluate\n    return evaluate\n",
        encoding="utf-8",
    )
    audit = tmp_path / "graphs" / "audit" / "graph.py"
    audit.write_text(audit.read_text(encoding="utf-8") + "\nfrom benchsmith.cli import console\n", encoding="utf-8")
    (tmp_path / "stores" / "planted_a.py").write_text("from benchsmith.stores import planted_b\n", encoding="utf-8")
    (tmp_path / "stores" / "planted_b.py").write_text("from . import planted_a\n", encoding="utf-8")
    graph = import_graph(tmp_path)
    assert imports_up(graph) == [
        "benchsmith.graphs.audit.graph (floor 3) imports benchsmith.cli.console (floor 5)",
        "benchsmith.graphs.runtime.progress (floor 2) imports benchsmith.jobs.evaluate (floor 4)",
    ]
    assert ["benchsmith.stores.planted_a", "benchsmith.stores.planted_b"] in cycles(graph)


def test_the_modules_of_words_and_history_import_nothing_of_benchsmith():
    """benchsmith/words.py and benchsmith/history.py sit below every layer, which all import them."""
    from tests.import_floors import import_graph

    graph = import_graph(ROOT)
    assert graph["benchsmith.words"] == set() and graph["benchsmith.history"] == set()


def test_the_seam_imports_no_role():
    """agents/seam/ is the plumbing under the roles: of agents/ it may import only itself and the
    light constants (agents/defaults.py), so a role can change without touching the seam."""
    from tests.import_floors import import_graph

    allowed = {"benchsmith.agents.defaults"}
    for module, targets in import_graph(ROOT).items():
        if module.startswith("benchsmith.agents.seam"):
            roles = {
                t for t in targets if t.startswith("benchsmith.agents") and not t.startswith("benchsmith.agents.seam")
            }
            assert roles <= allowed, f"{module} imports {sorted(roles - allowed)}"
