"""The import graph of benchsmith's modules, read from the source with ast (imports inside
functions and under TYPE_CHECKING count too), and the floor each module lives on.

Floors, top to bottom (docs/design.md): the Python API (benchsmith/__init__) 6, the CLI
(benchsmith/cli) 5, the job functions (benchsmith/jobs) and the pages' server (benchsmith/pages) 4, the graph modules (graphs/*.py,
graphs/synthesis, graphs/audit, graphs/select, graphs/hardneg) 3, the runtime they share
(graphs/runtime) 2, the four layers agents/tools/stores/evals 1 (their own rules:
tests/test_architecture.py), the bottom
(benchsmith/words.py and its siblings: text primitives every layer may use) 0. A module may
import only modules of its own floor or below, and no set of modules may import each other in a
circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

PRODUCT_FOLDERS = ("benchsmith", "graphs", "agents", "tools", "stores", "evals")
FACE_FLOORS = {
    "cli": 5,
    "jobs": 4,
    "pages": 4,
}  # pages: the label and review pages' server, beside the jobs  # the rest of the face (words, history, ...) is the bottom: 0


def floor(module: str) -> int:
    parts = module.split(".")
    if module == "benchsmith":
        return 6
    if parts[1] in FACE_FLOORS:
        return FACE_FLOORS[parts[1]]
    if parts[1] == "graphs":
        return 2 if len(parts) > 2 and parts[2] == "runtime" else 3  # any other graphs module: 3
    return 1 if parts[1] in ("agents", "tools", "stores", "evals") else 0


def module_paths(root: Path) -> dict[str, Path]:
    """``{dotted name: file}`` of every product module under ``root`` (a checkout's layout)."""
    found = {}
    for folder in PRODUCT_FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts if parts[0] == "benchsmith" else ["benchsmith", *parts])] = path
    return found


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The product modules ``name`` imports (``from package import module`` names the module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            candidates = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in known:
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                targets.add(candidate)
    return targets


def import_graph(root: Path) -> dict[str, set[str]]:
    known = module_paths(root)
    return {name: imports_of(name, path, known) for name, path in known.items()}


def imports_up(graph: dict[str, set[str]]) -> list[str]:
    return [
        f"{module} (floor {floor(module)}) imports {target} (floor {floor(target)})"
        for module, targets in sorted(graph.items())
        for target in sorted(targets)
        if floor(target) > floor(module)
    ]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found
