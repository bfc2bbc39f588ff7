"""Round 28 of the offline questioner: a capability keeps its object's own phrase ("run a script on
initialization"), so a yes/no question never asks whether a user can do what no one doubts while its reply
answers the narrower case; a link parsed into the verb phrase is no action; a task done "too" or "also" is
not asked without what it is besides."""

from __future__ import annotations

from benchsmith.agents.offline.facts import passage_facts
from benchsmith.agents.offline.wording import wordings


def questions(text: str, title: str = "Guide") -> list[str]:
    return [wording.question for fact in passage_facts(text, title) for wording in wordings(fact)]


def test_a_capability_keeps_the_phrase_that_narrows_its_object():
    # cmd2 (development): readers read "What's the best way to run a script?" answered only by the startup case
    asked = questions(
        "You can run a script on initialization by passing the script filename in the startup_script parameter."
    )
    assert any("run a script on initialization" in question for question in asked)
    assert not any(question.endswith("run a script?") for question in asked)
    # fastapi (development): "Can I customize several metadata configurations?" asks without where
    asked = questions("You can customize several metadata configurations in your FastAPI application.")
    assert any("configurations in my FastAPI application?" in question for question in asked)
    assert not any(question.endswith("metadata configurations?") for question in asked)


def test_a_phrase_of_the_verb_is_still_left_to_the_reply():
    # "with typer.launch()" is the means a yes answers with, attached to the verb: it stays out of the question
    asked = questions("You can launch applications from your CLI program with typer.launch().")
    assert any(question.endswith("launch applications from my CLI program?") for question in asked)


def test_a_role_left_out_still_keeps_the_capability_unasked():
    # "as a field option" is the role, the whole point (drf, development round 13): neither asked with nor without it
    assert not any(
        "expiry_date" in question
        for question in questions("You can include expiry_date as a field option on a ModelSerializer class.")
    )


def test_a_link_parsed_into_the_verb_phrase_is_no_action():
    asked = questions(
        'You can "star" Typer in GitHub (clicking the star button at the top right): https://github.com/tiangolo/typer.'
    )
    assert not any("github.com" in question for question in asked)


def test_a_task_done_too_or_also_is_not_asked_alone():
    # drf (development, read broken): "How do I also support .save()?" leans on what the question never says
    assert not questions("To also support .save(), override the create method.")
    assert not questions("To accept slashes too, you have to add a custom regular pattern to the placeholder.")
    # without the additive word it is a task like any other, and "also" before a capability's verb is no part of it
    assert "How do I accept slashes?" in questions(
        "To accept slashes, you have to add a custom regular pattern to the placeholder."
    )
    assert any(
        "include my Markdown files in nested directories" in question
        for question in questions("You can also include your Markdown files in nested directories.")
    )
