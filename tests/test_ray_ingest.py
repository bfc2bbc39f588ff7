"""Ingestion with ``--ray`` on a real local Ray cluster (a head and two worker nodes on this machine,
tests/ray_cluster.py): the stages run as Ray Data pipelines on the nodes and the embedder on Ray
actors, and the run writes the single-process run's files and collection. A worker node SIGKILLed
while both actors embed loses nothing and stores nothing twice; a rerun stores nothing new.
"""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import benchsmith
from benchsmith.graphs.ingest import (
    CHUNKS_FILE,
    CLEANED_FILE,
    DOCUMENTS_FILE,
    DUPLICATES_FILE,
    FILTERED_FILE,
    KEPT_FILE,
    SKIPPED_FILE,
    UNIQUE_FILE,
)
from benchsmith.graphs.runtime.resources import chroma_client, register_embedder
from benchsmith.stores.persistence.workspace import Workspace
from tests.ray_cluster import NODE, MarkingEmbedder, local_cluster

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.slow

WAIT_S = 240.0  # a bound on a busy 2-core machine, never an expectation
STAGE_FILES = (DOCUMENTS_FILE, SKIPPED_FILE, CLEANED_FILE, CHUNKS_FILE, UNIQUE_FILE, DUPLICATES_FILE, KEPT_FILE)
WORDS = [f"word{i}" for i in range(300)]
SETTINGS = {"chunk_size": 300, "min_chars": 40, "batch_size": 8}


def write_corpus(root: Path, documents: int = 48) -> Path:
    """Pages with a shared footer (boilerplate), near-copies of earlier pages (near-duplicates),
    a table of numbers (filtered) and a Python file."""
    rng = random.Random(3)
    root.mkdir(parents=True)
    pages: list[str] = []
    for number in range(documents):
        if number % 6 == 5:  # a near-copy of an earlier page: a word changed
            words = rng.choice(pages).split(" ")
            words[rng.randrange(len(words))] = "edited"
            body = " ".join(words)
        else:
            body = "\n\n".join(
                " ".join(rng.choice(WORDS) for _ in range(45)).capitalize() + "." for _ in range(rng.randint(2, 5))
            )
        pages.append(body)
        footer = "Copyright the project authors, all rights reserved. Edit this page on the forge."
        (root / f"page{number:03}.md").write_text(f"# Page {number}\n\n{body}\n\n{footer}\n", encoding="utf-8")
    table = "".join(f"| {row} | {row * 7} | {row * 13} |\n" for row in range(40))
    (root / "table.md").write_text(f"# Numbers\n\n{table}", encoding="utf-8")
    (root / "module.py").write_text("def answer():\n    '''The answer.'''\n    return 42\n" * 4, encoding="utf-8")
    (root / "binary.bin").write_bytes(bytes(range(256)))
    return root


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("ray-ingest")
    with local_cluster() as started:
        yield {**started, "root": root, "corpus": write_corpus(root / "corpus")}


def ingested(
    cluster: dict[str, Any], name: str, delay_s: float = 0.0, ray_address: str | None = None, into: str | None = None
) -> Any:
    """Run ``name`` of the corpus's ingestion, in workspace ``into`` (default: its own)."""
    marks = cluster["root"] / name / "marks"
    marks.mkdir(parents=True, exist_ok=True)
    embedder = register_embedder(MarkingEmbedder(marks, delay_s))
    return benchsmith.ingest(
        [str(cluster["corpus"])],
        collection="docs",
        run_id=name,
        embedder=embedder,
        workspace=str(cluster["root"] / (into or name) / "ws"),
        ray=ray_address,
        **SETTINGS,
    )


def collection_of(workspace: Path) -> dict[str, Any]:
    stored = (
        chroma_client(Workspace.resolve(workspace), None)
        .get_collection("docs")
        .get(include=["documents", "metadatas", "embeddings"])
    )
    order = np.argsort(stored["ids"])
    return {
        "ids": [stored["ids"][row] for row in order],
        "documents": [stored["documents"][row] for row in order],
        "metadatas": [stored["metadatas"][row] for row in order],
        "embeddings": np.asarray(stored["embeddings"])[order],
    }


def assert_same_collection(one: Path, other: Path) -> None:
    first, second = collection_of(one), collection_of(other)
    assert first["ids"] == second["ids"] and len(first["ids"]) > 0
    assert first["documents"] == second["documents"] and first["metadatas"] == second["metadatas"]
    np.testing.assert_allclose(first["embeddings"], second["embeddings"], atol=1e-6)


def assert_same_files(one: Path, other: Path) -> None:
    for name in (*STAGE_FILES, FILTERED_FILE):
        assert (one / name).read_bytes() == (other / name).read_bytes(), name


@pytest.fixture(scope="module")
def solo(cluster):
    return ingested(cluster, "solo")


def test_a_ray_ingestion_writes_the_files_and_the_collection_one_process_writes(cluster, solo, monkeypatch):
    def in_this_process(*args: Any) -> None:
        raise AssertionError("a stage's batch was mapped in the run's own process")

    # With --ray the batches are mapped on the nodes: mapping one here fails the run.
    monkeypatch.setattr("benchsmith.graphs.ingest_batches.chunk_document", in_this_process)
    on_ray = ingested(cluster, "on-ray", ray_address=cluster["cluster"].address)
    assert solo.duplicates > 0 and solo.filtered > 0 and solo.files_skipped > 0  # each stage had work
    counts = ("files_read", "documents", "chunks", "duplicates", "filtered", "indexed", "collection_count")
    assert {name: getattr(on_ray, name) for name in counts} == {name: getattr(solo, name) for name in counts}
    assert on_ray.pages_that_lost_chunks == solo.pages_that_lost_chunks
    root = cluster["root"]
    assert_same_files(root / "solo" / "ws" / "runs" / "solo", root / "on-ray" / "ws" / "runs" / "on-ray")
    assert_same_collection(root / "solo" / "ws", root / "on-ray" / "ws")
    marks = {path.name for path in (root / "on-ray" / "marks").iterdir()}
    assert len(marks) == 2  # two actors embedded, one per worker node, none of them this process


def test_a_worker_node_killed_mid_ingestion_loses_nothing_and_duplicates_nothing(cluster, solo):
    marks = cluster["root"] / "killed" / "marks"
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = ingested(cluster, "killed", delay_s=0.4, ray_address=cluster["cluster"].address)
        except BaseException as error:
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = threading.Event()
    while not (marks.exists() and len(list(marks.iterdir())) >= 2):  # both actors are embedding
        assert thread.is_alive() and not deadline.wait(0.05), outcome.get("error", "the actors never both embedded")
    cluster["cluster"].remove_node(cluster["workers"].pop(0), allow_graceful=False)  # SIGKILLs its processes
    thread.join(WAIT_S)
    assert not thread.is_alive(), "the ingestion did not finish after the node was lost"
    assert "error" not in outcome, outcome.get("error")
    root = cluster["root"]
    assert outcome["value"].collection_count == solo.collection_count
    assert_same_files(root / "solo" / "ws" / "runs" / "solo", root / "killed" / "ws" / "runs" / "killed")
    assert_same_collection(root / "solo" / "ws", root / "killed" / "ws")
    # The same ingestion again, a new run into the same collection, stores nothing new.
    rerun = ingested(cluster, "killed-rerun", ray_address=cluster["cluster"].address, into="killed")
    assert rerun.newly_embedded == 0 and rerun.collection_count == solo.collection_count
    assert_same_collection(root / "solo" / "ws", root / "killed" / "ws")
    cluster["workers"].append(cluster["cluster"].add_node(**NODE))
