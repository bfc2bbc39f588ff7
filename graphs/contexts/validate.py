"""The settings of a validation (graphs/validate/)."""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.evals.defaults import DEFAULT_BOOTSTRAP
from benchsmith.graphs.contexts.evaluate import RerankOptions
from benchsmith.graphs.runtime.bounds import MAX_POOL_DEPTH, MAX_RESAMPLES
from benchsmith.graphs.runtime.settings import ModelOptions, StoreOptions, concurrency_field, seed_field, setting_field

DEFAULT_MEASURE = "nDCG@10"
DEFAULT_JUDGE_DEPTH = 10


@dataclass(kw_only=True)
class ValidationContext(StoreOptions, ModelOptions, RerankOptions):
    """Settings of one validation (not checkpointed: the CLI passes them again on resume)."""

    measure: str = setting_field(
        DEFAULT_MEASURE,
        "The ir_measures measure configurations are ranked by on both sets (nDCG@10, R@100, RR@10, AP, ...).",
    )
    split: str = setting_field("test", "BEIR qrels split of both sets (qrels/<split>.tsv).")
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
