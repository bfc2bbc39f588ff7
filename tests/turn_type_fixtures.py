"""A collection whose documents each give several distinct questions (the offline questioner
asks one per rare phrase), so turns of every type find chunks with questions left."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from benchsmith.graphs.ingest import IngestContext
from benchsmith.graphs.ingest import builder as ingest_builder
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.stores.workspace import Workspace
from tests.embedders import HashingEmbedder
from tests.synthesis_fixtures import COLLECTION, TOPICS

ALL_RATES = {"unanswerable_rate": 0.2, "partial_rate": 0.1, "underspecified_rate": 0.1, "multi_gold_rate": 0.15}
QUESTION_MIX = "factoid=0.3,explanation=0.15,how-to=0.15,yes/no=0.1,comparison=0.1,summary=0.1,keyword=0.1"


def build_rich_collection(workspace: Workspace, corpus_dir: Path, documents: int = 100, seed: int = 0) -> dict[str, Any]:
    """``documents`` one-chunk documents about ten topics, four informative sentences each."""
    rng = random.Random(seed)
    corpus_dir.mkdir(parents=True, exist_ok=True)

    def name(topic: str) -> str:
        return f"{topic}{rng.randrange(400)}"

    for i in range(documents):
        topic = TOPICS[i % len(TOPICS)]
        text = (f"Document {i} explains {topic}. "
                f"The {name(topic)} {name(topic)} limit controls how many {name(topic)} records are kept. "
                f"Each {name(topic)} {name(topic)} entry stores one {name(topic)} event for later review. "
                f"The {name(topic)} {name(topic)} switch turns off the {name(topic)} check entirely. "
                f"A {name(topic)} {name(topic)} report lists every {name(topic)} failure of the day.")
        (corpus_dir / f"doc{i:03}.txt").write_text(text, encoding="utf-8")
    return ingest(workspace, corpus_dir)


def ingest(workspace: Workspace, corpus_dir: Path, run_id: str = "ingest") -> dict[str, Any]:
    """The folder's files into the test collection, with the hashing embedder."""
    context = IngestContext(workspace=str(workspace.root), embedder=register_embedder(HashingEmbedder()), min_chars=20)
    return run_job(ingest_builder, job="ingest", workspace=workspace, run_id=run_id,
                   inputs={"run_id": run_id, "sources": [str(corpus_dir)], "collection": COLLECTION},
                   context=context, settings={}).values
