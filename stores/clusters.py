"""Persisted clusterings: ``<workspace>/clusters/<collection>-n<size>-k<neighbours>-s<seed>.json``.

A clustering depends only on the collection and its parameters, so synthesis runs with the
same parameters share it instead of recomputing the traversal.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.stores.files import write_json_atomic
from benchsmith.stores.workspace import Workspace


@dataclass
class StoredClustering:
    collection: str
    size: int
    neighbours: int
    seed: int
    clusters: list[list[str]]  # chunk ids, in path order; cluster i is clusters[i]
    dropped: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def chunk_count(self) -> int:
        return sum(map(len, self.clusters))


def clustering_path(workspace: Workspace, collection: str, size: int, neighbours: int, seed: int) -> Path:
    return workspace.root / "clusters" / f"{collection}-n{size}-k{neighbours}-s{seed}.json"


def save_clustering(workspace: Workspace, clustering: StoredClustering) -> Path:
    path = clustering_path(workspace, clustering.collection, clustering.size, clustering.neighbours, clustering.seed)
    write_json_atomic(path, asdict(clustering), indent=None)
    return path


def load_clustering(workspace: Workspace, collection: str, size: int, neighbours: int, seed: int) -> StoredClustering | None:
    path = clustering_path(workspace, collection, size, neighbours, seed)
    if not path.exists():
        return None
    return StoredClustering(**json.loads(path.read_text(encoding="utf-8")))
