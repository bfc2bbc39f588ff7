"""Statistics of a synthesized conversational benchmark, in the shape of the MTR-Bench table.

Tokens are words (``\\w+`` runs), a tokenizer-free count comparable across models. A topic
is a distinct gold chunk: a follow-up stays on the topic, a soft or hard switch opens one.

``similarity`` describes, per switch type, the cosine similarity of each turn's gold chunk to
the previous turn's (count, mean, min, quartiles, max), beside the collection's random-pair
baseline (mean and standard deviation over a seeded sample of chunk pairs) and the threshold a
soft switch had to clear: soft switches should sit well above random pairs, hard ones near them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from statistics import mean
from typing import Any

import numpy as np

WORD = re.compile(r"\w+", re.UNICODE)
SWITCHES = ("start", "follow-up", "soft", "hard")


def _words(text: str) -> int:
    return len(WORD.findall(text))


def similarity_summary(values: list[float]) -> dict[str, Any]:
    """Count, mean, min, quartiles (numpy's linear interpolation) and max of similarities."""
    if not values:
        return {"count": 0}
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return {"count": len(values), "mean": round(float(np.mean(values)), 4), "min": round(min(values), 4),
            "q1": round(float(q1), 4), "median": round(float(median), 4), "q3": round(float(q3), 4),
            "max": round(max(values), 4)}


def switch_similarities(dialogues: list[dict[str, Any]], random_pairs: Mapping[str, Any] | None = None,
                        soft_switch_threshold: float | None = None) -> dict[str, Any]:
    """Per switch type, the distribution of turns' ``similarity_to_previous``; and the baseline."""
    by_switch: dict[str, list[float]] = {name: [] for name in SWITCHES[1:]}
    for dialogue in dialogues:
        for turn in dialogue["turns"]:
            if turn.get("similarity_to_previous") is not None and turn["switch"] in by_switch:
                by_switch[turn["switch"]].append(float(turn["similarity_to_previous"]))
    summary: dict[str, Any] = {name: similarity_summary(values) for name, values in by_switch.items()}
    if random_pairs:
        summary["random_pairs"] = {key: random_pairs[key] for key in ("mean", "std", "pairs", "seed") if key in random_pairs}
    if soft_switch_threshold is not None:
        summary["soft_switch_threshold"] = round(soft_switch_threshold, 4)
    return summary


def benchmark_statistics(dialogues: list[dict[str, Any]], usage: dict[str, Any],
                         random_pairs: Mapping[str, Any] | None = None,
                         soft_switch_threshold: float | None = None) -> dict[str, Any]:
    turns = [turn for dialogue in dialogues for turn in dialogue["turns"]]
    conversations = len(dialogues)
    switches = {name: sum(turn["switch"] == name for turn in turns) for name in SWITCHES}
    polished_turns = [turn for turn in turns if turn["index"] > 0]
    per_conversation = (lambda value: round(value / conversations, 2)) if conversations else (lambda value: 0.0)
    return {
        "conversations": conversations,
        "turns": len(turns),
        "turns_per_conversation": round(len(turns) / conversations, 2) if conversations else 0.0,
        "tokens_per_question": round(mean(_words(t["question"]) for t in turns), 2) if turns else 0.0,
        "tokens_per_answer": round(mean(_words(t["response"]) for t in turns), 2) if turns else 0.0,
        "topics_per_conversation": round(mean(len({g for t in d["turns"] for g in t["gold_ids"]}) for d in dialogues), 2)
        if dialogues else 0.0,
        "switches": switches,
        "similarity": switch_similarities(dialogues, random_pairs, soft_switch_threshold),
        "polisher_rejections": sum(turn.get("polish_rejected") is not None for turn in polished_turns),
        "polished_turns": len(polished_turns),
        "model_calls": usage.get("calls", 0),
        "cached_model_calls": usage.get("cached_calls", 0),
        "model_calls_per_conversation": per_conversation(usage.get("calls", 0)),
        "tokens_per_conversation": per_conversation(usage.get("input_tokens", 0) + usage.get("output_tokens", 0)),
        "cost_per_conversation_usd": round(usage.get("cost_usd", 0.0) / conversations, 6) if conversations else 0.0,
    }
