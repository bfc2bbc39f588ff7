"""The settings of a validation (graphs/validate/)."""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.agents.defaults import BASELINE
from benchsmith.evals.defaults import DEFAULT_BOOTSTRAP
from benchsmith.graphs.contexts.evaluate import DEFAULT_DEPTH, DENSE_EMBEDDER_DESCRIPTION, REWRITER_DESCRIPTION
from benchsmith.graphs.runtime.bounds import MAX_DEPTH, MAX_POOL_DEPTH, MAX_RESAMPLES
from benchsmith.graphs.runtime.settings import ModelOptions, StoreOptions, concurrency_field, seed_field, setting_field
from benchsmith.tools.defaults import DEFAULT_EMBEDDER
from benchsmith.tools.retrieval.rerank import DEFAULT_RERANK_DEPTH

DEFAULT_MEASURE = "nDCG@10"
DEFAULT_JUDGE_DEPTH = 10


@dataclass(kw_only=True)
class ValidationContext(StoreOptions, ModelOptions):
    """Settings of one validation (not checkpointed: the CLI passes them again on resume)."""

    measure: str = setting_field(
        DEFAULT_MEASURE,
        "The ir_measures measure configurations are ranked by on both sets (nDCG@10, R@100, RR@10, AP, ...).",
    )
    split: str = setting_field("test", "BEIR qrels split of both sets (qrels/<split>.tsv).")
    depth: int = setting_field(DEFAULT_DEPTH, "Documents retrieved per query.", low=1, high=MAX_DEPTH)
    embedder: str = setting_field(DEFAULT_EMBEDDER, DENSE_EMBEDDER_DESCRIPTION)
    rerank: str | None = setting_field(
        None,
        "Also rank each configuration reranked by this sentence-transformers CrossEncoder (name, "
        "path or registered name), its top rerank-depth re-scored; empty: no reranking.",
    )
    rerank_depth: int = setting_field(
        DEFAULT_RERANK_DEPTH, "Documents per query the reranker re-scores.", low=1, high=MAX_POOL_DEPTH
    )
    llm: str = setting_field(BASELINE, REWRITER_DESCRIPTION)
    bootstrap: int = setting_field(
        DEFAULT_BOOTSTRAP,
        "Bootstrap resamples of the queries of both sets for the interval of Kendall's tau.",
        low=1,
        high=MAX_RESAMPLES,
    )
    judge_depth: int = setting_field(
        DEFAULT_JUDGE_DEPTH,
        "Non-gold pairs for the judges are sampled from each configuration's top k on the human set.",
        low=1,
        high=MAX_POOL_DEPTH,
    )
    seed: int = seed_field("Seed of the bootstrap, the judges' sample of non-gold pairs and the model calls.")
    concurrency: int = concurrency_field("Judge calls (and rewriter calls) in flight.")
