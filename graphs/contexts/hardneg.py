"""The settings of a hard-negative dataset build (graphs/hardneg/build.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchsmith.agents.defaults import BASELINE
from benchsmith.graphs.runtime.bounds import MAX_CONDITIONS, MAX_DOCUMENT_CHARS, MAX_ITEMS, SEED_BOUNDS
from benchsmith.graphs.runtime.ray_options import RayOptions
from benchsmith.graphs.runtime.settings import ModelOptions, StoreOptions, concurrency_field

DEFAULT_CONDITIONS, DEFAULT_MAX_CHARS = 10, 6000


@dataclass(kw_only=True)
class HardnegContext(RayOptions, StoreOptions, ModelOptions):
    """Settings of one build (not checkpointed: the CLI passes them again on resume)."""

    domain: str = field(
        default="custom",
        metadata={
            "description": "books, movies, people, medical, legal or custom: the kind of facts a condition states."
        },
    )
    features: str | None = field(
        default=None,
        metadata={
            "description": "With --domain custom: what matters in a document (the facts a searcher would ask for), "
            "e.g. 'function names, parameters, defaults, versions'."
        },
    )
    conditions: int = field(
        default=DEFAULT_CONDITIONS,
        metadata={
            "description": "N: condition sentences per document; queries have k = 1..N conditions.",
            "min": 1,
            "max": MAX_CONDITIONS,
        },
    )
    negatives: str = field(
        default="subtle",
        metadata={
            "description": "subtle: change one critical fact of the sentence; misleading: add a clause that denies it, "
            "keeping every keyword."
        },
    )
    llm: str = field(
        default=BASELINE,
        metadata={
            "description": "Model of the condition extractor, query writer and negative rewriter: 'baseline' "
            "(offline: sentence picking, number/date/name swaps), openai:<model>, or a registered name."
        },
    )
    judge: str | None = field(
        default=None,
        metadata={
            "description": "Model of the condition-count judge that verifies every document; empty: the --llm model."
        },
    )
    sample: int | None = field(
        default=None,
        metadata={
            "description": "Build from a seeded random sample of this many source documents; empty: all of them.",
            "min": 1,
            "max": MAX_ITEMS,
        },
    )
    max_chars: int = field(
        default=DEFAULT_MAX_CHARS,
        metadata={
            "description": "Longer source documents are cut at a paragraph or sentence break before this length.",
            "min": 200,
            "max": MAX_DOCUMENT_CHARS,
        },
    )
    seed: int = field(default=0, metadata={**SEED_BOUNDS, "description": "Seed for the sample and model calls."})
    concurrency: int = concurrency_field("Source documents built at once (exactly).")
