"""The settings of a synthesis run (graphs/synthesis/)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from benchsmith.agents.defaults import BASELINE
from benchsmith.graphs.runtime.bounds import MAX_CLUSTER_SIZE, MAX_NEIGHBOURS, MAX_RETRIES, MAX_TURNS
from benchsmith.graphs.runtime.ray_options import RayOptions
from benchsmith.graphs.runtime.settings import (
    ModelOptions,
    StoreOptions,
    concurrency_field,
    seed_field,
    setting_field,
    share_field,
)
from benchsmith.stores.errors import InputError
from benchsmith.tools.benchmark.dialogue_walk import (
    DEFAULT_HARD_SWITCH_RATE,
    DEFAULT_SOFT_SWITCH_MARGIN,
    DEFAULT_SWITCH_PROBABILITY,
    DEMO_QUESTION_TYPES,
)
from benchsmith.tools.benchmark.turn_type_presets import TURN_TYPE_PRESETS, presets_described
from benchsmith.tools.defaults import (
    DEFAULT_CLUSTER_NEIGHBOURS,
    DEFAULT_CLUSTER_SIZE,
    DEFAULT_MAX_OVERLAP,
    DEFAULT_OVERLAP_ATTEMPTS,
    DEFAULT_OVERLAP_REPLANS,
    DEFAULT_SYNTHESIS_PAGE_KINDS,
)

QualityGateMode = Literal["replan", "flag", "off"]


@dataclass(kw_only=True)
class SynthesisContext(RayOptions, StoreOptions, ModelOptions):
    """Settings of one synthesis run (not checkpointed: the CLI passes them again on resume)."""

    llm: str = setting_field(
        BASELINE,
        "Model of the questioner, responder and polisher: 'baseline' (offline, extractive), "
        "openai:<model> (any OpenAI-compatible server via OPENAI_BASE_URL), or a registered name.",
    )
    seed: int = seed_field("Seed for clustering, cluster choice, switches and model calls.")
    switch_rate: float = share_field(
        "Probability that a turn switches topic (users switch every 2.11 turns, Spink et al. 2002).",
        default=DEFAULT_SWITCH_PROBABILITY,
    )
    hard_switch_rate: float = share_field(
        "Share of topic switches that are hard (a distant cluster, the old history kept).",
        default=DEFAULT_HARD_SWITCH_RATE,
    )
    soft_switch_margin: float = setting_field(
        DEFAULT_SOFT_SWITCH_MARGIN,
        "A soft switch's gold must be at least as similar to the previous gold as the collection's "
        "random-pair mean plus this many standard deviations (the soft-switch threshold); a hard "
        "switch's gold must be less similar than that and on another document.",
    )
    max_overlap: float = share_field(
        "Most lexical overlap a question may have with its gold passage (share of its content-word "
        "stems found in the gold, evals/measures/lexical_overlap.py); above it the question is asked again. "
        "Default 0.62: near the median of the 58 hand-written questions of data/stdlib-validity.jsonl "
        "against their gold chunks (mean 0.57, median 0.60, p90 0.784), so that the benchmark's mean "
        "overlap is near theirs.",
        default=DEFAULT_MAX_OVERLAP,
    )
    overlap_attempts: int = setting_field(
        DEFAULT_OVERLAP_ATTEMPTS,
        "Corrective turns per gold chunk for a question above max_overlap.",
        low=0,
        high=MAX_RETRIES,
    )
    overlap_replans: int = setting_field(
        DEFAULT_OVERLAP_REPLANS,
        "Other gold chunks a turn is re-planned on when every corrective turn stays above "
        "max_overlap; then the lowest-overlap question is kept, flagged overlap_rejected.",
        low=0,
        high=MAX_RETRIES,
    )
    cluster_size: int = setting_field(
        DEFAULT_CLUSTER_SIZE,
        "Chunks per cluster: the collection's semantic path is cut every this many chunks.",
        low=1,
        high=MAX_CLUSTER_SIZE,
    )
    neighbours: int = setting_field(
        DEFAULT_CLUSTER_NEIGHBOURS,
        "Neighbours per chunk in the k-nearest-neighbour graph the path walks.",
        low=1,
        high=MAX_NEIGHBOURS,
    )
    page_kinds: tuple[str, ...] = setting_field(
        DEFAULT_SYNTHESIS_PAGE_KINDS,
        "Page kinds whose chunks the clusters, and so the conversations, are drawn from: narrative, "
        "api, changelog, index (ingestion labels each page); repeat for several. Default: narrative "
        "and api (a changelog's chunks are release notes, an index page's mostly links); a chunk "
        "ingested without a page kind counts as narrative. The benchmark's corpus keeps every chunk.",
        cli="--page-kind",
    )
    history_window: int | None = setting_field(
        None, "Earlier turns in each exported BEIR query; empty: all of them.", low=0, high=MAX_TURNS
    )
    concurrency: int = concurrency_field("Conversations synthesized at once (exactly).")
    unanswerable_rate: float = share_field(
        "Share of turns the corpus cannot answer: a question about a chunk of the conversation's "
        "cluster that is held out of the benchmark's corpus (no qrels; the reference reply says the "
        "documents do not answer it), kept only when the judge finds no remaining chunk that answers it. "
        "The offline questioner asks it only about a code name no remaining chunk names; a turn without one "
        "is dropped to answerable and counted."
    )
    partial_rate: float = share_field(
        "Share of turns the corpus answers in part: the question needs a held-out chunk and an "
        "available one (the gold); the reference answer says which part is missing."
    )
    underspecified_rate: float = share_field(
        "Share of turns with an ambiguous question that fits two chunks of the cluster (no qrels); the "
        "reference reply is a clarifying question and the next turn says which chunk the user meant."
    )
    multi_gold_rate: float = share_field(
        "Share of turns whose answer needs two or three chunks of the cluster together, all of them "
        "gold; the judge checks that each one contributes."
    )
    rates: str | None = setting_field(
        None,
        "A named preset of the turn-type rates and the question-type mix, from a named source: "
        f"{presets_described()}. A rate (other than 0) or a mix given beside it overrides the "
        "preset's. Empty: the rates given (all 0 by default). The command prints the rates a run uses.",
        cli="--rates",
    )
    quality_gate: QualityGateMode = field(  # field() itself: ruff's RUF009 flags any other call under a Literal alias
        default="replan",
        metadata={
            "description": "The offline quality gate on every turn (evals/quality_gate/: the reading rubric's broken "
            "classes): 'replan' asks again, re-plans, then drops a flagged turn (counted per class in "
            "stats.json); 'flag' keeps it and records its flags; 'off' runs no gate."
        },
    )
    question_types: str = setting_field(
        "",
        "Mix of question types each turn draws from and the questioner is asked for, as "
        "type=weight pairs (factoid, explanation, comparison, how-to, yes/no, summary, keyword), e.g. "
        f"'{DEMO_QUESTION_TYPES}'; empty: no type is asked for and each question is labelled by its "
        "wording.",
    )


def with_preset_rates(context: SynthesisContext) -> SynthesisContext:
    """``context`` with its ``rates`` preset applied: each turn-type rate and the question-type mix
    still at its default takes the preset's value; one given explicitly is kept. Idempotent."""
    if not context.rates:
        return context
    preset = TURN_TYPE_PRESETS.get(context.rates)
    if preset is None:
        raise InputError(f"rates {context.rates!r} is not a preset: choose one of {', '.join(TURN_TYPE_PRESETS)}")
    defaults = {item.name: item.default for item in fields(context)}
    # each value is its setting's (a rate or the question types): Any, as replace checks no types
    untouched: dict[str, Any] = {
        name: value for name, value in preset.settings().items() if getattr(context, name) == defaults[name]
    }
    return replace(context, **untouched)


def turn_type_rates(context: SynthesisContext) -> dict[str, float | str]:
    """The turn-type rates and question-type mix a run uses (its preset applied), by setting name."""
    applied = with_preset_rates(context)
    return {
        name: getattr(applied, name)
        for name in ("unanswerable_rate", "partial_rate", "underspecified_rate", "multi_gold_rate", "question_types")
    }
