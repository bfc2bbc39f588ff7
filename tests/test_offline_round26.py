"""Development round 26 of the offline questioner (drf, FastAPI's sources, cmd2, guizero): a tutorial
narrating its own steps with "we" gives no question; an entry's description that says "we" still does."""

from __future__ import annotations

from tests.questioner_fixtures import asked


def test_a_tutorial_narrating_its_steps_with_we_gives_no_question():
    narrated = (
        "Since we're using viewsets and routers, we can simply use the automatic schema generation. "
        "If the --verbose option is passed, we log each request to stderr."
    )
    assert asked(narrated, "Tutorial › Schemas") == []
    # the same facts told to the reader are asked
    told = "If the --verbose option is passed, the client logs each request to stderr."
    assert any("--verbose" in question for question in asked(told, "Tutorial › Schemas"))


def test_an_entry_that_says_we_is_still_asked_about():
    entry = "strip_assertion(text)\n\nDetermine whether we strip the AssertionError prefix from the text."
    assert any("strip_assertion" in question for question in asked(entry, "API Reference › Helpers"))
