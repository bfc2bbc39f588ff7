"""The settings of a nugget benchmark build (graphs/nuggets/)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from benchsmith.agents.defaults import BASELINE, DEFAULT_MAX_NUGGETS
from benchsmith.graphs.runtime.bounds import MAX_CHUNK_SIZE, MAX_ITEMS, MAX_NUGGETS, MAX_POOL_DEPTH, MIN_CHUNK_SIZE
from benchsmith.graphs.runtime.ray_options import RayOptions
from benchsmith.graphs.runtime.settings import ModelOptions, StoreOptions, concurrency_field, setting_field
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

    tags: tuple[str, ...] = setting_field(
        (),
        "Keep the questions carrying at least one of these tags (Stack Exchange tags; for JSONL, "
        "the 'tags' field). Repeat for several; empty: all.",
        cli="--tag",
    )
    limit: int | None = setting_field(
        None, "Only the first this many questions (in file order); empty: all.", low=1, high=MAX_ITEMS
    )
    llm: str = setting_field(
        BASELINE,
        "Model of the nugget writer, sub-question writer, closed-book answerer and support judge: "
        "'baseline' (offline, extractive and lexical), openai:<model> or a registered name.",
    )
    embedder: str = setting_field(
        DEFAULT_EMBEDDER,
        "Embedder of the dense retriever that pools documents (a sentence-transformers name or path, "
        "openai:<model>, or a registered name).",
    )
    max_nuggets: int = setting_field(
        DEFAULT_MAX_NUGGETS, "At most this many nuggets per question.", low=1, high=MAX_NUGGETS
    )
    pool_depth: int = setting_field(
        DEFAULT_POOL_DEPTH,
        "Chunks each technique adds to a question's pool (the top of its fused run).",
        low=1,
        high=MAX_POOL_DEPTH,
    )
    batch_size: int = setting_field(
        MAX_POOL_BATCH_SIZE,
        f"Pooled chunks judged per support call (at most {MAX_POOL_BATCH_SIZE}).",
        low=1,
        high=MAX_POOL_BATCH_SIZE,
    )
    fusion: Literal["combsum", "rrf"] = setting_field(
        "combsum",
        "How BM25 and dense runs are fused: combsum (min-max normalized scores summed, FreshStack) "
        "or rrf (reciprocal rank fusion, k = 60).",
    )
    all_nuggets_supported: bool = setting_field(
        False,
        "Also drop questions with any nugget no pooled chunk supports (questions with no supported "
        "nugget are always dropped).",
    )
    chunk_size: int = setting_field(
        DEFAULT_CHUNK_SIZE, "Largest chunk of the corpus, in characters.", low=MIN_CHUNK_SIZE, high=MAX_CHUNK_SIZE
    )
    min_chars: int = setting_field(
        DEFAULT_MIN_CHARS,
        "Chunks shorter than this many characters are left out of the corpus.",
        low=0,
        high=MAX_CHUNK_SIZE,
    )
    concurrency: int = concurrency_field("Questions or batches worked on at once.")
