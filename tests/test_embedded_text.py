"""One rule for the text a passage is embedded with: the same questions score the same in
`validate` (the synthesized benchmark's collection vectors) and in `evaluate` of the same BEIR
folder, which reads the collection's vectors instead of embedding the corpus again; every report
states the rule."""

from __future__ import annotations

import json
import shutil

import pytest

import benchsmith
from benchsmith.graphs.runtime import corpus_indexes
from benchsmith.graphs.runtime.resources import chroma_client, register_embedder
from benchsmith.stores.persistence.bounded_cache import BoundedCache
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.embedded_text import EMBEDDED_TEXT_NOTE, embedded_text
from tests.embedders import HashingEmbedder
from tests.synthesis_fixtures import COLLECTION, build_collection, synthesize

RETRIEVERS = ["dense", "bm25", "hybrid:rrf(dense,bm25)"]


def test_a_passage_is_embedded_as_its_text_and_as_its_title_only_without_one():
    assert embedded_text("Guide › Install", "Run pip install.") == "Run pip install."
    assert embedded_text("A title only", "  ") == "A title only"


def table_question(text: str) -> str:
    """A question several pages half answer ("which quartz cache table?"): ranks that a passage's
    title in its vector would move (tests/doc_pages.py words every page alike)."""
    return f"Which {' '.join(text.split('returns the ')[1].split()[:3]).rstrip('.')}?"


def test_the_same_questions_score_the_same_in_validate_and_evaluate(tmp_path, monkeypatch):
    workspace = Workspace.resolve(tmp_path / "ws")
    build_collection(workspace, tmp_path / "pages", documents=24)
    run_dir = benchsmith.synthesize(
        COLLECTION,
        conversations=2,
        turns=3,
        llm="baseline",
        cluster_size=4,
        workspace=workspace.root,
        run_id="synthesized",
    ).run_dir
    corpus = load_jsonl(run_dir / "beir" / "corpus.jsonl")
    assert corpus
    assert all(record["title"] for record in corpus)  # titles the collection's vectors never saw
    labels = tmp_path / "mine.jsonl"
    labels.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"q{number}",
                    "question": table_question(record["text"]),
                    "gold": [
                        {"chunk_id": record["_id"], "document": record["_id"].split(":")[0], "evidence": "the passage"}
                    ],
                }
            )
            + "\n"
            for number, record in enumerate(corpus[:12])
        ),
        encoding="utf-8",
    )
    embedder = register_embedder(HashingEmbedder())
    validated = benchsmith.validate(
        run_dir,
        human=labels,
        retrievers=RETRIEVERS,
        embedder=embedder,
        depth=20,
        bootstrap=50,
        workspace=workspace.root,
        run_id="validated",
    )
    yours = {row["human_configuration"]: row["human"] for row in validated.results()["configurations"]}
    assert EMBEDDED_TEXT_NOTE in validated.results()["notes"]

    # The same questions as a BEIR folder of the user's own, evaluated by a process that holds
    # none of validate's indexes in memory.
    folder = shutil.copytree(validated.run_dir / "human", tmp_path / "my-beir")
    monkeypatch.setattr(corpus_indexes, "_dense_indexes", BoundedCache(4))
    evaluated = benchsmith.evaluate(
        folder,
        retrievers=RETRIEVERS,
        histories=["full"],
        embedder=embedder,
        measures=["nDCG@10"],
        workspace=workspace.root,
        run_id="evaluated",
    )
    assert {name: scores["nDCG@10"] for name, scores in evaluated.aggregate.items()} == pytest.approx(yours, abs=1e-12)
    assert EMBEDDED_TEXT_NOTE in evaluated.results()["notes"]
    # Read from the ingested collection, not embedded into one of the evaluation's own.
    names = [collection.name for collection in chroma_client(workspace, None).list_collections()]
    assert not [name for name in names if name.startswith("eval-")], names


def test_a_collection_whose_texts_differ_is_not_read_for_the_corpus(tmp_path, monkeypatch):
    """A collection holding the ids with other texts (a corpus edited since) has other vectors."""
    workspace = Workspace.resolve(tmp_path / "ws")
    build_collection(workspace, tmp_path / "pages", documents=12)
    synthesize(workspace, "synthesized", conversations=1, turns=2)
    beir = shutil.copytree(RunDirectory(workspace, "synthesized").path / "beir", tmp_path / "edited")
    records = load_jsonl(beir / "corpus.jsonl")
    records[0]["text"] += " An edited sentence."
    (beir / "corpus.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    monkeypatch.setattr(corpus_indexes, "_dense_indexes", BoundedCache(4))
    benchsmith.evaluate(
        beir,
        retrievers=["dense"],
        histories=["oracle"],
        embedder=register_embedder(HashingEmbedder()),
        measures=["nDCG@10"],
        workspace=workspace.root,
        run_id="edited",
    )
    names = [collection.name for collection in chroma_client(workspace, None).list_collections()]
    assert [name for name in names if name.startswith("eval-")], names
