"""Round 37 of the offline questioner: a section's example answers the task its heading names only when the
sentence right before it does not set up a case instead (the default, the past, an instance, a supposition)."""

from __future__ import annotations

import pytest

from benchsmith.agents.offline.facts import passage_facts

TITLE = "Guide › Selecting parametrized sessions"
HEADING = "Selecting parametrized sessions"
EXAMPLE = "@nox.session\n@nox.parametrize('django', ['1.9', '2.0'])\ndef tests(session, django):\n    pass"


def section(introduction: str) -> str:
    return "\n\n".join([HEADING, introduction, f"```\n{EXAMPLE}\n```"])


def tasks(text: str) -> list[str]:
    return [fact.slot("vp") for fact in passage_facts(text, TITLE) if fact.kind == "procedure" and fact.example]


@pytest.mark.parametrize(
    "introduction",
    [
        "If you have a parametrized session such as:",  # an instance of the thing (nox, read broken)
        "By default, nox runs every parametrized session:",  # the default (cmd2, read broken)
        "Prior to version 3.1 the supported mechanism for selecting sessions used the syntax:",  # the past (pytest)
        "Let's say that we want to run the sessions of one Django version only:",  # a supposition
    ],
)
def test_an_example_introduced_as_a_case_answers_no_task(introduction):
    assert tasks(section(introduction)) == []


@pytest.mark.parametrize(
    "introduction",
    [
        "To select one of them, pass its name with --session:",
        # the condition parsed as the root (FastAPI's sources: "If you need to mark a path operation as deprecated, but
        # without removing it, pass the parameter deprecated:", read ok)
        "If you need to run only some of them, but without editing the noxfile, pass the session's name:",
        "Sessions can be selected by name:",
    ],
)
def test_an_example_introduced_as_the_way_still_answers_the_task(introduction):
    assert tasks(section(introduction)) == ["select parametrized sessions"]
