"""The settings of a hard-negative scoring run (graphs/hardneg/score.py)."""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.evals.defaults import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES
from benchsmith.graphs.runtime.bounds import MAX_RESAMPLES
from benchsmith.graphs.runtime.settings import (
    StoreOptions,
    attempts_field,
    concurrency_field,
    rate_limit_field,
    seed_field,
    setting_field,
    share_field,
    timeout_field,
)
from benchsmith.tools.defaults import DEFAULT_EMBEDDER


@dataclass(kw_only=True)
class HardnegScoreContext(StoreOptions):
    """Settings of one scoring run (not checkpointed: the CLI passes them again on resume)."""

    embedder: str = setting_field(
        DEFAULT_EMBEDDER,
        "Embedder of the plain 'dense' scorer (dense:MODEL names its own): a sentence-transformers "
        "name or path, openai:<model>, or a registered name.",
    )
    confidence: float = share_field("Level of the bootstrap intervals.", default=DEFAULT_CONFIDENCE)
    resamples: int = setting_field(
        DEFAULT_RESAMPLES, "Bootstrap resamples (over rows) of each interval.", low=100, high=MAX_RESAMPLES
    )
    seed: int = seed_field("Seed of the bootstrap.")
    # Your own retriever's calls (a scorer given as http://…, py:module:object or a registered name).
    concurrency: int = concurrency_field("Requests in flight to your own retriever.")
    rate_limit: float | None = rate_limit_field(
        "At most this many requests per second to your own retriever; empty: no limit."
    )
    timeout_s: float = timeout_field("Seconds before a request to your own retriever times out.")
    max_attempts: int = attempts_field("Attempts per request to your own retriever (retries on 429, 5xx and timeouts).")
