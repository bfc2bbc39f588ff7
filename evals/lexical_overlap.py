"""Lexical overlap between a question and its gold passage: how far a question copies its answer's words.

For a question q and gold passages g_1..g_m,

    overlap(q) = max_j |S(q) ∩ S(g_j)| / |S(q)|,

where S(t) is the set of Snowball English stems of t's content words (words of three or more
characters that are not stopwords, :func:`benchsmith.evals.measures.question_form.measured_content_words`). It
is 1 when every content word of the question occurs in a gold passage (a lexical retriever
finds such a gold with the question alone), 0 when none does; a question with no content
words has overlap 0 (it is ill-formed, which the audit reports on its own). The best gold
counts where there are several: one copied passage is enough for BM25.

Question generation by LLMs leans on the passage's vocabulary, which favours lexical
retrievers (query–document term overlap is the usual diagnostic of the bias, e.g. Thakur et
al., 2021, "BEIR", §6; Rahmani et al., 2024, "Synthetic Test Collections for Retrieval
Evaluation"). Synthesis bounds it per question (``--max-overlap``) and the audit reports its
distribution against a human reference.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from benchsmith.evals.measures.question_form import measured_content_words
from benchsmith.words import stems


def content_stems(text: str) -> set[str]:
    """The distinct Snowball English stems of a text's content words."""
    return set(stems(measured_content_words(text)))


def lexical_overlap(question: str, gold_texts: Iterable[str]) -> float:
    """The share of the question's content-word stems found in its best gold passage (0..1)."""
    asked = content_stems(question)
    if not asked:
        return 0.0
    return max((len(asked & content_stems(text)) / len(asked) for text in gold_texts), default=0.0)


def overlap_summary(values: Sequence[float]) -> dict[str, float | int | None]:
    """``{n, mean, median, p90}`` of per-question overlaps (None where there are none)."""
    if not values:
        return {"n": 0, "mean": None, "median": None, "p90": None}
    array = np.asarray(values, dtype=float)
    return {
        "n": len(values),
        "mean": float(array.mean()),
        "median": float(np.median(array)),
        "p90": float(np.percentile(array, 90)),
    }
