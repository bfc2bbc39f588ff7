"""Round 36 of the offline questioner, from a development tree added for it (python-docs: the Python tutorial,
HOWTOs, FAQ and language reference): a dunder named alone is a code name, a phrase keeps the mark that closes
its quotation, a place and what stands there ("Alongside X is a Y") is no definition, "a complicated topic"
weighs a thing rather than say what it is, what a task needs is no way to do it, a heading with a subtitle
after a dash names no one task, an error's raiser keeps its complement or is not asked about, and "neither X nor
Y" keeps its "neither"."""

from __future__ import annotations

import pytest

from benchsmith.agents.offline.facts import passage_facts
from benchsmith.agents.offline.facts.tasks import heading_task
from benchsmith.language import parse


def test_a_dunder_named_alone_is_one_code_name():
    sentence = parse("Without a __dict__ variable, instances cannot be assigned new variables.")
    assert [token.text for token in sentence.tokens if token.code] == ["__dict__"]
    (fact,) = passage_facts("Without a __dict__ variable, instances cannot be assigned new variables.", "__slots__")
    assert fact.topic == "a __dict__ variable"  # was "a _": the tokenizer had cut the name into underscores


def test_a_task_keeps_the_mark_that_closes_its_quotation():
    text = "You can also search online bookstores for “Python” and filter out the Monty Python references."
    (fact,) = passage_facts(text, "How do I find Python?")
    assert dict(fact.slots)["vp"] == "search online bookstores for “Python”"


@pytest.mark.parametrize(
    "sentence",
    [
        "Alongside the tools directory is a build directory.",  # a place, the subject after the verb
        "Regular expressions are a complicated topic.",  # how hard it is, not what it is
    ],
)
def test_no_definition_is_read_where_the_sentence_defines_nothing(sentence):
    assert not [fact for fact in passage_facts(sentence, "Feedback") if fact.kind == "definition"]


def test_a_fronted_phrase_set_off_by_a_comma_leaves_the_definition():
    text = "In general, a descriptor is an attribute value that has one of the methods in the descriptor protocol."
    (fact,) = passage_facts(text, "Definition and introduction")
    assert (fact.kind, fact.topic) == ("definition", "descriptor")


@pytest.mark.parametrize(
    ("text", "title", "asked"),
    [
        # what the task needs is no way to do it (python-docs; git's "you need to have ... in place", development)
        ("To change System variables, you need non-restricted access to your machine.", "Environment variables", False),
        ("To convert submodule pointers, you need to have the converted repository in place.", "Submodules", False),
        ("To implement a custom type, you need to subclass the ParamType class.", "Types", True),  # a step
    ],
)
def test_a_purpose_answered_by_what_it_needs_asks_no_how(text, title, asked):
    assert any(fact.kind == "procedure" for fact in passage_facts(text, title)) is asked


def test_a_heading_with_a_subtitle_after_a_dash_is_no_one_task():
    body = "You can use a QueueHandler subclass to send messages to other kinds of queues."
    assert heading_task("Subclassing QueueHandler - a ZeroMQ example", body) is None
    assert heading_task("Subclassing QueueHandler", body) == ("subclass QueueHandler", "QueueHandler")


def test_a_raiser_whose_complement_the_question_would_leave_out_is_not_asked_about():
    # "What makes attempt raise NameError?" asked of an attempt at nothing; NameError alone any page raises
    text = "When a name is not bound, an attempt to evaluate it raises a NameError exception."
    assert not [fact for fact in passage_facts(text, "Resolution of names") if fact.kind == "error"]
    (fact,) = [
        f for f in passage_facts("Session.close raises a SessionError if it is closed.", "S") if f.kind == "error"
    ]
    assert dict(fact.slots)["raiser"] == "Session.close"


def test_a_condition_of_neither_and_nor_keeps_its_neither():
    text = "The built-in function int() falls back to __trunc__() if neither __int__() nor __index__() is defined."
    (fact,) = passage_facts(text, "Emulating numeric types")
    assert dict(fact.slots)["clause"] == "neither __int__() nor __index__() is defined"  # not "I define X nor Y"
