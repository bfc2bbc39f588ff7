"""The settings of a hard-negative dataset build (graphs/hardneg/build.py)."""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.agents.defaults import BASELINE
from benchsmith.graphs.runtime.bounds import MAX_CONDITIONS, MAX_DOCUMENT_CHARS, MAX_ITEMS
from benchsmith.graphs.runtime.ray_options import RayOptions
from benchsmith.graphs.runtime.settings import ModelOptions, StoreOptions, concurrency_field, seed_field, setting_field

DEFAULT_CONDITIONS, DEFAULT_MAX_CHARS = 10, 6000


@dataclass(kw_only=True)
class HardnegContext(RayOptions, StoreOptions, ModelOptions):
    """Settings of one build (not checkpointed: the CLI passes them again on resume)."""

    domain: str = setting_field(
        "custom", "books, movies, people, medical, legal or custom: the kind of facts a condition states."
    )
    features: str | None = setting_field(
        None,
        "With --domain custom: what matters in a document (the facts a searcher would ask for), "
        "e.g. 'function names, parameters, defaults, versions'.",
    )
    conditions: int = setting_field(
        DEFAULT_CONDITIONS,
        "N: condition sentences per document; queries have k = 1..N conditions.",
        low=1,
        high=MAX_CONDITIONS,
    )
    negatives: str = setting_field(
        "subtle",
        "subtle: change one critical fact of the sentence; misleading: add a clause that denies it, "
        "keeping every keyword.",
    )
    llm: str = setting_field(
        BASELINE,
        "Model of the condition extractor, query writer and negative rewriter: 'baseline' "
        "(offline: sentence picking, number/date/name swaps), openai:<model>, or a registered name.",
    )
    judge: str | None = setting_field(
        None, "Model of the condition-count judge that verifies every document; empty: the --llm model."
    )
    sample: int | None = setting_field(
        None,
        "Build from a seeded random sample of this many source documents; empty: all of them.",
        low=1,
        high=MAX_ITEMS,
    )
    max_chars: int = setting_field(
        DEFAULT_MAX_CHARS,
        "Longer source documents are cut at a paragraph or sentence break before this length.",
        low=200,
        high=MAX_DOCUMENT_CHARS,
    )
    seed: int = seed_field("Seed for the sample and model calls.")
    concurrency: int = concurrency_field("Source documents built at once (exactly).")
