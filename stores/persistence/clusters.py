"""Persisted clusterings: ``<workspace>/clusters/<collection>-n<size>-k<neighbours>-s<seed>.json``,
``…-s<seed>-pages-<kind>+<kind>.json`` for a clustering of the chunks of some page kinds only.

A clustering depends only on the collection, its parameters and the page kinds it walks, so
synthesis runs with the same ones share it instead of recomputing the traversal. A clustering of
other page kinds is never taken for it: a clustering of every chunk serves a request for some
kinds only when the collection holds no chunk of another kind (its ``page_kinds_present``), and
then it is the one stored (a filter that leaves nothing out makes no file of its own).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.stores.persistence.files import write_json_atomic
from benchsmith.stores.persistence.workspace import Workspace


@dataclass
class StoredClustering:
    collection: str
    size: int
    neighbours: int
    seed: int
    clusters: list[list[str]]  # chunk ids, in path order; cluster i is clusters[i]
    dropped: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    page_kinds: list[str] | None = None  # the page kinds of the chunks it walks; None: all chunks

    @property
    def chunk_count(self) -> int:
        return sum(map(len, self.clusters))


def clustering_path(
    workspace: Workspace,
    collection: str,
    size: int,
    neighbours: int,
    seed: int,
    page_kinds: Sequence[str] | None = None,
) -> Path:
    """The clustering's file; ``page_kinds`` None (all chunks) keeps the name it had before page kinds."""
    kinds = f"-pages-{'+'.join(sorted(set(page_kinds)))}" if page_kinds is not None else ""
    return workspace.root / "clusters" / f"{collection}-n{size}-k{neighbours}-s{seed}{kinds}.json"


def save_clustering(workspace: Workspace, clustering: StoredClustering) -> Path:
    path = clustering_path(
        workspace, clustering.collection, clustering.size, clustering.neighbours, clustering.seed, clustering.page_kinds
    )
    write_json_atomic(path, asdict(clustering), indent=None)
    return path


def read_clustering(path: Path) -> StoredClustering | None:
    if not path.exists():
        return None
    return StoredClustering(**json.loads(path.read_text(encoding="utf-8")))


def clustering_paths(
    workspace: Workspace, collection: str, size: int, neighbours: int, seed: int, page_kinds: Sequence[str] | None
) -> list[Path]:
    """The files that may hold the clustering of these page kinds (None: all), the one of its own first."""
    paths = [clustering_path(workspace, collection, size, neighbours, seed, page_kinds)]
    return paths if page_kinds is None else [*paths, clustering_path(workspace, collection, size, neighbours, seed)]


def clustering_serves(clustering: StoredClustering, page_kinds: Sequence[str] | None) -> bool:
    """Does ``clustering`` walk exactly the chunks of ``page_kinds`` (None: every chunk)?"""
    if clustering.page_kinds is None and page_kinds is not None:
        present = clustering.stats.get("page_kinds_present")
        return present is not None and set(present) <= set(page_kinds)
    return (None if clustering.page_kinds is None else sorted(clustering.page_kinds)) == (
        None if page_kinds is None else sorted(set(page_kinds))
    )


def find_clustering(
    workspace: Workspace, collection: str, size: int, neighbours: int, seed: int, page_kinds: Sequence[str] | None
) -> StoredClustering | None:
    """The stored clustering that walks exactly the chunks of ``page_kinds``, or None."""
    for path in clustering_paths(workspace, collection, size, neighbours, seed, page_kinds):
        if (clustering := read_clustering(path)) is not None and clustering_serves(clustering, page_kinds):
            return clustering
    return None
