"""Vectors of an in-process embedder kept in the workspace's embedding cache, so a text is
embedded once per embedder whatever job asks: chunk ids and texts are the same in every job
(tools/corpus/documents.py), so the chunks ``benchsmith ingest`` embedded are not embedded again by
a configuration search (or a nugget benchmark) over the same tree.

Keys are a SHA-256 over the embedder's name and the text. Server embedders (agents/seam/embeddings.py)
keep their own cache, keyed by endpoint, model and text, and are used as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from hashlib import sha256

import numpy as np

from benchsmith.stores.persistence.embedding_cache import EmbeddingCache, workspace_embedding_cache
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.embedding import Embedder


class CachedEmbedder:
    """``embedder`` behind a vector cache: only texts the cache lacks reach ``embedder.encode``."""

    def __init__(self, embedder: Embedder, cache: EmbeddingCache):
        self.embedder = embedder
        self.cache = cache
        self.name = embedder.name

    def __getattr__(self, attribute: str) -> object:  # dimension and the like: the embedder's
        if attribute == "embedder":
            raise AttributeError(attribute)
        return getattr(self.embedder, attribute)

    def cache_key(self, text: str) -> str:
        return sha256(f"local\x1f{self.name}\x1f{text}".encode()).hexdigest()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self.cache_key(text) for text in texts]
        stored = self.cache.get_many(keys)
        missing = list(dict.fromkeys(text for text, key in zip(texts, keys) if key not in stored))
        if missing:
            computed = np.asarray(self.embedder.encode(missing), dtype=np.float32)
            rows = [(self.cache_key(text), row.tobytes()) for text, row in zip(missing, computed)]
            self.cache.put_many(self.name, rows)
            stored.update(rows)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([np.frombuffer(stored[key], dtype=np.float32) for key in keys])


def cached_embedder(embedder: Embedder, workspace: Workspace) -> Embedder:
    """``embedder`` with its vectors cached in ``workspace`` (an embedder that caches already, as
    it is)."""
    if isinstance(embedder, CachedEmbedder) or hasattr(embedder, "cache"):
        return embedder
    return CachedEmbedder(embedder, workspace_embedding_cache(workspace))
