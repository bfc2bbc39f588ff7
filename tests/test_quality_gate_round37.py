"""The quality gate reads a reply's prose, not its example's code, and a reply that adds a name is no restatement
(round 37: turns the gate dropped on typer's sources, read ok there)."""

from __future__ import annotations

import pytest

from benchsmith.evals.quality_gate import TurnEvidence, judge_turn

HELP_OUTPUT = """```
$ typer my_package.main run --help
Usage: typer run [OPTIONS]

Options:
  --name TEXT
  --help       Show this message and exit.
```"""


def _flags(question: str, reply: str) -> dict[str, str]:
    return judge_turn(TurnEvidence(question, reply, gold=[("Guide", reply)])).flags


def test_a_reply_that_names_what_the_question_lacks_is_no_restatement():
    flags = _flags(
        "How do I launch applications from my CLI program?",
        "You can launch applications from your CLI program with typer.launch().",
    )
    assert "reply_mismatch" not in flags


@pytest.mark.parametrize(
    "question, reply",
    [
        # git, development: read broken
        (
            "What's the best way to pass the merge strategy-specific option?",
            "Pass the merge strategy-specific option through to the merge strategy.",
        ),
        ("Is it possible to use the subcommand utils?", "You can use the subcommand utils."),
    ],
)
def test_a_reply_that_adds_no_name_still_restates(question, reply):
    assert _flags(question, reply).get("reply_mismatch") == "the reply only restates the question"


@pytest.mark.parametrize(
    "reply",
    [
        HELP_OUTPUT,
        f"To run a module of a package:\n\n{HELP_OUTPUT}",
        f"{HELP_OUTPUT[:-3]}",
    ],  # the last one cut before its fence
)
def test_a_pointing_word_in_an_example_is_no_dangling_referent(reply):
    assert "dangling_referent" not in _flags("How do I run a package or module?", reply)


@pytest.mark.parametrize(
    "reply",
    [
        "This is useful for running a package or module.",
        f"As shown above, pass the module's name.\n\n{HELP_OUTPUT}",
    ],
)
def test_the_prose_around_an_example_is_still_read(reply):
    assert "dangling_referent" in _flags("How do I run a package or module?", reply)
