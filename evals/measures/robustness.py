"""Metric robustness under paraphrase (ECAsT, PeerJ Computer Science 2023, e1328): how far a
system's scores move when each turn is asked in other words (test sets R1..Rn), and how much of
that move is unjudged documents rather than worse retrieval. Pure functions of per-query values
and judges' grades.

* Re-judging's vote rule is the audit's (:func:`evals.measures.audit_verdicts.is_confirmed`): a
  pooled document's grade is confirmed at level g when at least ``min_votes`` judges, and a
  strict majority of them, graded it g or higher; its confirmed grade is the highest such g
  (with an odd number of judges, their median grade). With fewer judges than ``min_votes``
  nothing is confirmed.
* Scales: the judges grade on CAsT's 0-4 scale, but many benchmarks' gold is binary (1 =
  relevant). Merged as they are, a re-judged document graded 4 weighs four times a gold one in
  nDCG's gain (trec_eval's gain is the relevance value), so a system that ranks every relevant
  document first loses nDCG after re-judging for no fault of its own. Confirmed grades are
  therefore put on the benchmark's own scale before they are merged
  (:func:`on_benchmark_scale`): on a binary benchmark a grade counts as relevant (1) from
  ``RELEVANT_GRADE`` = 2, "moderately meets", up, the threshold TREC CAsT itself uses for its
  binary measures (Dalton et al., TREC CAsT 2019 overview), and as 0 below; a graded benchmark
  (any relevance above 1, e.g. CAsT's own 0-4 qrels) takes the grades as they are. Mapping the
  grades onto the gold's scale, rather than the gold onto the grades', keeps the benchmark's
  "before" numbers exactly the ones it reports without re-judging. The judges' raw grades stay
  in ``judgments.jsonl`` and the report.
* Changes: for each measure, the mean over the judged turns on a test set minus the mean on
  the original, tested with a paired test on the per-turn values (evals/measures/significance.py),
  Holm-corrected over the test sets of that configuration and measure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from benchsmith.evals.defaults import DEFAULT_MIN_VOTES, DEFAULT_SIGNIFICANCE_RESAMPLES
from benchsmith.evals.measures.audit_verdicts import is_confirmed
from benchsmith.evals.measures.significance import DEFAULT_ALPHA, TestName, holm_bonferroni, paired_p_value

MAX_GRADE = 4
RELEVANT_GRADE = 2  # "moderately meets": relevant for CAsT's binary measures
PerQuery = Mapping[str, Mapping[str, float]]  # {query id: {measure: value}}


def grade_vote_rule(min_votes: int = DEFAULT_MIN_VOTES) -> str:
    """The rule in words, for the report."""
    return (
        f"a grade g counts when at least {min_votes} judges, and a majority of them, graded the document g or "
        "higher; its grade is the highest g that counts, and a document without one stays unjudged"
    )


def confirmed_grade(grades: Sequence[int], min_votes: int = DEFAULT_MIN_VOTES) -> int | None:
    """The highest grade g that enough judges gave (g or more) to confirm it; None when none is."""
    confirmed = None
    for level in range(MAX_GRADE + 1):
        if is_confirmed(sum(1 for grade in grades if grade >= level), len(grades), min_votes):
            confirmed = level
    return confirmed


def confirmed_judgments(
    grades: Mapping[str, Mapping[str, Sequence[int]]], min_votes: int = DEFAULT_MIN_VOTES
) -> dict[str, dict[str, int]]:
    """``{turn: {doc: confirmed grade}}`` from ``{turn: {doc: [each judge's grade]}}``."""
    confirmed: dict[str, dict[str, int]] = {}
    for turn, documents in grades.items():
        for doc_id, judged in documents.items():
            grade = confirmed_grade(judged, min_votes)
            if grade is not None:
                confirmed.setdefault(turn, {})[doc_id] = grade
    return confirmed


def is_binary_scale(qrels: Mapping[str, Mapping[str, int]]) -> bool:
    """Does the benchmark's gold use relevance 0 and 1 only?"""
    return all(relevance <= 1 for docs in qrels.values() for relevance in docs.values())


def on_benchmark_scale(confirmed: Mapping[str, Mapping[str, int]], binary: bool) -> dict[str, dict[str, int]]:
    """Confirmed 0-4 grades as relevance on the benchmark's scale: on a binary one, 1 from
    ``RELEVANT_GRADE`` up and 0 below; on a graded one, the grades themselves."""
    return {
        turn: {doc: (int(grade >= RELEVANT_GRADE) if binary else grade) for doc, grade in docs.items()}
        for turn, docs in confirmed.items()
    }


def top_k(ranking: Mapping[str, float], k: int) -> list[str]:
    """The first ``k`` documents by descending score (ties by document id), and every document
    tied with the k-th: a pool that covers the top k however an evaluator breaks ties."""
    ordered = sorted(ranking.items(), key=lambda item: (-item[1], item[0]))
    if len(ordered) <= k:
        return [doc_id for doc_id, _ in ordered]
    boundary = ordered[k - 1][1]
    return [doc_id for doc_id, score in ordered if score >= boundary]


def mean_values(per_query: PerQuery, measures: Sequence[str]) -> dict[str, float]:
    return {
        measure: float(np.mean([values[measure] for values in per_query.values()])) if per_query else 0.0
        for measure in measures
    }


def changes(
    per_set: Mapping[str, PerQuery],
    original: str,
    measures: Sequence[str],
    test: TestName = "randomization",
    resamples: int = DEFAULT_SIGNIFICANCE_RESAMPLES,
    seed: int = 0,
    alpha: float = DEFAULT_ALPHA,
) -> list[dict[str, Any]]:
    """Each test set against ``original`` on each measure: mean difference (test set −
    original), relative change, p-value and its Holm correction over the test sets."""
    rows: list[dict[str, Any]] = []
    others = [name for name in per_set if name != original]
    base = per_set[original]
    query_ids = sorted(base)
    for measure in measures:
        first = np.array([base[query_id][measure] for query_id in query_ids])
        measured = []
        for name in others:
            second = np.array([per_set[name][query_id][measure] for query_id in query_ids])
            measured.append(
                (
                    name,
                    float(np.mean(second - first)) if len(query_ids) else 0.0,
                    paired_p_value(second, first, test, resamples, seed) if len(query_ids) else 1.0,
                )
            )
        adjusted = holm_bonferroni([p for _, _, p in measured])
        baseline = float(np.mean(first)) if len(query_ids) else 0.0
        for (name, difference, p_value), p_adjusted in zip(measured, adjusted):
            rows.append(
                {
                    "set": name,
                    "measure": measure,
                    "difference": difference,
                    "relative": difference / baseline if baseline else None,
                    "p_value": p_value,
                    "p_adjusted": p_adjusted,
                    "significant": p_adjusted < alpha,
                }
            )
    return rows
