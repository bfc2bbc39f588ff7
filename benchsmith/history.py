"""A conversation's history and its one text form.

A history is a list of :data:`Exchange` — (question, answer) — oldest first. Turn records
(a benchmark's turns, a synthesis run's turns: dicts with ``question`` and ``response``)
become one with :func:`exchanges`.

Its text is ``User:``/``Agent:`` lines: the prompts of every agent and the retrieval query
of the ``full`` and ``last:K`` history modes. Prompts are cached by their text and queries
are scored by it, so the form must not change.

It sits below every layer (agents render prompts, stores and tools the queries) and imports
nothing of benchsmith's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Exchange = tuple[str, str]  # (question, answer) of one earlier turn


def exchanges(turns: Iterable[Mapping[str, Any]]) -> list[Exchange]:
    """The (question, response) of each turn record."""
    return [(turn["question"], turn["response"]) for turn in turns]


NO_EARLIER_TURNS = "(no earlier turns)"


def render_history(
    history: Iterable[Exchange],
    *,
    question: str | None = None,
    if_empty: str = NO_EARLIER_TURNS,
    skip_empty_answers: bool = False,
) -> str:
    """``User: question`` and ``Agent: answer`` lines, then ``User: question`` when one is given
    (the turn being asked); ``if_empty`` when there are no lines at all. An empty answer
    gets an empty ``Agent:`` line unless ``skip_empty_answers`` (the relevance and paraphrase
    judges' prompts, over TREC CAsT histories that often have no answers, leave it out)."""
    lines = []
    for asked, answered in history:
        lines.append(f"User: {asked}")
        if answered or not skip_empty_answers:
            lines.append(f"Agent: {answered}")
    if question is not None:
        lines.append(f"User: {question}")
    return "\n".join(lines) or if_empty


def query_text(history: Sequence[Exchange], question: str, window: int | None = None) -> str:
    """A turn's retrieval query with its history: the last ``window`` exchanges (all of them
    when None), then the question."""
    earlier = history if window is None else history[max(0, len(history) - window) :]
    return render_history(earlier, question=question)
