"""The one history type and its text (benchsmith/history.py): prompts and retrieval queries."""

from __future__ import annotations

from benchsmith.agents.judges import AlignmentJudge
from benchsmith.agents.relevance import RelevanceJudge
from benchsmith.agents.rewriter import Rewriter
from benchsmith.history import exchanges, query_text, render_history
from benchsmith.stores.formats.benchmark_files import serialize_history

HISTORY = [("What is BM25?", "A ranking function."), ("Who made it?", ""), ("When?", "In the 1990s.")]


def test_history_renders_as_user_and_agent_lines():
    assert render_history(HISTORY) == (
        "User: What is BM25?\nAgent: A ranking function.\n"
        "User: Who made it?\nAgent: \nUser: When?\nAgent: In the 1990s."
    )
    assert render_history(HISTORY, skip_empty_answers=True) == (
        "User: What is BM25?\nAgent: A ranking function.\nUser: Who made it?\nUser: When?\nAgent: In the 1990s."
    )
    assert render_history([]) == "(no earlier turns)"
    assert render_history([], if_empty="(no turns yet)") == "(no turns yet)"


def test_a_query_is_the_last_window_of_its_history_then_the_question():
    assert query_text(HISTORY, "And dense retrieval?", window=1) == (
        "User: When?\nAgent: In the 1990s.\nUser: And dense retrieval?"
    )
    assert query_text(HISTORY, "And dense retrieval?") == render_history(HISTORY, question="And dense retrieval?")
    assert query_text([], "What is BM25?") == "User: What is BM25?"
    turns = [
        {"question": asked, "response": answered, "index": number} for number, (asked, answered) in enumerate(HISTORY)
    ]
    assert exchanges(turns) == HISTORY
    assert serialize_history(turns, 2, window=1) == "User: Who made it?\nAgent: \nUser: When?"


def test_prompts_keep_the_conversation_text_their_cached_replies_are_keyed_by():
    """The response cache is keyed by the messages: the rewriter and the audit's judges keep an
    empty answer's ``Agent:`` line, the relevance judge leaves it out, as they always did."""
    kept = "User: What is BM25?\nAgent: A ranking function.\nUser: Who made it?\nAgent: \nUser: When?"
    assert kept in Rewriter().messages(history=HISTORY, question="Why?")[1]["content"]
    assert kept in AlignmentJudge().messages(history=HISTORY, question="Why?", document="d")[1]["content"]
    relevance = RelevanceJudge().messages(history=HISTORY, question="Why?", rewrite=None, document="d")[1]["content"]
    assert "User: Who made it?\nUser: When?" in relevance
    assert (
        "<conversation>\n(no earlier turns)\n</conversation>"
        in Rewriter().messages(history=[], question="Why?")[1]["content"]
    )
