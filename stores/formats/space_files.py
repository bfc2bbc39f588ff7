"""Reading a strategy space file (YAML, or JSON, which YAML reads too) for ``benchsmith select``.

Only the parsing lives here; what the keys mean and how they are checked is
``tools/retrieval/strategy_space.py``. An unreadable file or invalid YAML stops with an
:class:`InputError` naming the file and line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import text_lines


class _RepeatedKey(Exception):
    def __init__(self, key: object, line: int, first_line: int):
        super().__init__(key)
        self.key, self.line, self.first_line = key, line, first_line


class _UniqueKeyLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no type information
    """yaml.safe_load, refusing a mapping that names a key twice."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first: dict[object, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            if isinstance(key, str | int | float | bool) and key in first:
                raise _RepeatedKey(key, line, first[key])
            if isinstance(key, str | int | float | bool):
                first[key] = line
        result: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return result


def read_space_file(path: str | Path) -> Any:
    path = Path(path)
    text = "".join(text_lines(path))  # a missing file, a directory or bad bytes stop here, named
    if not text.strip():
        raise InputError(f"{path}: empty strategy space file")
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader
    except _RepeatedKey as repeated:
        raise InputError(
            f"{path}:{repeated.line}: key {repeated.key!r} repeats line {repeated.first_line} "
            "(YAML would keep the last silently)"
        ) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise InputError(f"{where}: invalid YAML ({getattr(error, 'problem', None) or error})") from None
