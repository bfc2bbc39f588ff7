"""The settings of a configuration search (graphs/select/graph.py)."""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.agents.defaults import BASELINE
from benchsmith.evals.defaults import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MIN_VOTES,
    DEFAULT_SELECTION_BETAS,
    DEFAULT_SELECTION_RESAMPLES,
)
from benchsmith.graphs.runtime.bounds import (
    MAX_CURVES,
    MAX_JUDGE_BATCH,
    MAX_JUDGES,
    MAX_POOL_DEPTH,
    MAX_RESAMPLES,
)
from benchsmith.graphs.runtime.ray_options import RayOptions
from benchsmith.graphs.runtime.settings import ModelOptions, StoreOptions, concurrency_field, seed_field, setting_field
from benchsmith.tools.defaults import DEFAULT_EMBEDDER

DEFAULT_BATCH_SIZE = 8
DEFAULT_RERANK_DEPTH = 50
DEFAULT_CURVES_SHOWN = 5


@dataclass(kw_only=True)
class SelectContext(RayOptions, StoreOptions, ModelOptions):
    """Settings of one configuration search (not checkpointed: the CLI passes them again on resume)."""

    embedder: str = setting_field(
        DEFAULT_EMBEDDER,
        "Embedder of the 'dense' retriever (dense:MODEL names its own): a sentence-transformers "
        "name or path, openai:<model>, or a registered name.",
    )
    llm: str = setting_field(
        BASELINE,
        "Model of the 'rewrite' and 'expand:N' query rewriting (--rewrite): 'baseline', "
        "openai:<model> or a registered name.",
    )
    min_votes: int | None = setting_field(
        None,
        "Judges that must find a chunk relevant (and be a majority) for it to count; empty: "
        f"{DEFAULT_MIN_VOTES}, the audit's rule. With one judge, pass 1 to trust it unchecked.",
        low=1,
        high=MAX_JUDGES,
        show_default=str(DEFAULT_MIN_VOTES),
    )
    batch_size: int = setting_field(
        DEFAULT_BATCH_SIZE, "Pairs of one query a judge judges per call.", low=1, high=MAX_JUDGE_BATCH
    )
    rerank_depth: int = setting_field(
        DEFAULT_RERANK_DEPTH,
        "Chunks per query a reranking configuration re-scores before cutting to its top K.",
        low=1,
        high=MAX_POOL_DEPTH,
    )
    betas: tuple[float, ...] = setting_field(
        DEFAULT_SELECTION_BETAS,
        "F-beta weights reported; the smallest picks the precision-first, the largest the "
        "recall-first configuration. Repeat.",
        cli="--beta",
    )
    resamples: int = setting_field(
        DEFAULT_SELECTION_RESAMPLES, "Bootstrap resamples of the queries for the intervals.", low=1, high=MAX_RESAMPLES
    )
    confidence: float = setting_field(DEFAULT_CONFIDENCE, "Level of the bootstrap intervals, strictly between 0 and 1.")
    seed: int = seed_field("Seed for model calls and the bootstrap.")
    concurrency: int = concurrency_field("Judge (and rewriter) calls in flight.")
    curves_shown: int = setting_field(
        DEFAULT_CURVES_SHOWN,
        "Configurations whose precision–recall curves the report draws (the best ones).",
        low=1,
        high=MAX_CURVES,
        recorded=False,
    )
