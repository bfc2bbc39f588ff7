"""Ingestion with ``--ray`` on a real local Ray cluster (a head and two worker nodes on this machine,
tests/ray_cluster.py): the stages run as Ray Data pipelines on the nodes and the embedder on Ray
actors, and the run writes the single-process run's files and collection. Near-duplicates whose
chunks were keyed on different nodes are grouped on the cluster and give the single-process run's
pairs. A worker node SIGKILLed while both actors embed loses nothing and stores nothing twice; a
rerun stores nothing new. A worker node SIGKILLed while it maps a batch of a Ray Data stage (the
chunk stage's, the dedup keying's) loses nothing either: the batch is mapped again on the other
node and the run writes the single-process run's files and collection.
"""

from __future__ import annotations

import functools
import json
import random
import threading
import time
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
from benchsmith.tools.corpus.documents import page_of
from tests.ray_cluster import NODE, MarkingEmbedder, batch_mark, keyed_on_node, local_cluster, stalled_on_node

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.slow

WAIT_S = 240.0  # a bound on a busy 2-core machine, never an expectation
STAGE_FILES = (DOCUMENTS_FILE, SKIPPED_FILE, CLEANED_FILE, CHUNKS_FILE, UNIQUE_FILE, DUPLICATES_FILE, KEPT_FILE)
WORDS = [f"word{i}" for i in range(300)]
SETTINGS = {"chunk_size": 300, "min_chars": 40, "batch_size": 8}
SMALL_CHUNK_BATCH = 8  # chunks keyed by one Ray Data task: a corpus of a hundred chunks spans both nodes
SMALL_DOCUMENT_BATCH = 8  # documents cleaned or chunked by one Ray Data task: several tasks a stage


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


def write_near_duplicate_corpus(root: Path) -> Path:
    """Sixty one-chunk pages, then forty copies of pages taken from anywhere before them: exact
    copies, copies with a word or two changed (near-duplicates, one a copy of a copy) and copies
    with half their words changed (they share bands with their page, below the threshold); and a
    page repeated under another name twice over."""
    rng = random.Random(8)
    root.mkdir(parents=True)
    bodies = [" ".join(rng.choice(WORDS) for _ in range(30)).capitalize() + "." for _ in range(60)]
    for number in range(40):
        words = rng.choice(bodies).split(" ")
        for _ in range((0, 1, 2, 15)[number % 4]):
            words[rng.randrange(len(words))] = rng.choice(WORDS)
        bodies.append(" ".join(words))
    bodies += [bodies[3], bodies[3]]
    for number, body in enumerate(bodies):
        (root / f"page{number:03}.md").write_text(f"# Page {number}\n\n{body}\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("ray-ingest")
    with local_cluster() as started:
        yield {
            **started,
            "root": root,
            "corpus": write_corpus(root / "corpus"),
            "near-duplicates": write_near_duplicate_corpus(root / "near-duplicates"),
        }


def ingested(
    cluster: dict[str, Any],
    name: str,
    delay_s: float = 0.0,
    ray_address: str | None = None,
    into: str | None = None,
    corpus: str = "corpus",
) -> Any:
    """Run ``name`` of the ingestion of ``corpus``, in workspace ``into`` (default: its own)."""
    marks = cluster["root"] / name / "marks"
    marks.mkdir(parents=True, exist_ok=True)
    embedder = register_embedder(MarkingEmbedder(marks, delay_s))
    return benchsmith.ingest(
        [str(cluster[corpus])],
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


@pytest.fixture(scope="module")
def near_solo(cluster):
    return ingested(cluster, "near-solo", corpus="near-duplicates")


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


def test_near_duplicates_keyed_on_different_nodes_are_grouped_on_the_cluster_into_one_process_pairs(
    cluster, near_solo, monkeypatch
):
    solo = near_solo

    def in_this_process(*args: Any) -> None:
        raise AssertionError("the run's own process keyed or grouped the chunks")

    # With --ray the chunks are keyed and grouped on the nodes: keying or grouping them here fails the run.
    for name in (
        "benchsmith.graphs.ingest_batches.row_keys",
        "benchsmith.tools.corpus.dedup.rows_sharing_a_key",
        "benchsmith.graphs.runtime.ray_key_groups.rows_sharing_a_key",
        "benchsmith.graphs.runtime.ray_key_groups.candidate_groups",
    ):
        monkeypatch.setattr(name, in_this_process)
    nodes = cluster["root"] / "near-on-ray" / "nodes"
    nodes.mkdir(parents=True)
    monkeypatch.setattr("benchsmith.graphs.ingest.row_key_batch", functools.partial(keyed_on_node, str(nodes)))
    monkeypatch.setattr("benchsmith.graphs.ingest.CHUNK_BATCH", SMALL_CHUNK_BATCH)
    on_ray = ingested(cluster, "near-on-ray", ray_address=cluster["cluster"].address, corpus="near-duplicates")

    root = cluster["root"]
    solo_run, ray_run = (
        root / "near-solo" / "ws" / "runs" / "near-solo",
        root / "near-on-ray" / "ws" / "runs" / "near-on-ray",
    )
    assert_same_files(solo_run, ray_run)
    assert_same_collection(root / "near-solo" / "ws", root / "near-on-ray" / "ws")
    assert (on_ray.chunks, on_ray.duplicates, on_ray.indexed) == (solo.chunks, solo.duplicates, solo.indexed)
    # Which node keyed each chunk: the node of the batch (of SMALL_CHUNK_BATCH rows) it was in.
    ids = [json.loads(line)["id"] for line in (ray_run / CHUNKS_FILE).read_text(encoding="utf-8").splitlines()]
    row_of = {chunk_id: row for row, chunk_id in enumerate(ids)}
    node_of_batch = [(nodes / batch_mark(ids[first])).read_text() for first in range(0, len(ids), SMALL_CHUNK_BATCH)]
    pairs = [json.loads(line) for line in (ray_run / DUPLICATES_FILE).read_text(encoding="utf-8").splitlines()]
    batches = [
        (row_of[pair["removed_id"]] // SMALL_CHUNK_BATCH, row_of[pair["kept_id"]] // SMALL_CHUNK_BATCH)
        for pair in pairs
    ]
    assert len(pairs) >= 25 and any(pair["jaccard"] < 1 for pair in pairs)
    assert len(set(node_of_batch)) == 2  # both worker nodes keyed chunks
    assert sum(node_of_batch[removed] != node_of_batch[kept] for removed, kept in batches) >= 3
    # The copies with half their words changed are below the threshold: kept.
    half_changed = {f"page{number:03}.md" for number in range(63, 100, 4)}
    assert not {Path(page_of(pair["removed_id"])).name for pair in pairs} & half_changed


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


def wait_for(done: Any, thread: threading.Thread, outcome: dict[str, Any], what: str) -> None:
    """Until ``done()``, while the ingestion's thread runs and for WAIT_S at most; its error, or ``what`` never
    came, fails (a run that stalls fails the test instead of holding CI until its limit)."""
    pause = threading.Event()
    deadline = time.monotonic() + WAIT_S
    while not done():
        assert thread.is_alive() and time.monotonic() < deadline and not pause.wait(0.05), outcome.get(
            "error", f"{what} never came"
        )


@pytest.mark.parametrize(
    ("mapping", "batch_setting", "batch_size", "corpus", "file", "shows_in"),
    [  # the map, its batch size, the corpus, the file it maps and the one its work shows in
        ("chunk_batch", "DOCUMENT_BATCH", SMALL_DOCUMENT_BATCH, "corpus", CLEANED_FILE, CHUNKS_FILE),
        ("row_key_batch", "CHUNK_BATCH", SMALL_CHUNK_BATCH, "near-duplicates", CHUNKS_FILE, DUPLICATES_FILE),
    ],
    ids=["chunking", "dedup-keying"],
)
def test_a_worker_node_killed_while_it_maps_a_stage_batch_loses_nothing_and_duplicates_nothing(
    cluster, solo, near_solo, monkeypatch, mapping, batch_setting, batch_size, corpus, file, shows_in
):
    name, single = f"killed-mapping-{mapping}", {"corpus": ("solo", solo), "near-duplicates": ("near-solo", near_solo)}
    marks = cluster["root"] / name / "stalls"
    marks.mkdir(parents=True)
    # The stage's first batch stalls on its node until that node is killed; the others are mapped as usual.
    original = getattr(benchsmith.graphs.ingest, mapping)
    monkeypatch.setattr(f"benchsmith.graphs.ingest.{mapping}", functools.partial(stalled_on_node, str(marks), original))
    monkeypatch.setattr(f"benchsmith.graphs.ingest.{batch_setting}", batch_size)
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = ingested(cluster, name, ray_address=cluster["cluster"].address, corpus=corpus)
        except BaseException as error:
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    wait_for((marks / "stalled").exists, thread, outcome, "a stalled batch")
    stalled = json.loads((marks / "stalled").read_text())
    (killed,) = [node for node in cluster["workers"] if node.node_id == stalled["node"]]
    cluster["workers"].remove(killed)
    cluster["cluster"].remove_node(killed, allow_graceful=False)  # SIGKILLs its processes, the stalled task's too
    wait_for((marks / "rerun").exists, thread, outcome, "the stalled batch mapped again")
    # Mapped again on the node left, before any other joins; then one joins, as a cluster's autoscaler
    # replaces a lost node (the embed stage's actors, one per CPU the cluster counts, find room).
    assert (marks / "rerun").read_text() == cluster["workers"][0].node_id != stalled["node"]
    cluster["workers"].append(cluster["cluster"].add_node(**NODE))
    thread.join(WAIT_S)
    assert not thread.is_alive(), "the ingestion did not finish after the node was lost"
    assert "error" not in outcome, outcome.get("error")
    root, (single_name, single_run) = cluster["root"], single[corpus]
    counts = ("documents", "chunks", "duplicates", "filtered", "indexed", "collection_count")
    assert {count: getattr(outcome["value"], count) for count in counts} == {
        count: getattr(single_run, count) for count in counts
    }
    assert_same_files(root / single_name / "ws" / "runs" / single_name, root / name / "ws" / "runs" / name)
    assert_same_collection(root / single_name / "ws", root / name / "ws")
    # The lost batch's work shows in the files compared: its ids are in the stage's output.
    run_dir = root / name / "ws" / "runs" / name
    lines = [line + "\n" for line in (run_dir / file).read_text(encoding="utf-8").split("\n")[:-1]]  # as Ray reads them
    (lost,) = [
        lines[first : first + batch_size]
        for first in range(0, len(lines), batch_size)
        if batch_mark(lines[first]) == stalled["batch"]
    ]
    output = (run_dir / shows_in).read_text(encoding="utf-8")
    assert any(json.loads(line)["id"] in output for line in lost)
