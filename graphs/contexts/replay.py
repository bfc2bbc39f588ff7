"""The settings of a replay (graphs/replay.py)."""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.graphs.contexts.evaluate import SPLIT_DESCRIPTION
from benchsmith.graphs.runtime.settings import (
    StoreOptions,
    attempts_field,
    concurrency_field,
    rate_limit_field,
    setting_field,
    timeout_field,
)

DEFAULT_REPLAY_MEASURES = ("nDCG@10", "R@10", "RR@10")
DEFAULT_WORST = 3
JUDGED_PASSAGES = 3  # a reply's faithfulness is judged against the first passages it used


@dataclass(kw_only=True)
class ReplayContext(StoreOptions):
    """Settings of one replay (not checkpointed: the CLI passes them again on resume)."""

    split: str = setting_field("test", SPLIT_DESCRIPTION)
    measures: tuple[str, ...] = setting_field(
        DEFAULT_REPLAY_MEASURES,
        "ir_measures measures of the passages the assistant used on each turn, against the "
        "benchmark's judgments. Repeat; replaces the defaults.",
        cli="--measure",
    )
    judges: tuple[str, ...] = setting_field(
        ("baseline",),
        "Judge models rating each reply's faithfulness to the passages it used, how well it "
        "addresses the question and its agreement with the benchmark's reference answer (1-5, the audit's "
        "judges): baseline (offline, lexical), openai:<model> or a registered name. Repeat for an ensemble (the mean is reported); none given on the command line: baseline.",
        cli="--judge",
    )
    worst: int = setting_field(
        DEFAULT_WORST, "Conversations shown whole in the report: the lowest by the first measure.", low=0, high=100
    )
    concurrency: int = concurrency_field("Conversations replayed at once (turns of one conversation go in order).")
    rate_limit: float | None = rate_limit_field(
        "At most this many requests per second to the assistant; empty: no limit."
    )
    timeout_s: float = timeout_field("Seconds before a request to an assistant endpoint times out.", default=120.0)
    max_attempts: int = attempts_field(
        "Attempts per assistant turn (retries on 429, 5xx, timeouts, refused connections)."
    )
