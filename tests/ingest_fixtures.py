"""A small generated corpus and the ingestion graph run on it with a hashing embedder, for the tests
that need an ingested collection."""

import random
from pathlib import Path

from benchsmith.graphs.ingest import IngestContext, builder
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.stores.persistence.workspace import Workspace
from tests.embedders import HashingEmbedder

TOPICS = ["retrieval", "embedding", "chunking", "ranking", "fusion", "judging", "caching", "indexing"]


def write_corpus(root: Path, documents: int = 24, seed: int = 0) -> Path:
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    for i in range(documents):
        topic = TOPICS[i % len(TOPICS)]
        paragraphs = [
            " ".join(rng.choice(TOPICS) + f"{rng.randrange(10_000)}" for _ in range(30)) + "." for _ in range(3)
        ]
        (root / f"doc{i:02}.md").write_text(f"# About {topic}\n\n" + "\n\n".join(paragraphs), encoding="utf-8")
    return root


def ingest(
    workspace: Workspace,
    run_id: str,
    sources: list[str],
    embedder: HashingEmbedder,
    collection: str = "docs",
    **settings,
):
    context = IngestContext(
        workspace=str(workspace.root),
        embedder=register_embedder(embedder),
        chunk_size=300,
        min_chars=50,
        batch_size=8,
        **settings,
    )
    recorded = {"sources": sources, "collection": collection, **settings}
    return run_job(
        builder,
        job="ingest",
        workspace=workspace,
        run_id=run_id,
        inputs={"run_id": run_id, "sources": sources, "collection": collection},
        context=context,
        settings=recorded,
    )
