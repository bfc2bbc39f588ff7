"""The offline questioner's rules of development round 11: a question stands on its own, and the
statements that answer it say what was asked (data/readings/development/*-offline-r11.jsonl)."""

from __future__ import annotations

import pytest

from benchsmith.agents.offline.asking import self_contained
from benchsmith.agents.offline.facts import passage_facts
from benchsmith.agents.offline.wording import wordings
from benchsmith.entries import statements


def questions_of(text: str, title: str = "Guide › Section") -> set[str]:
    return {wording.question for fact in passage_facts(text, title) for wording in wordings(fact)}


@pytest.mark.parametrize(
    "passage",
    [
        # a definite noun the passage named before
        "Objects can be stored deltified against a base object. If the base object is deltified, it must be "
        "converted to canonical form first.",
        # the parser cut the clause from a longer one
        "If subtree include has not been modified since the branch became active, its contents will not be "
        "loaded into memory.",
        # a quantity of nothing named
        "If no contributor strongly objects and two agree, the repository can then be transferred.",
        # a past event of no user action
        "Level 0 outputs nothing except a final error message if conflicts were detected.",
        # an everyday action on any one thing
        "When you make a request, Requests makes educated guesses about the encoding of the response.",
        # no clause of its own
        "Advice shown when a sequencer command is already in progress.",
    ],
)
def test_a_condition_that_does_not_stand_alone_is_not_asked(passage):
    assert not any(fact.kind in ("condition", "remedy") for fact in passage_facts(passage, "Guide › Section"))


def test_a_condition_on_a_named_thing_is_asked_and_names_its_page():
    asked = questions_of("If verify is set to False, requests will ignore SSL certificates.")
    assert "What happens if I set verify to False?" in asked
    question = "What happens if core.commitGraph is true?"
    assert self_contained(question, "git-fsck(1) Manual Page › DISCUSSION", situated=True) == (
        "In git fsck, what happens if core.commitGraph is true?"
    )
    assert self_contained(question, "git-fsck(1) Manual Page › DISCUSSION") == question


@pytest.mark.parametrize(
    "passage",
    [
        "You can sometimes come up with a better resolution by viewing the original.",
    ],
)
def test_a_phrasal_verb_keeps_its_preposition(passage):
    assert "Is it possible to come up with a better resolution?" in questions_of(passage)


@pytest.mark.parametrize(
    "passage, lifted",
    [
        ("You can then call pytest.fail() with a custom error message.", "pytest.fail"),
        ("You can just create typer.Typer() apps and add them inside one another.", "typer.Typer()"),
        ("If you want every user to have a Token, you can simply catch the User's post_save signal.", "post_save"),
        ("You can add as many project roots as you want by adding rewrite rules.", "as many"),
        ("You can name which subdirectory to make the output relative to by giving a path.", "which"),
        ("In that case you can apply the second rule with the --root option.", "second rule"),
        ("Optionally pass run=False if you don't even want to execute the test function.", "execute"),
        ("It will not raise SystemExit but return the exit code instead.", "SystemExit"),
        ("RequestException is now a subclass of IOError rather than RuntimeError.", "RequestException"),
        ('"Behavior" is the way in which some system acts in response to a situation.', "Behavior"),
        ("Given N references, the first N lines are the one-line description of their commits.", "lines"),
    ],
)
def test_a_question_lifted_from_a_sentence_that_leans_elsewhere_is_not_asked(passage, lifted):
    assert not any(lifted in question for question in questions_of(passage))


def test_an_option_is_answered_by_its_own_description_and_not_the_next_options():
    page = (
        "--progress\n\nShow progress.\n\n--expire <time>\n\nOnly expire loose objects older than <time>.\n\n--\n\n"
        "Do not interpret any more arguments as options."
    )
    found = {statement.text: statement.entry for statement in statements(page, "git-prune(1) Manual Page › OPTIONS")}
    assert found["Only expire loose objects older than <time>."] == "--expire"
    assert found["Do not interpret any more arguments as options."] == "--"


def test_a_purpose_whose_first_sentence_is_a_restriction_needs_the_next():
    restricted = "--template=<dir>\n\nOnly used with the init command. These are passed directly to git init."
    assert not any(fact.kind == "purpose" for fact in passage_facts(restricted, "git-svn(1) Manual Page › OPTIONS"))
    completed = "--edit\n\nOnly used with the dcommit command. Edit the commit message before committing to SVN."
    purposes = [fact for fact in passage_facts(completed, "git-svn(1) Manual Page › OPTIONS") if fact.kind == "purpose"]
    assert purposes and len(purposes[0].answer) == 2
