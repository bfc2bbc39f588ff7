"""A collection whose documents each give several distinct questions (tests/doc_pages.py), so
turns of every type find chunks with questions left."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchsmith.graphs.ingest import IngestContext
from benchsmith.graphs.ingest import builder as ingest_builder
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.stores.persistence.workspace import Workspace
from tests.doc_pages import write_pages
from tests.embedders import HashingEmbedder
from tests.synthesis_fixtures import COLLECTION, TOPICS

ALL_RATES = {"unanswerable_rate": 0.2, "partial_rate": 0.1, "underspecified_rate": 0.1, "multi_gold_rate": 0.15}
QUESTION_MIX = "factoid=0.3,explanation=0.15,how-to=0.15,yes/no=0.1,comparison=0.1,summary=0.1,keyword=0.1"


def rich_workspace(tmp_path_factory: Any, name: str) -> Workspace:
    """A fresh workspace holding the rich collection, for a module-scoped fixture."""
    root = tmp_path_factory.mktemp(name)
    workspace = Workspace.resolve(root / "ws")
    build_rich_collection(workspace, root / "corpus")
    return workspace


def build_rich_collection(
    workspace: Workspace, corpus_dir: Path, documents: int = 100, seed: int = 0
) -> dict[str, Any]:
    """``documents`` one-chunk documentation pages about ten topics (tests/doc_pages.py)."""
    write_pages(corpus_dir, TOPICS, documents, seed)
    return ingest(workspace, corpus_dir)


def ingest(workspace: Workspace, corpus_dir: Path, run_id: str = "ingest") -> dict[str, Any]:
    """The folder's files into the test collection, with the hashing embedder."""
    context = IngestContext(workspace=str(workspace.root), embedder=register_embedder(HashingEmbedder()), min_chars=20)
    return run_job(
        ingest_builder,
        job="ingest",
        workspace=workspace,
        run_id=run_id,
        inputs={"run_id": run_id, "sources": [str(corpus_dir)], "collection": COLLECTION},
        context=context,
        settings={},
    ).values
