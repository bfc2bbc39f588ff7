"""Reading a strategy space file (YAML, or JSON, which YAML reads too) for ``benchsmith select``.

Only the parsing lives here; what the keys mean and how they are checked is
``tools/strategy_space.py``. An unreadable file or invalid YAML stops with an
:class:`InputError` naming the file and line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from benchsmith.stores.errors import InputError


def read_space_file(path: str | Path) -> Any:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: strategy space file not found") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not valid UTF-8") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise InputError(f"{where}: invalid YAML ({getattr(error, 'problem', None) or error})") from None
