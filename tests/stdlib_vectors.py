"""The default embedder's vectors of the standard-library corpus, for the tests that run on it.

Embedding the stdlib chunks (about 2,100 texts: the demo's chunks and the configuration search's
whole documents) with the real model costs about two and a half CPU-minutes, a sixth of the whole
suite's CPU and most of the demo test's. ``tests/data/stdlib-vectors.npz`` holds the model's own
vectors of those texts (rounded to float16: 6e-5 at most from the model's float32), keyed as the
workspace's embedding cache keys them (tools/retrieval/cached_embedding.py). A test seeds its empty
workspace with them: every job then runs as it would on a user's second run, the vectors read
from the cache, and a text the file lacks (another Python's stdlib, a changed chunker) is
embedded by the model as usual. The README test embeds with the model from an empty workspace.

Regenerate after a change of the stdlib chunks (the tests stay right without it, only slower):
run ``benchsmith demo -w W`` and the stdlib configuration search of tests/test_select_cli.py with
``-w W``, then ``.venv/bin/python -m tests.stdlib_vectors W``.
"""

from __future__ import annotations

import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import numpy as np

from benchsmith.stores.persistence.embedding_cache import workspace_embedding_cache
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.defaults import DEFAULT_EMBEDDER

VECTORS_FILE = Path(__file__).parent / "data" / "stdlib-vectors.npz"


def seed_stdlib_vectors(workspace: str | Path) -> int:
    """Put the stored stdlib vectors into ``workspace``'s embedding cache; how many."""
    stored = np.load(VECTORS_FILE)
    vectors = stored["vectors"].astype(np.float32)
    rows = [(key.hex(), vector.tobytes()) for key, vector in zip(stored["keys"].tolist(), vectors)]
    workspace_embedding_cache(Workspace.resolve(workspace)).put_many(DEFAULT_EMBEDDER, rows)
    return len(rows)


def write_stdlib_vectors(workspace: str | Path) -> int:
    """Store the default embedder's vectors of ``workspace``'s embedding cache in the file; how many."""
    with closing(sqlite3.connect(Workspace.resolve(workspace).embedding_cache_path)) as cache:
        rows = cache.execute(
            "SELECT key, vector FROM embeddings WHERE model = ? ORDER BY key", (DEFAULT_EMBEDDER,)
        ).fetchall()
    keys = np.array([bytes.fromhex(key) for key, _ in rows], dtype="S32")
    vectors = np.stack([np.frombuffer(vector, dtype=np.float32) for _, vector in rows]).astype(np.float16)
    np.savez_compressed(VECTORS_FILE, keys=keys, vectors=vectors)
    return len(rows)


if __name__ == "__main__":
    print(f"{write_stdlib_vectors(sys.argv[1])} vectors written to {VECTORS_FILE}")
