"""Arrays with a JSON header (``meta``) in one ``.npz`` file: how the workspace keeps its numeric
indexes (corpus statistics, BM25 score matrices). Each header carries its ``format`` version, so a
file of another version reads as absent and is built again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from benchsmith.stores.persistence.files import atomic_writer


def save_arrays(path: Path, meta: dict[str, Any], **arrays: np.ndarray) -> Path:
    """Written whole or not at all (a temporary file renamed over the target)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    header = np.frombuffer(json.dumps(meta, ensure_ascii=False).encode("utf-8"), dtype=np.uint8)
    named: dict[str, Any] = {"meta": header, **arrays}  # Any: savez's own keywords (allow_pickle) are no array
    with atomic_writer(path, binary=True) as handle:
        np.savez(handle, **named)
    return path


def load_arrays(path: Path, format_version: int) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
    """The header and the arrays by name, or None: no file, or a file of another format version."""
    if not path.exists():
        return None
    with np.load(path) as stored:
        meta = json.loads(stored["meta"].tobytes().decode("utf-8"))
        if meta.get("format") != format_version:
            return None
        return meta, {name: stored[name] for name in stored.files if name != "meta"}
