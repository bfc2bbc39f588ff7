"""The settings of a validation (graphs/validate/)."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchsmith.agents.defaults import BASELINE
from benchsmith.evals.defaults import DEFAULT_BOOTSTRAP
from benchsmith.graphs.contexts.evaluate import DEFAULT_DEPTH, DENSE_EMBEDDER_DESCRIPTION, REWRITER_DESCRIPTION
from benchsmith.graphs.runtime.bounds import MAX_DEPTH, MAX_POOL_DEPTH, MAX_RESAMPLES, SEED_BOUNDS
from benchsmith.graphs.runtime.settings import ModelOptions, StoreOptions, concurrency_field
from benchsmith.tools.defaults import DEFAULT_EMBEDDER
from benchsmith.tools.retrieval.rerank import DEFAULT_RERANK_DEPTH

DEFAULT_MEASURE = "nDCG@10"
DEFAULT_JUDGE_DEPTH = 10


@dataclass(kw_only=True)
class ValidationContext(StoreOptions, ModelOptions):
    """Settings of one validation (not checkpointed: the CLI passes them again on resume)."""

    measure: str = field(
        default=DEFAULT_MEASURE,
        metadata={
            "description": "The ir_measures measure configurations are ranked by on both sets (nDCG@10, R@100, RR@10, "
            "AP, ...)."
        },
    )
    split: str = field(default="test", metadata={"description": "BEIR qrels split of both sets (qrels/<split>.tsv)."})
    depth: int = field(
        default=DEFAULT_DEPTH, metadata={"description": "Documents retrieved per query.", "min": 1, "max": MAX_DEPTH}
    )
    embedder: str = field(default=DEFAULT_EMBEDDER, metadata={"description": DENSE_EMBEDDER_DESCRIPTION})
    rerank: str | None = field(
        default=None,
        metadata={
            "description": "Also rank each configuration reranked by this sentence-transformers CrossEncoder (name, "
            "path or registered name), its top rerank-depth re-scored; empty: no reranking."
        },
    )
    rerank_depth: int = field(
        default=DEFAULT_RERANK_DEPTH,
        metadata={"description": "Documents per query the reranker re-scores.", "min": 1, "max": MAX_POOL_DEPTH},
    )
    llm: str = field(default=BASELINE, metadata={"description": REWRITER_DESCRIPTION})
    bootstrap: int = field(
        default=DEFAULT_BOOTSTRAP,
        metadata={
            "description": "Bootstrap resamples of the queries of both sets for the interval of Kendall's tau.",
            "min": 1,
            "max": MAX_RESAMPLES,
        },
    )
    judge_depth: int = field(
        default=DEFAULT_JUDGE_DEPTH,
        metadata={
            "description": "Non-gold pairs for the judges are sampled from each configuration's top k on the human set.",
            "min": 1,
            "max": MAX_POOL_DEPTH,
        },
    )
    seed: int = field(
        default=0,
        metadata={
            **SEED_BOUNDS,
            "description": "Seed of the bootstrap, the judges' sample of non-gold pairs and the model calls.",
        },
    )
    concurrency: int = concurrency_field("Judge calls (and rewriter calls) in flight.")
