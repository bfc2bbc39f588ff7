"""Names an example defines: a tutorial's own variables, functions and parameters, which no user asks about.

"The variable items_t is a tuple with 3 items" explains the example above it (``def process_items(items_t:
Tuple[int, int, str], ...)``); asked "Can you explain what items_t is?", the question is about the page's
example, not about the library (FastAPI's sources, development round 25; a docs example's ``expiry_date``, drf
round 13, and ``sometheme``, mkdocs round 1, were read broken alike). The names come from Python's own parser:
what a fenced example binds by ``def``, ``class``, a parameter, an assignment, a ``for`` or a ``with``; an
import binds the library's names, which stay askable.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable

from benchsmith.passages import Unit
from benchsmith.words import CODE_SHAPED


def example_defined_names(passage: Iterable[Unit]) -> frozenset[str]:
    """The code-shaped names the passage's fenced examples bind (empty when none parses as Python)."""
    names: set[str] = set()
    for unit in passage:
        if unit.kind == "code" and unit.fenced:
            names |= {name for name in _bound_names(unit.text) if CODE_SHAPED.search(name)}
    return frozenset(names)


def _bound_names(code: str) -> set[str]:
    try:
        trees = [ast.parse(textwrap.dedent(code))]
    except SyntaxError:
        # a chunk's example may have lost its indentation: each line that parses alone still says what it binds
        trees = [tree for line in code.splitlines() if (tree := _line_tree(line.strip())) is not None]
    return {name for tree in trees for node in ast.walk(tree) for name in _binds(node)}


def _line_tree(line: str) -> ast.Module | None:
    try:
        return ast.parse(f"{line} pass" if line.endswith(":") else line)
    except SyntaxError:
        return None


def _binds(node: ast.AST) -> Iterable[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        yield node.name
        arguments = node.args
        yield from (arg.arg for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs])
    elif isinstance(node, ast.ClassDef):
        yield node.name
    elif isinstance(node, ast.Assign):
        yield from _names_in(*node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        yield from _names_in(node.target)
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        yield from _names_in(node.optional_vars)


def _names_in(*targets: ast.AST) -> Iterable[str]:
    """The plain names a target binds: ``a``, ``a, b``; not ``obj.attr`` or ``items[0]``, which bind nothing new."""
    for target in targets:
        if isinstance(target, ast.Name):
            yield target.id
        elif isinstance(target, (ast.Tuple, ast.List)):
            yield from _names_in(*target.elts)
        elif isinstance(target, ast.Starred):
            yield from _names_in(target.value)
