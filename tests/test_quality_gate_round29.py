"""The quality gate on two development trees of a command-line tool's shape (nox and black, round 29)."""

from __future__ import annotations

import pytest

from benchsmith.evals.quality_gate import TurnEvidence, judge_turn


def _mismatch(question: str, reply: str) -> str | None:
    return judge_turn(TurnEvidence(question, reply, gold=[("Guide", reply)])).flags.get("reply_mismatch")


@pytest.mark.parametrize(
    "question, reply",
    [
        # "using a docstring" hung by the parser on the object: a means all the same (nox, read ok)
        (
            "What's the best way to add a description to my session?",
            "You can add a description to your session using a docstring.",
        ),
        # the user's task first, then what to do (black, read ok)
        (
            "What is the recommended way to format Jupyter Notebooks?",
            "If you want to format Jupyter Notebooks, install with pip install “black[jupyter]”.",
        ),
    ],
)
def test_a_how_question_answered_with_a_way_passes(question, reply):
    assert _mismatch(question, reply) is None


@pytest.mark.parametrize(
    "question, reply",
    [
        ("What's the best way to add a description to my session?", "You can add a description to your session."),
        (
            "What is the recommended way to format Jupyter Notebooks?",
            "If you want to format Jupyter Notebooks, Black can do it.",
        ),
    ],
)
def test_a_how_question_answered_only_that_it_can_be_done_is_still_a_mismatch(question, reply):
    assert _mismatch(question, reply) == "asks how; the reply says only that it can be done"
