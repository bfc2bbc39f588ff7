"""A fast, deterministic embedder for graph tests: feature hashing of words, L2-normalized.

It counts its calls and texts, so tests can assert what was (not) re-embedded.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np


class HashingEmbedder:
    def __init__(self, dimension: int = 64, fail_on_call: int | None = None):
        self.name = f"test-hashing-{dimension}"
        self.dimension = dimension
        self.fail_on_call = fail_on_call
        self.calls = 0
        self.texts_embedded = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        if self.fail_on_call is not None and self.calls == self.fail_on_call:
            raise RuntimeError(f"injected embedding failure on batch {self.calls}")
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                vectors[row, zlib.crc32(word.encode()) % self.dimension] += 1.0
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self.texts_embedded += len(texts)
        return vectors / np.where(norms == 0, 1, norms)
