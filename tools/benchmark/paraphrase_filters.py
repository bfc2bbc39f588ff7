"""Filters for generated paraphrase variants (the ECAsT chain's quality gates).

A variant is dropped when it is

* a near-duplicate of its source (the turn's self-contained form) or of a variant kept
  before it: sentence BLEU or chrF (sacrebleu, 0-100, the variant as hypothesis) above
  ``max_sentence_score``; a paraphrase that changes nothing tests nothing;
* a meaning change: the cosine of its embedding to the source's below ``min_similarity``
  (0 turns this check off).

Both look at the self-contained form, the one whose meaning is defined without the
conversation. An LLM judge of equivalence and conversational fit may follow (graphs/paraphrase/).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import sacrebleu

from benchsmith.tools.defaults import DEFAULT_MAX_SENTENCE_SCORE, DEFAULT_PARAPHRASE_MIN_SIMILARITY
from benchsmith.tools.retrieval.embedding import Embedder

OverlapMetric = Literal["bleu", "chrf"]
OVERLAP_METRICS = ("bleu", "chrf")


@dataclass(frozen=True)
class FilterSettings:
    metric: OverlapMetric = "bleu"
    max_sentence_score: float = DEFAULT_MAX_SENTENCE_SCORE  # sentence BLEU or chrF, 0-100
    min_similarity: float = DEFAULT_PARAPHRASE_MIN_SIMILARITY  # cosine; 0 = off


@dataclass(frozen=True)
class FilterDecision:
    kept: bool
    reason: str | None  # why it was dropped
    overlap_with_source: float
    overlap_with_kept: float  # the highest overlap with a variant kept before it (0 when none)
    similarity: float | None  # cosine to the source; None when the check is off


def overlap(hypothesis: str, reference: str, metric: OverlapMetric = "bleu") -> float:
    """Sentence BLEU or chrF of ``hypothesis`` against ``reference`` (sacrebleu defaults, 0-100)."""
    if metric == "chrf":
        return float(sacrebleu.sentence_chrf(hypothesis, [reference]).score)
    return float(sacrebleu.sentence_bleu(hypothesis, [reference]).score)


def similarities_to_source(embedder: Embedder, source: str, variants: Sequence[str]) -> list[float]:
    """Cosine of each variant's embedding to the source's."""
    vectors = np.asarray(embedder.encode([source, *variants]), dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1)
    vectors = vectors / np.where(norms == 0, 1.0, norms)[:, None]
    return [float(value) for value in vectors[1:] @ vectors[0]]


def filter_variants(
    source: str, variants: Sequence[str], settings: FilterSettings, similarities: Sequence[float] | None = None
) -> list[FilterDecision]:
    """A decision per variant, in order (a variant is compared with the ones kept before it)."""
    if settings.min_similarity > 0 and (similarities is None or len(similarities) != len(variants)):
        raise ValueError("the meaning check needs one similarity per variant")
    decisions: list[FilterDecision] = []
    kept: list[str] = []
    for index, variant in enumerate(variants):
        with_source = overlap(variant, source, settings.metric)
        with_kept = max((overlap(variant, other, settings.metric) for other in kept), default=0.0)
        similarity = similarities[index] if settings.min_similarity > 0 and similarities is not None else None
        name = settings.metric.upper() if settings.metric == "bleu" else "chrF"
        reason = None
        if with_source > settings.max_sentence_score:
            reason = f"near-duplicate of the source ({name} {with_source:.1f} > {settings.max_sentence_score:g})"
        elif with_kept > settings.max_sentence_score:
            reason = f"near-duplicate of another variant ({name} {with_kept:.1f} > {settings.max_sentence_score:g})"
        elif similarity is not None and similarity < settings.min_similarity:
            reason = f"meaning changed (cosine {similarity:.2f} < {settings.min_similarity:g})"
        if reason is None:
            kept.append(variant)
        decisions.append(FilterDecision(reason is None, reason, with_source, with_kept, similarity))
    return decisions
