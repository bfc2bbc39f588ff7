"""Shortcuts a retriever can exploit in a benchmark, and how hard its questions are, measured
without a model.

A benchmark whose questions copy their gold passage's words rewards lexical matching rather
than understanding: it ranks BM25 first where human questions do not (Thakur et al., 2021,
"BEIR", §6, on query–document term overlap; Rahmani et al., 2024, "Synthetic Test Collections
for Retrieval Evaluation"). Per turn first, then over the benchmark:

* lexical overlap: ``overlap(q) = max_j |S(q) ∩ S(g_j)| / |S(q)|`` over the turn's relevant
  documents g_j, S the set of content-word stems
  (:func:`benchsmith.evals.measures.lexical_overlap.lexical_overlap`); summarized by its mean, median,
  90th percentile and a histogram (``HISTOGRAM_EDGES``);
* query-only retrieval: BM25 over the corpus with the current question alone (and with the
  benchmark's own rewrite alone, where every turn has one), R@10 and RR@10 (ir_measures;
  computed by the audit exactly as ``benchsmith evaluate --retriever bm25 --history current``
  / ``oracle``);
* answer leakage: a turn with a reference answer a leaks it when
  ``|S(q) ∩ S(a)| / |S(a)| > LEAK_SHARE`` (the question already holds most of the answer's
  content-word stems); the rate is the share of the turns with an answer that leak it;
* history dependence: ``history_gain`` = mean BM25 nDCG@10 with the full history minus with
  the current question alone (Dalton et al., 2019, "CAsT 2019: The Conversational Assistance
  Track Overview", whose raw utterances lose to their rewrites); None for single-turn
  benchmarks;
* ill-formed questions: the share of turns :mod:`benchsmith.evals.measures.question_form` flags.

Flags, each calibrated on human references. The figures are printed by
``.venv/bin/python benchmarks/shortcut_reference.py`` (the stdlib corpus chunked, deduplicated
and quality-filtered as ingest does, without embedding: about 25 s; measured 2026-11-25 on
Python 3.11):

* ``lexically_trivial``: mean overlap above ``TRIVIAL_MEAN_OVERLAP`` (0.80). The 58
  hand-written questions of ``data/stdlib-validity.jsonl`` over the stdlib corpus (1,769
  chunks) have mean overlap 0.582, median 0.600, p90 0.810, and none reaches 0.9; a question
  that copies its gold has overlap near 1. The limit is the human p90 (rounded down), about
  half way between the human mean and a copy: a benchmark whose average question overlaps its
  gold as much as the top tenth of human questions copies its gold. Query-only BM25 on the human set already
  reaches R@10 0.839 and RR@10 0.760 (``REFERENCE_QUERY_ONLY``): stdlib questions name the
  API they ask about, and the corpus is small. Query-only recall therefore tells a benchmark's
  corpus and naming apart more than its copying, and is reported beside the human figure
  rather than used as a limit.
* ``answer_leak``: leak rate above ``ANSWER_LEAK_LIMIT`` (0.10). The human set has no
  reference answers; a question that states most of its own answer is a defect in any
  benchmark, so the limit only allows short answers made of the question's own terms (a
  yes/no answer that repeats the question) in one turn in ten.
* ``ill_formed``: ill-formed rate above ``ILL_FORMED_LIMIT`` (0.05). One of the 58 human
  questions (1.7%) is flagged (it quotes ``'/'``); the limit is three times that.
* ``history_free``: a conversational benchmark whose ``history_gain`` is at most
  ``HISTORY_FREE_GAIN`` (0.0): BM25 does no better with the conversation than without it, so
  its later turns stand alone and it does not test conversational retrieval. The TREC CAsT
  topics in the shared data come without their corpora (MS MARCO, KILT, WaPo), so no nDCG
  gain can be measured there; the human reference is instead the share of non-first turns
  whose manual rewrite adds content-word stems the raw utterance lacks (context the retriever
  must take from the history): CAsT 2019 79.0% (339 of 429), 2020 94.8% (181 of 191), 2021
  91.1% (194 of 213). With four in five human follow-ups or more needing the history, a
  benchmark where the history brings retrieval nothing at all is context-free.

``REFERENCE_OVERLAP_HISTOGRAM`` is the stdlib human set's overlap histogram, shown beside a
benchmark's in the audit report.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from benchsmith.evals.measures.lexical_overlap import content_stems, overlap_summary

HISTOGRAM_EDGES = tuple(round(0.1 * step, 1) for step in range(11))  # 10 bins over 0..1, the last one closed
LEAK_SHARE = 0.5
TRIVIAL_MEAN_OVERLAP = 0.80
ANSWER_LEAK_LIMIT = 0.10
ILL_FORMED_LIMIT = 0.05
HISTORY_FREE_GAIN = 0.0
ILL_FORMED_EXAMPLES = 10
FLAGS = ("lexically_trivial", "answer_leak", "ill_formed", "history_free")
FLAG_MEANINGS = {
    "lexically_trivial": "questions copy their gold passage's words: a lexical retriever matches them without "
    "understanding them",
    "answer_leak": "questions already state most of their reference answer",
    "ill_formed": "many questions are ill-formed (fragments, templates, heading paths, markup)",
    "history_free": "the conversation's history does not help retrieval: later turns stand alone",
}
# The stdlib human set's figures (benchmarks/shortcut_reference.py): overlap counts per bin of
# HISTOGRAM_EDGES over its 58 questions, and query-only BM25.
REFERENCE_NAME = "stdlib human questions (data/stdlib-validity.jsonl)"
REFERENCE_OVERLAP = {"mean": 0.582, "median": 0.600, "p90": 0.810}
REFERENCE_OVERLAP_HISTOGRAM = {"edges": list(HISTOGRAM_EDGES), "counts": [1, 0, 3, 4, 5, 12, 19, 7, 7, 0]}
REFERENCE_QUERY_ONLY = {"R@10": 0.839, "RR@10": 0.760}
REFERENCE_ILL_FORMED_RATE = 1 / 58


# ---------------------------------------------------------------------------------------
# Per turn.


def answer_share(question: str, answer: str) -> float | None:
    """``|S(q) ∩ S(a)| / |S(a)|``: the share of the answer's content-word stems the question
    holds (None for an answer without content words)."""
    answered = content_stems(answer)
    if not answered:
        return None
    return len(content_stems(question) & answered) / len(answered)


def leaks_answer(question: str, answer: str) -> bool:
    """The question holds more than ``LEAK_SHARE`` of its answer's content-word stems."""
    share = answer_share(question, answer)
    return share is not None and share > LEAK_SHARE


# ---------------------------------------------------------------------------------------
# Over the benchmark.


def overlap_histogram(values: Sequence[float]) -> dict[str, list[float] | list[int]]:
    """``{edges, counts}``: how many turns fall in each overlap bin (the last bin holds 1.0)."""
    counts, _ = np.histogram(np.asarray(values, dtype=float), bins=np.asarray(HISTOGRAM_EDGES))
    return {"edges": list(HISTOGRAM_EDGES), "counts": [int(count) for count in counts]}


def leak_rate(leaks: Mapping[str, bool]) -> float | None:
    """The share of the turns with an answer that leak it (None: no turn has an answer)."""
    return sum(leaks.values()) / len(leaks) if leaks else None


def shortcut_flags(
    mean_overlap: float | None,
    answer_leak_rate: float | None,
    history_gain: float | None,
    ill_formed_rate: float | None,
) -> list[str]:
    """The flags raised, in ``FLAGS`` order (thresholds in the module docstring)."""
    raised = {
        "lexically_trivial": mean_overlap is not None and mean_overlap > TRIVIAL_MEAN_OVERLAP,
        "answer_leak": answer_leak_rate is not None and answer_leak_rate > ANSWER_LEAK_LIMIT,
        "ill_formed": ill_formed_rate is not None and ill_formed_rate > ILL_FORMED_LIMIT,
        "history_free": history_gain is not None and history_gain <= HISTORY_FREE_GAIN,
    }
    return [flag for flag in FLAGS if raised[flag]]


def shortcut_summary(
    overlaps: Mapping[str, float],
    query_only: Mapping[str, Mapping[str, float] | None],
    leaks: Mapping[str, bool],
    history_gain: float | None,
    ill_formed: Mapping[str, list[str]],
    questions: Mapping[str, str],
    turns: Collection[str],
) -> dict[str, Any]:
    """What ``shortcuts.json`` holds, from the per-turn values.

    ``overlaps``: {turn: lexical overlap}; ``query_only``: {"current": {"R@10", "RR@10"},
    "rewrite": the same or None}; ``leaks``: {turn with an answer: leaks it}; ``ill_formed``:
    {turn: reasons} of the flagged turns; ``turns``: every turn measured."""
    summary = overlap_summary(list(overlaps.values()))
    rate = len(ill_formed) / len(turns) if turns else None
    current = query_only.get("current")
    lexical = {
        "mean": summary["mean"],
        "median": summary["median"],
        "p90": summary["p90"],
        "histogram": overlap_histogram(list(overlaps.values())),
    }
    leaked = leak_rate(leaks)
    examples = [
        {"turn": turn, "question": questions[turn], "reasons": reasons}
        for turn, reasons in list(ill_formed.items())[:ILL_FORMED_EXAMPLES]
    ]
    return {
        "turns": len(turns),
        "lexical_overlap": lexical,
        "query_only": {
            "bm25": {
                "current": dict(current) if current else None,
                "rewrite": dict(rewrite) if (rewrite := query_only.get("rewrite")) else None,
            }
        },
        "answer_leak_rate": leaked,
        "history_gain": history_gain,
        "ill_formed": {"rate": rate, "count": len(ill_formed), "examples": examples},
        "flags": shortcut_flags(summary["mean"], leaked, history_gain, rate),
    }


def thresholds() -> dict[str, float]:
    """The flag limits, for the report's notes."""
    return {
        "trivial_mean_overlap": TRIVIAL_MEAN_OVERLAP,
        "answer_leak_limit": ANSWER_LEAK_LIMIT,
        "ill_formed_limit": ILL_FORMED_LIMIT,
        "history_free_gain": HISTORY_FREE_GAIN,
        "leak_share": LEAK_SHARE,
    }
