"""One chunker and one id scheme per corpus: ingest, nuggets and select chunk a tree the same
way and name its chunks ``<path>:<start>-<end>``, and a tree is embedded once per embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsmith.graphs.ingest import IngestContext, builder
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.graphs.select.retrieval import chunk_index, corpus_of
from benchsmith.jobs.select import select
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.vectors import VectorStore, open_client
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.documents import content_id
from benchsmith.tools.corpus.source_corpus import build_source_corpus
from benchsmith.tools.defaults import DEFAULT_MIN_CHARS
from benchsmith.tools.retrieval.chunking_strategies import ChunkingSpec
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction
from tests.embedders import HashingEmbedder
from tests.select_fixtures import scripted_judge

CHUNK_SIZE = 300
PARAGRAPH = (
    "The harbour master logs every ship that enters the port, with its cargo, its crew and the hour "
    "it docked; the log is read each morning by the customs office. "
)
MARKDOWN = "\n\n".join(
    ["# Harbour guide", PARAGRAPH * 2, "## Customs", PARAGRAPH, "Short line.", "## Crews", PARAGRAPH * 3]
)
PYTHON = '''"""Ships and their cargo."""


def unload(ship):
    """Unload every crate of the ship onto the quay, counting them as they come off, café by café."""
    return [crate for crate in ship.crates]


class Manifest:
    """What a ship carries: the crates, their owners and the port each one is bound for, in order."""

    def owners(self):
        return sorted({crate.owner for crate in self.crates})
'''


class RecordingEmbedder(HashingEmbedder):
    """A hashing embedder that keeps every text it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def encode(self, texts):
        self.texts.extend(texts)
        return super().encode(texts)


def write_tree(root: Path) -> Path:
    (root / "docs guide").mkdir(parents=True)
    (root / "docs guide" / "harbour.md").write_text(MARKDOWN, encoding="utf-8")
    (root / "ships.py").write_text(PYTHON, encoding="utf-8")
    (root / "notes.txt").write_text("\n\n".join([PARAGRAPH * 2, "Ünïcode before: " + PARAGRAPH]), encoding="utf-8")
    # A paragraph too long to share a chunk with the short one after it: ingestion drops that one.
    (root / "quay.txt").write_text(
        "Crates wait on the quay. " * 11 + "Then they go.\n\nThe end of the notes.", encoding="utf-8"
    )
    return root


def ingest(workspace: Workspace, run_id: str, tree: Path, embedder: HashingEmbedder) -> dict[str, str]:
    """``{chunk id: text}`` of the run's chunks (before deduplication and the quality filter)."""
    context = IngestContext(
        workspace=str(workspace.root),
        embedder=register_embedder(embedder),
        chunk_size=CHUNK_SIZE,
        min_chars=DEFAULT_MIN_CHARS,
        min_quality=0.0,
        dedup_threshold=1.0,
    )
    run_job(
        builder,
        job="ingest",
        workspace=workspace,
        run_id=run_id,
        inputs={"run_id": run_id, "sources": [str(tree)], "collection": f"docs-{run_id}"},
        context=context,
        settings={"sources": [str(tree)], "collection": f"docs-{run_id}"},
    )
    return {record["id"]: record["text"] for record in load_jsonl(RunDirectory(workspace, run_id).file("chunks.jsonl"))}


def select_chunks(tree: Path) -> dict[str, str]:
    return {chunk.id: chunk.text for chunk in chunk_index(corpus_of([str(tree)]), ChunkingSpec(size=CHUNK_SIZE)).chunks}


@pytest.fixture
def workspace(tmp_path) -> Workspace:
    return Workspace.resolve(tmp_path / "ws")


def test_ingest_nuggets_and_select_give_the_same_span_the_same_id(workspace, tmp_path):
    tree = write_tree(tmp_path / "tree")
    ingested = ingest(workspace, "r1", tree, HashingEmbedder())
    nuggets = {chunk.id: chunk.text for chunk in build_source_corpus([str(tree)], CHUNK_SIZE, DEFAULT_MIN_CHARS).chunks}
    selected = select_chunks(tree)
    assert len(ingested) > 4 and {chunk_id.rpartition(":")[0] for chunk_id in ingested} == {
        "docs%20guide/harbour.md",
        "ships.py",
        "notes.txt",
        "quay.txt",
    }
    assert nuggets == ingested
    # Select keeps the short chunks ingestion drops; every other chunk is ingestion's, with its id.
    assert {chunk_id: selected[chunk_id] for chunk_id in ingested} == ingested
    short = [text for chunk_id, text in selected.items() if chunk_id not in ingested]
    assert short and all(len(text) < DEFAULT_MIN_CHARS for text in short)


def test_the_same_tree_gives_the_same_ids_in_a_second_run(workspace, tmp_path):
    tree = write_tree(tmp_path / "tree")
    embedder = HashingEmbedder()
    first = ingest(workspace, "r1", tree, embedder)
    assert ingest(workspace, "r2", tree, embedder) == first
    assert [chunk.id for chunk in build_source_corpus([str(tree)], CHUNK_SIZE).chunks] == [
        chunk.id for chunk in build_source_corpus([str(tree)], CHUNK_SIZE).chunks
    ]


def test_select_embeds_none_of_the_chunks_ingest_embedded(workspace, tmp_path):
    tree = write_tree(tmp_path / "tree")
    embedder = RecordingEmbedder()
    ingested = ingest(workspace, "r1", tree, embedder)
    kept = {record["text"] for record in load_jsonl(RunDirectory(workspace, "r1").file("kept.jsonl"))}
    assert set(embedder.texts) == kept and kept
    embedder.texts.clear()
    questions = ["When does the customs office read the harbour log?", "Who owns the crates on a ship?"]
    query_file = tmp_path / "queries.jsonl"
    query_file.write_text(
        "".join(json.dumps({"id": f"q{n}", "question": question}) + "\n" for n, question in enumerate(questions)),
        encoding="utf-8",
    )
    judge = scripted_judge("harbour-judge", lambda question, passage: ["log"] if "log" in passage else [])
    select(
        query_file,
        corpus=[tree],
        chunkings=[f"size={CHUNK_SIZE}"],
        retrievers=["dense"],
        top_k=[2],
        judges=[judge],
        min_votes=1,
        resamples=50,
        embedder=register_embedder(embedder),
        workspace=workspace.root,
        run_id="s1",
    )
    chunks = select_chunks(tree)
    assert set(ingested) < set(chunks)  # the search's chunking holds ingestion's chunks and more
    # Only the queries and select's own chunks (the short ones ingestion dropped) reach the embedder.
    embedded_chunks = set(embedder.texts) - set(questions)
    assert embedded_chunks == set(chunks.values()) - kept
    assert not embedded_chunks & set(ingested.values())


def test_a_collection_of_content_hash_ids_is_refused_rather_than_filled_twice(workspace, tmp_path):
    tree = write_tree(tmp_path / "tree")
    embedder = HashingEmbedder()
    store = VectorStore(open_client(workspace), "docs-r1", ChromaEmbeddingFunction(embedder), embedder.name)
    text = "The harbour master logs every ship."
    store.upsert([content_id(text)], embedder.encode([text]), [text], [{"doc_id": "notes.txt", "position": 0}])
    with pytest.raises(InputError, match="content hash"):
        ingest(workspace, "r1", tree, embedder)
