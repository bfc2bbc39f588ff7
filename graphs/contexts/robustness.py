"""The settings of a robustness run (graphs/robustness/)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from benchsmith.evals.defaults import DEFAULT_MIN_VOTES, DEFAULT_SIGNIFICANCE_RESAMPLES
from benchsmith.graphs.contexts.evaluate import RetrievalOptions
from benchsmith.graphs.runtime.bounds import MAX_JUDGES, MAX_POOL_DEPTH, MAX_RESAMPLES
from benchsmith.graphs.runtime.settings import ModelOptions, StoreOptions, concurrency_field, seed_field, setting_field

DEFAULT_JUDGE_DEPTH = 3
DEFAULT_MEASURES = ("nDCG@3", "nDCG@10", "R@100", "AP")


@dataclass(kw_only=True)
class RobustnessContext(StoreOptions, ModelOptions, RetrievalOptions):
    """Settings of one robustness run (not checkpointed: the CLI passes them again on resume)."""

    measures: tuple[str, ...] = setting_field(
        DEFAULT_MEASURES,
        "ir_measures measures compared (Judged@k of the judge depth is always added). Repeat; replaces the defaults.",
        cli="--measure",
    )
    judge_depth: int = setting_field(
        DEFAULT_JUDGE_DEPTH,
        "k: the unjudged documents of each run's top k are pooled and re-judged (Judged@k is reported).",
        low=1,
        high=MAX_POOL_DEPTH,
    )
    min_votes: int = setting_field(
        DEFAULT_MIN_VOTES,
        "Judges (and a majority) that must agree on a grade to confirm it (the audit's rule). With "
        "one judge, 1 trusts it unchecked.",
        low=1,
        high=MAX_JUDGES,
    )
    corpus: str | None = setting_field(
        None, "With run files: a BEIR corpus.jsonl holding the runs' documents, so the unjudged ones can be re-judged."
    )
    concurrency: int = concurrency_field("Turns judged at once.")
    significance_test: Literal["randomization", "t-test"] = setting_field(
        "randomization",
        "Paired test of each test set against the original (Holm-corrected over the test sets): "
        "randomization or t-test.",
    )
    resamples: int = setting_field(
        DEFAULT_SIGNIFICANCE_RESAMPLES, "Resamples of the randomization test.", low=1, high=MAX_RESAMPLES
    )
    seed: int = seed_field("Seed of the randomization test and the model calls.")
