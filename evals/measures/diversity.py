"""Diversity of paraphrase variants, as ECAsT (PeerJ Computer Science 2023, e1328, Table 9)
measures it: corpus BLEU (Papineni et al., ACL 2002) of the variants against the phrasing
they vary, with sacrebleu's default settings (13a tokenization, exponential smoothing off,
4-grams), on a 0-100 scale: ``sacrebleu.corpus_bleu(hypotheses, [references]).score``, one
reference per hypothesis. Lower BLEU means more diverse phrasings.

``diversity.json`` holds exactly these keys:

* ``turns``: turns in the benchmark; ``paraphrases``: variants kept (generated or joined);
  ``turns_with_paraphrases``; ``unjoined``: imported rows whose turn is not in the benchmark;
* ``bleu_self_contained``: the variants' self-contained forms against their turn's
  self-contained form; ``bleu_raw``: the variants' raw forms against their turn's raw
  utterance; ``bleu_rewrite_vs_raw``: the benchmark's own self-contained rewrites against
  its raw utterances (ECAsT's "Original Manual" baseline: 44.72 for CAsT 2020);
* where generation ran, ``generated_before_filtering`` and ``generated_after_filtering``:
  ``paraphrases`` and the same three BLEU figures for the generated variants (their
  rewrite being the self-contained form they were generated from).

A figure with nothing to compare is null.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sacrebleu

BLEU_KEYS = ("bleu_self_contained", "bleu_raw", "bleu_rewrite_vs_raw")


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float | None:
    """Corpus BLEU of ``hypotheses`` against one reference each (sacrebleu defaults, 0-100)."""
    if len(hypotheses) != len(references):
        raise ValueError("one reference per hypothesis")
    if not hypotheses:
        return None
    return float(sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score)


def bleu_figures(
    turns: Mapping[str, Mapping[str, Any]],
    variants: Sequence[Mapping[str, Any]],
    self_contained_key: str = "self_contained",
    rewrite_key: str = "rewrite",
) -> dict[str, float | None]:
    """The three BLEU figures. ``turns``: ``{turn id: {"raw", ...}}``, whose field
    ``self_contained_key`` is the reference of the variants' self-contained forms and whose
    field ``rewrite_key`` is the rewrite compared with the raw utterance (turns without the
    field are left out of the figure that needs it); ``variants``: ``{"turn", "self_contained", "raw"}``."""
    referenced = [variant for variant in variants if turns[variant["turn"]].get(self_contained_key)]
    rewritten = [turn for turn in turns.values() if turn.get(rewrite_key)]
    return {
        "bleu_self_contained": corpus_bleu(
            [variant["self_contained"] for variant in referenced],
            [turns[variant["turn"]][self_contained_key] for variant in referenced],
        ),
        "bleu_raw": corpus_bleu(
            [variant["raw"] for variant in variants], [turns[variant["turn"]]["raw"] for variant in variants]
        ),
        "bleu_rewrite_vs_raw": corpus_bleu(
            [turn[rewrite_key] for turn in rewritten], [turn["raw"] for turn in rewritten]
        ),
    }


def diversity(
    turns: Mapping[str, Mapping[str, Any]],
    variants: Sequence[Mapping[str, Any]],
    unjoined: int,
    generated: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """``diversity.json`` (module docstring). ``turns`` carry ``raw``, the benchmark's own
    ``rewrite``, ``self_contained`` (that rewrite, else the one generation made) and, where
    generation ran, ``source`` (the self-contained form it paraphrased); ``variants`` are the
    kept ones; ``generated``: every generated candidate, with ``kept``."""
    result: dict[str, Any] = {
        "turns": len(turns),
        "paraphrases": len(variants),
        "turns_with_paraphrases": len({variant["turn"] for variant in variants}),
        "unjoined": unjoined,
        **bleu_figures(turns, variants),
    }
    if generated is not None:
        generated_turns = {variant["turn"] for variant in generated}
        sources = {turn_id: turns[turn_id] for turn_id in turns if turn_id in generated_turns}
        for key, chosen in (
            ("generated_before_filtering", list(generated)),
            ("generated_after_filtering", [variant for variant in generated if variant["kept"]]),
        ):
            result[key] = {"paraphrases": len(chosen), **bleu_figures(sources, chosen, "source", "source")}
    return result
