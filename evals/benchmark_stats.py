"""Statistics of a synthesized conversational benchmark, in the shape of the MTR-Bench table.

Tokens are words (``\\w+`` runs), a tokenizer-free count comparable across models. A topic
is a distinct gold chunk: a follow-up stays on the topic, a soft or hard switch opens one.

``similarity`` describes, per switch type, the cosine similarity of each turn's gold chunk to
the previous turn's (count, mean, min, quartiles, max), beside the collection's random-pair
baseline (mean and standard deviation over a seeded sample of chunk pairs) and the threshold a
soft switch had to clear: soft switches should sit well above random pairs, hard ones near them.
``switch_rule`` states the rule the labels follow (soft: similarity ≥ threshold; hard: below it
and on another document) and counts the turns whose label differs from the switch the router
drew (``relabelled``, e.g. ``"soft→hard"``).

``lexical_overlap`` summarizes each kept question's lexical overlap with its gold passage
(:func:`benchsmith.evals.measures.lexical_overlap.lexical_overlap`, recorded per turn by synthesis):
n, mean, median and 90th percentile (:func:`~benchsmith.evals.measures.lexical_overlap.overlap_summary`).
``overlap_rejections`` counts what keeping it under ``max_overlap`` took: corrective turns sent,
turns re-planned on another gold chunk, and turns kept above the limit (flagged
``overlap_rejected``).
"""

from __future__ import annotations

from collections.abc import Mapping
from statistics import mean
from typing import Any

import numpy as np

from benchsmith.evals.measures.lexical_overlap import overlap_summary
from benchsmith.words import WORD

SWITCHES = ("start", "follow-up", "soft", "hard")


def _words(text: str) -> int:
    return len(WORD.findall(text))


def similarity_summary(values: list[float]) -> dict[str, Any]:
    """Count, mean, min, quartiles (numpy's linear interpolation) and max of similarities."""
    if not values:
        return {"count": 0}
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return {
        "count": len(values),
        "mean": round(float(np.mean(values)), 4),
        "min": round(min(values), 4),
        "q1": round(float(q1), 4),
        "median": round(float(median), 4),
        "q3": round(float(q3), 4),
        "max": round(max(values), 4),
    }


def switch_similarities(
    dialogues: list[dict[str, Any]],
    random_pairs: Mapping[str, Any] | None = None,
    soft_switch_threshold: float | None = None,
) -> dict[str, Any]:
    """Per switch type, the distribution of turns' ``similarity_to_previous``; and the baseline."""
    by_switch: dict[str, list[float]] = {name: [] for name in SWITCHES[1:]}
    for dialogue in dialogues:
        for turn in dialogue["turns"]:
            if turn.get("similarity_to_previous") is not None and turn["switch"] in by_switch:
                by_switch[turn["switch"]].append(float(turn["similarity_to_previous"]))
    summary: dict[str, Any] = {name: similarity_summary(values) for name, values in by_switch.items()}
    if random_pairs:
        summary["random_pairs"] = {
            key: random_pairs[key] for key in ("mean", "std", "pairs", "seed") if key in random_pairs
        }
    if soft_switch_threshold is not None:
        summary["soft_switch_threshold"] = round(soft_switch_threshold, 4)
    return summary


SWITCH_RULE = {
    "soft": "similarity_to_previous >= soft_switch_threshold",
    "hard": "similarity_to_previous < soft_switch_threshold, gold on another document than the previous",
    "follow-up": "the previous turn's gold",
}


def switch_rule(dialogues: list[dict[str, Any]]) -> dict[str, Any]:
    """The labelling rule, and how many turns the walker relabelled from the drawn switch."""
    relabelled: dict[str, int] = {}
    for dialogue in dialogues:
        for turn in dialogue["turns"]:
            drawn = turn.get("switch_drawn")
            if drawn and drawn != turn["switch"]:
                key = f"{drawn}→{turn['switch']}"
                relabelled[key] = relabelled.get(key, 0) + 1
    return {**SWITCH_RULE, "relabelled": dict(sorted(relabelled.items()))}


def overlap_statistics(turns: list[dict[str, Any]], max_overlap: float | None = None) -> dict[str, Any]:
    """``lexical_overlap`` (summary of the turns' recorded overlaps, rounded to 4 places) and
    ``overlap_rejections`` (corrective turns, re-plans, turns kept above the limit)."""
    values = [float(turn["lexical_overlap"]) for turn in turns if turn.get("lexical_overlap") is not None]
    summary = {
        key: round(value, 4) if isinstance(value, float) else value for key, value in overlap_summary(values).items()
    }
    rejections = {
        "max_overlap": max_overlap,
        "corrective_turns": sum(int(turn.get("overlap_corrections") or 0) for turn in turns),
        "replans": sum(int(turn.get("overlap_replans") or 0) for turn in turns),
        "kept_above_limit": sum(bool(turn.get("overlap_rejected")) for turn in turns),
    }
    return {"lexical_overlap": summary, "overlap_rejections": rejections}


def benchmark_statistics(
    dialogues: list[dict[str, Any]],
    random_pairs: Mapping[str, Any] | None = None,
    soft_switch_threshold: float | None = None,
    max_overlap: float | None = None,
) -> dict[str, Any]:
    """The benchmark's own figures (stats.json): a function of its dialogues and the corpus, so
    every run that makes the same dialogues writes the same file, whichever processes made them
    and however often a call was repeated. What making it cost is the run's usage
    (:func:`cost_per_conversation`)."""
    turns = [turn for dialogue in dialogues for turn in dialogue["turns"]]
    conversations = len(dialogues)
    switches = {name: sum(turn["switch"] == name for turn in turns) for name in SWITCHES}
    polished_turns = [turn for turn in turns if turn["index"] > 0]
    return {
        "conversations": conversations,
        "turns": len(turns),
        "turns_per_conversation": round(len(turns) / conversations, 2) if conversations else 0.0,
        "tokens_per_question": round(mean(_words(t["question"]) for t in turns), 2) if turns else 0.0,
        "tokens_per_answer": round(mean(_words(t["response"]) for t in turns), 2) if turns else 0.0,
        "topics_per_conversation": round(
            mean(len({g for t in d["turns"] for g in t["gold_ids"]}) for d in dialogues), 2
        )
        if dialogues
        else 0.0,
        "switches": switches,
        "similarity": switch_similarities(dialogues, random_pairs, soft_switch_threshold),
        "switch_rule": switch_rule(dialogues),
        **overlap_statistics(turns, max_overlap),
        "polisher_rejections": sum(turn.get("polish_rejected") is not None for turn in polished_turns),
        "polished_turns": len(polished_turns),
    }


def cost_per_conversation(usage: Mapping[str, Any], conversations: int) -> dict[str, float]:
    """Model calls, tokens and dollars per conversation, from a run's usage totals."""
    if not conversations:
        return {"model_calls": 0.0, "tokens": 0.0, "cost_usd": 0.0}
    tokens = usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
    return {
        "model_calls": round(usage.get("calls", 0) / conversations, 2),
        "tokens": round(tokens / conversations, 2),
        "cost_usd": round(usage.get("cost_usd", 0.0) / conversations, 6),
    }
