"""Statistics of a synthesized conversational benchmark, in the shape of the MTR-Bench table.

Tokens are words (``\\w+`` runs), a tokenizer-free count comparable across models. A topic
is a distinct gold chunk: a follow-up stays on the topic, a soft or hard switch opens one.
"""

from __future__ import annotations

import re
from statistics import mean
from typing import Any

WORD = re.compile(r"\w+", re.UNICODE)
SWITCHES = ("start", "follow-up", "soft", "hard")


def _words(text: str) -> int:
    return len(WORD.findall(text))


def benchmark_statistics(dialogues: list[dict[str, Any]], usage: dict[str, Any]) -> dict[str, Any]:
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
        "polisher_rejections": sum(turn.get("polish_rejected") is not None for turn in polished_turns),
        "polished_turns": len(polished_turns),
        "model_calls": usage.get("calls", 0),
        "cached_model_calls": usage.get("cached_calls", 0),
        "model_calls_per_conversation": per_conversation(usage.get("calls", 0)),
        "tokens_per_conversation": per_conversation(usage.get("input_tokens", 0) + usage.get("output_tokens", 0)),
        "cost_per_conversation_usd": round(usage.get("cost_usd", 0.0) / conversations, 6) if conversations else 0.0,
    }
