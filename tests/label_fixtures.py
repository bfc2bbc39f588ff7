"""A labelling fixture: the rich test collection (tests/turn_type_fixtures.py), a baseline synthesis
run over it (what `validate` compares the labels with), and three questions, each asked in the
first words of one chunk (its "origin", which every configuration finds)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.stores.jsonl import load_jsonl
from benchsmith.stores.runs import RunDirectory
from benchsmith.stores.workspace import Workspace
from tests.embedders import HashingEmbedder
from tests.synthesis_fixtures import COLLECTION, synthesize
from tests.turn_type_fixtures import build_rich_collection

RETRIEVERS = ["bm25", "dense", "hybrid:rrf(dense,bm25)"]


def labelling_setup(root: Path) -> dict[str, Any]:
    workspace = Workspace.resolve(root / "ws")
    build_rich_collection(workspace, root / "corpus", documents=40)
    register_embedder(HashingEmbedder())  # the collection's embedder, by the name it recorded
    synthesize(workspace, "bench", conversations=4, turns=3)
    run_dir = RunDirectory(workspace, "bench").path
    corpus = {record["_id"]: record["text"] for record in load_jsonl(run_dir / "beir" / "corpus.jsonl")}
    origins = sorted(corpus)[:3]
    questions = root / "questions.jsonl"
    rows = [
        {"id": f"q{number}", "question": f"What does {' '.join(corpus[chunk_id].split()[:10])} do?"}
        for number, chunk_id in enumerate(origins, start=1)
    ]
    questions.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return {
        "root": root,
        "workspace": workspace,
        "bench": run_dir,
        "questions": questions,
        "origins": {f"q{number}": chunk_id for number, chunk_id in enumerate(origins, start=1)},
        "collection": COLLECTION,
    }
