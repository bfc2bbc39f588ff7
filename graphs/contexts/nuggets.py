"""The settings of a nugget benchmark build (graphs/nuggets/)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from benchsmith.agents.defaults import BASELINE, DEFAULT_MAX_NUGGETS
from benchsmith.graphs.runtime.bounds import MAX_CHUNK_SIZE, MAX_ITEMS, MAX_NUGGETS, MAX_POOL_DEPTH, MIN_CHUNK_SIZE
from benchsmith.graphs.runtime.ray_options import RayOptions
from benchsmith.graphs.runtime.settings import ModelOptions, StoreOptions, concurrency_field
from benchsmith.tools.defaults import (
    DEFAULT_CHUNK_SIZE,
    DEFAULT_EMBEDDER,
    DEFAULT_MIN_CHARS,
    DEFAULT_POOL_DEPTH,
    MAX_POOL_BATCH_SIZE,
)


@dataclass(kw_only=True)
class NuggetsContext(RayOptions, StoreOptions, ModelOptions):
    """Settings of one nugget benchmark build (not checkpointed: the CLI passes them again on resume)."""

    tags: tuple[str, ...] = field(
        default=(),
        metadata={
            "description": "Keep the questions carrying at least one of these tags (Stack Exchange tags; for JSONL, "
            "the 'tags' field). Repeat for several; empty: all.",
            "cli": "--tag",
        },
    )
    limit: int | None = field(
        default=None,
        metadata={
            "description": "Only the first this many questions (in file order); empty: all.",
            "min": 1,
            "max": MAX_ITEMS,
        },
    )
    llm: str = field(
        default=BASELINE,
        metadata={
            "description": "Model of the nugget writer, sub-question writer, closed-book answerer and support judge: "
            "'baseline' (offline, extractive and lexical), openai:<model> or a registered name."
        },
    )
    embedder: str = field(
        default=DEFAULT_EMBEDDER,
        metadata={
            "description": "Embedder of the dense retriever that pools documents (a sentence-transformers name or path, "
            "openai:<model>, or a registered name)."
        },
    )
    max_nuggets: int = field(
        default=DEFAULT_MAX_NUGGETS,
        metadata={"description": "At most this many nuggets per question.", "min": 1, "max": MAX_NUGGETS},
    )
    pool_depth: int = field(
        default=DEFAULT_POOL_DEPTH,
        metadata={
            "description": "Chunks each technique adds to a question's pool (the top of its fused run).",
            "min": 1,
            "max": MAX_POOL_DEPTH,
        },
    )
    batch_size: int = field(
        default=MAX_POOL_BATCH_SIZE,
        metadata={
            "description": f"Pooled chunks judged per support call (at most {MAX_POOL_BATCH_SIZE}).",
            "min": 1,
            "max": MAX_POOL_BATCH_SIZE,
        },
    )
    fusion: Literal["combsum", "rrf"] = field(
        default="combsum",
        metadata={
            "description": "How BM25 and dense runs are fused: combsum (min-max normalized scores summed, FreshStack) "
            "or rrf (reciprocal rank fusion, k = 60)."
        },
    )
    all_nuggets_supported: bool = field(
        default=False,
        metadata={
            "description": "Also drop questions with any nugget no pooled chunk supports (questions with no supported "
            "nugget are always dropped)."
        },
    )
    chunk_size: int = field(
        default=DEFAULT_CHUNK_SIZE,
        metadata={
            "description": "Largest chunk of the corpus, in characters.",
            "min": MIN_CHUNK_SIZE,
            "max": MAX_CHUNK_SIZE,
        },
    )
    min_chars: int = field(
        default=DEFAULT_MIN_CHARS,
        metadata={
            "description": "Chunks shorter than this many characters are left out of the corpus.",
            "min": 0,
            "max": MAX_CHUNK_SIZE,
        },
    )
    concurrency: int = concurrency_field("Questions or batches worked on at once.")
