"""The offline baseline agents: passages read as units and whole sentences, the responder's
extractive answers to questions it was not asked by the offline questioner (a model's), and
follow-ups that refer back to the previous subject. The offline questioner: test_offline_questions.py."""

from __future__ import annotations

import pytest

from benchsmith.agents.polisher import Polisher
from benchsmith.agents.responder import Responder
from benchsmith.agents.text import estimated_overlap
from benchsmith.evals.measures.lexical_overlap import lexical_overlap
from benchsmith.passages import is_informative, join_sentences, plain_text, sentences, split_sentences, units
from benchsmith.tools.benchmark.polish import review_polish

MYST_PAGE = """(json-guide)=
:orphan:

# Encoding JSON

The {func}`json.dumps` function escapes non-ASCII characters unless
`ensure_ascii` is false. It returns a str, e.g. for dicts, and never bytes.

```{note}
The encoder sorts keys only when asked.
```

```python
import json
json.dumps({"a": 1})
```

.. code-block:: python

   print(json.dumps(x))

| option | meaning |
|--------|---------|
| indent | pretty  |

- The indent option pretty-prints nested arrays with the given number of spaces.
=====
https://example.com/json
"""


def test_units_separate_prose_from_code_tables_and_markup():
    kinds = [(unit.kind, unit.text) for unit in units(MYST_PAGE)]
    assert ("markup", ":orphan:") in kinds and ("markup", "(json-guide)=") in kinds and ("markup", "=====") in kinds
    assert ("code", 'import json\njson.dumps({"a": 1})') in kinds
    assert ("code", "   print(json.dumps(x))") in kinds  # the literal block after a code directive
    assert ("table", "| option | meaning |") in kinds
    assert ("prose", "The encoder sorts keys only when asked.") in kinds  # an admonition's content is prose
    # Wrapped lines are one paragraph, not two fragments.
    assert any(
        kind == "prose"
        and text.startswith(
            "The {func}`json.dumps` function escapes non-ASCII characters unless `ensure_ascii` is false."
        )
        for kind, text in kinds
    )


def test_sentences_respect_abbreviations_inline_code_and_list_items():
    assert split_sentences("It returns a str, e.g. for dicts. Dr. Smith wrote `os.path. Join` here. Next one.") == [
        "It returns a str, e.g. for dicts.",
        "Dr. Smith wrote `os.path. Join` here.",
        "Next one.",
    ]
    found = sentences(MYST_PAGE)
    assert "It returns a str, e.g. for dicts, and never bytes." in found
    assert "The indent option pretty-prints nested arrays with the given number of spaces." in found
    assert not any("```" in sentence or "|" in sentence or sentence.startswith(":") for sentence in found)


def test_plain_text_keeps_what_a_reader_sees():
    assert (
        plain_text("See {ref}`the guide <install-guide>` and :func:`~os.path.join`, **bold** `x`.")
        == "See the guide and os.path.join, bold x."
    )


def test_plain_text_keeps_dunder_names():
    # A bare name between double underscores is the name itself; reading it as bold lost
    # "__attrs_post_init__" to "attrs_post_init", which no chunk names.
    assert plain_text("If an __attrs_post_init__ method exists, `__init__` calls it.") == (
        "If an __attrs_post_init__ method exists, __init__ calls it."
    )
    assert plain_text("Some __strong words__ stay markup.") == "Some strong words stay markup."


@pytest.mark.parametrize(
    "sentence",
    [
        "```",
        ":orphan:",
        "| indent | pretty |",
        "=====",
        "https://example.com/json",
        "This page has moved to the new site.",
        "For example:",
        "benchsmith ingest docs/ --collection mydocs # directories and files.",
        "real kill -9) and resumed without judging an instance twice.",
    ],
)
def test_markup_commands_meta_text_and_fragments_are_not_informative(sentence):
    assert not is_informative(sentence)


def test_responder_answers_in_whole_sentences_of_the_gold():
    gold = {
        "title": "tides.md",
        "text": "# Tide tables\n\nThe tide predictor fits harmonic constituents to twelve\n"
        "months of gauge readings. Each constituent has an amplitude, e.g. 2.5 m,\n"
        "and a phase lag.\n\n- Spring tides bring the largest range.\n\n"
        "```python\ntides.predict(days=90)\n```\n\nThe predictor extrapolates "
        "high water times for the next ninety days.",
    }
    answer = Responder().baseline(gold=gold, question="What does each constituent of the tide predictor have?").answer
    gold_sentences = {plain_text(sentence) for sentence in sentences(gold["text"])}
    answered = [sentence for paragraph in answer.split("\n\n") for sentence in split_sentences(paragraph)]
    assert answered and set(answered) <= gold_sentences
    assert "Each constituent has an amplitude, e.g. 2.5 m, and a phase lag." in answered
    assert "tides.predict" not in answer and "Tide tables" not in answer


def test_responder_matches_words_by_stem():
    gold = {"title": "json.md", "text": "The encoder sorts keys when asked. It returns a str for every input."}
    assert (
        Responder().baseline(gold=gold, question="What does the function return?").answer
        == "It returns a str for every input."
    )


def test_responder_answers_about_the_entry_whose_signature_names_the_asked_function():
    """A chunk of an API reference holds several entries; the one asked about is named by its
    signature line only (seen on the stdlib demo: "a short summary of isgeneratorfunction" was
    answered with the chunk's first entry, isdatadescriptor)."""
    gold = {
        "title": "inspect › isdatadescriptor",
        "text": (
            "inspect.isdatadescriptor(object)\nReturn true if the object is a data descriptor.\n\n"
            "Data descriptors have a __set__ or a __delete__ attribute.\n\n"
            "inspect.isfunction(object)\nReturn true if the object is a user-defined function.\n\n"
            "inspect.isgeneratorfunction(obj)\nReturn true if the object is a user-defined generator function."
        ),
    }
    responder = Responder()
    assert (
        responder.baseline(gold=gold, question="Could you give me a short summary of isgeneratorfunction?").answer
        == "Return true if the object is a user-defined generator function."
    )
    assert (
        responder.baseline(gold=gold, question="What is isfunction good for?").answer
        == "Return true if the object is a user-defined function."
    )
    # A question in the entries' own words still finds them by those words.
    assert (
        "Data descriptors have a __set__ or a __delete__ attribute."
        in responder.baseline(gold=gold, question="What do data descriptors have?").answer
    )


def test_join_sentences_splits_back_into_the_same_sentences():
    chosen = ["First one ends here.", "lower-case start follows.", "Heading without stop", "Last one."]
    text = join_sentences(chosen)
    assert [s for paragraph in text.split("\n\n") for s in split_sentences(paragraph)] == chosen


@pytest.mark.parametrize(
    "question, subject, expected",
    [
        ("In tides, what is the timeout of the gauge client?", "the gauge client", "And its timeout?"),
        ("What are the buoys used for?", "the buoys", "What are they used for?"),
        ("How does json.dumps escape keys?", "json.dumps", "How does it escape keys?"),
    ],
)
def test_polisher_uses_pronouns_and_ellipsis(question, subject, expected):
    polished = Polisher().baseline(question=question, subject=subject, previous_subject=subject.upper()).question
    assert polished == expected
    assert review_polish(question, polished, [question]).accepted


def test_polisher_leaves_a_keyword_query_about_the_previous_subject_as_typed():
    """Seen on the stdlib demo: "it usage example"."""
    polisher = Polisher()
    assert (
        polisher.baseline(
            question="BufferedProtocol usage example", subject="BufferedProtocol", previous_subject="BufferedProtocol"
        ).question
        == "BufferedProtocol usage example"
    )


def test_polisher_leaves_a_question_about_another_subject_alone_but_drops_a_known_document():
    question = "In tides, how is the gauge read?"
    assert (
        Polisher().baseline(question=question, subject="the gauge", previous_subject="the ferry").question == question
    )
    assert (
        Polisher()
        .baseline(
            question=question, subject="the gauge", previous_subject="the ferry", title="tides", previous_title="tides"
        )
        .question
        == "How is the gauge read?"
    )


def test_estimated_overlap_is_the_evaluation_measure_on_a_worked_example():
    gold = "The tide predictor fits harmonic constituents to gauge readings."
    # stems of {tide, predictor, fit, harmonic, constituents} all occur: 5/5; {work, tide, predictor} 2/3
    assert estimated_overlap("How does the tide predictor fit harmonic constituents?", gold) == 1.0
    assert estimated_overlap("How does the tide predictor work?", gold) == pytest.approx(2 / 3)
    assert estimated_overlap("Is it so?", gold) == 0.0
    for question in (
        "How does the tide predictor fit harmonic constituents?",
        "How does the tide predictor work?",
        "What do I get back from the predictor?",
    ):
        assert estimated_overlap(question, gold) == pytest.approx(lexical_overlap(question, [gold]))


def test_responder_answers_from_the_asked_entry_alone_though_its_neighbours_share_the_class_name():
    """Seen on the stdlib demo: "a short summary of POP3.rset" was answered with rset's sentence and
    then quit's, close's and rpop's, whose signatures also name POP3 (a rare word, so each matched
    half as well as rset's)."""
    gold = {
        "title": "poplib › POP3",
        "text": (
            "poplib.POP3.rset(self)\nUnmark all messages marked for deletion.\n\n"
            "poplib.POP3.quit(self)\nSignoff: commit changes on server, unlock mailbox, close connection.\n\n"
            "poplib.POP3.close(self)\nClose the connection without assuming anything about it."
        ),
    }
    responder = Responder()
    assert (
        responder.baseline(gold=gold, question="Could you give me a short summary of POP3.rset?").answer
        == "Unmark all messages marked for deletion."
    )
    # A question naming no entry is answered from the whole passage, as before.
    assert (
        "Close the connection without assuming anything about it."
        in responder.baseline(gold=gold, question="How is the connection closed in POP3?").answer
    )


def test_polisher_keeps_the_subject_after_a_question_that_named_several_things():
    """Seen on the stdlib demo: "Can you explain how it works?" right after "How does
    Bdb.set_continue compare with Bdb.set_trace?": "it" could be either."""
    polish = Polisher().baseline
    asked = {
        "question": "Can you explain how Bdb.set_continue works?",
        "subject": "Bdb.set_continue",
        "previous_subject": "Bdb.set_continue",
    }
    for previous in (
        "How does Bdb.set_continue compare with Bdb.set_trace?",
        "What does Bdb.set_continue do? Also, what does Bdb.set_trace do?",
    ):
        assert polish(**asked, history=[{"question_unpolished": previous}]).question == asked["question"]
    assert (
        polish(**asked, history=[{"question_unpolished": "What is Bdb.set_continue for?"}]).question
        == "Can you explain how it works?"
    )
