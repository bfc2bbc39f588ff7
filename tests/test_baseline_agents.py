"""The offline baseline agents: passages read as units and whole sentences, questions about a
sentence's subject (never markup, never key terms many chunks share), answers of whole
sentences, and follow-ups that refer back to the previous subject."""

from __future__ import annotations

import pytest

from benchsmith.agents.polisher import Polisher
from benchsmith.agents.questioner import SHARED_CHUNKS, Questioner
from benchsmith.agents.responder import Responder
from benchsmith.agents.sentence_questions import question_about
from benchsmith.agents.text import (PassageStatistics, content_words, is_informative, join_sentences, plain_text,
                                    sentences, split_sentences, units)
from benchsmith.evals.question_form import question_form
from benchsmith.tools.polish import review_polish

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
    assert any(kind == "prose" and text.startswith("The {func}`json.dumps` function escapes non-ASCII characters unless "
                                                   "`ensure_ascii` is false.") for kind, text in kinds)


def test_sentences_respect_abbreviations_inline_code_and_list_items():
    assert split_sentences("It returns a str, e.g. for dicts. Dr. Smith wrote `os.path. Join` here. Next one.") == [
        "It returns a str, e.g. for dicts.", "Dr. Smith wrote `os.path. Join` here.", "Next one."]
    found = sentences(MYST_PAGE)
    assert "It returns a str, e.g. for dicts, and never bytes." in found
    assert "The indent option pretty-prints nested arrays with the given number of spaces." in found
    assert not any("```" in sentence or "|" in sentence or sentence.startswith(":") for sentence in found)


def test_plain_text_keeps_what_a_reader_sees():
    assert plain_text("See {ref}`the guide <install-guide>` and :func:`~os.path.join`, **bold** `x`.") == \
        "See the guide and os.path.join, bold x."


@pytest.mark.parametrize("sentence", ["```", ":orphan:", "| indent | pretty |", "=====", "https://example.com/json",
                                      "This page has moved to the new site.", "For example:",
                                      "benchsmith ingest docs/ --collection mydocs # directories and files.",
                                      "real kill -9) and resumed without judging an instance twice."])
def test_markup_commands_meta_text_and_fragments_are_not_informative(sentence):
    assert not is_informative(sentence)


def test_questions_ask_about_the_subject_without_quoting_the_sentence():
    sentence = "The json.dumps function escapes non-ASCII characters unless ensure_ascii is false."
    ask = question_about(sentence, title="json")
    assert ask.question == "How does the json.dumps function escape non-ASCII characters?"
    assert ask.subject == "the json.dumps function" and sentence[:-1] not in ask.question
    # A sentence opening with a pronoun takes the subject the passage gave before it.
    assert question_about("It returns a str.", title="json", previous_subject="json.dumps").question == \
        "What does json.dumps return?"
    assert question_about("If the file is missing, the loader raises FileNotFoundError.", title="x").question == \
        "When does the loader raise FileNotFoundError?"
    # A docstring's imperative describes the function its signature line names.
    assert question_about("Return the decoded object.", title="json.decoder", context_name="JSONDecoder.decode"
                          ).question == "What does JSONDecoder.decode return?"


def questions_of(gold: dict, others: list[str], turns: int) -> list[str]:
    """The baseline's questions for ``turns`` follow-ups on one gold passage."""
    statistics = PassageStatistics([gold["text"], *others])
    history: list[dict] = []
    asked = []
    for _ in range(turns):
        draft = Questioner().baseline(gold=gold, history=history, switch="follow-up", corpus_stats=statistics)
        asked.append(draft.question)
        history.append({"question": draft.question, "question_unpolished": draft.question, "rewrite": draft.rewrite,
                        "response": ""})
    return asked


def test_questioner_never_asks_about_markup_and_every_question_has_three_content_words():
    asked = questions_of({"title": "json.md", "text": MYST_PAGE}, ["Unrelated text about harbours."], turns=5)
    assert len(set(asked)) == 5
    for question in asked:
        form = question_form(question)
        assert not form.problems() and not form.quoted, question
        assert form.content_words >= 3 and len(content_words(question)) >= 3, question
    assert asked[0] == "How does the json.dumps function escape non-ASCII characters?"


def test_questioner_prefers_distinctive_key_terms_to_ones_many_chunks_share():
    shared = "The configuration file lists every enabled plugin."
    distinctive = "The walrus scheduler staggers tide gauge polls across harbours."
    gold = {"title": "plugins.md", "text": f"{shared} {distinctive}"}
    others = [f"Intro {number}. {shared}" for number in range(SHARED_CHUNKS)]
    first = Questioner().baseline(gold=gold, history=[], corpus_stats=PassageStatistics([gold["text"], *others]))
    assert "walrus scheduler" in first.question
    # Without the other chunks, the shared sentence is as good a question as any: the statistics decide.
    alone = questions_of(gold, [], turns=2)
    assert any("configuration file" in question for question in alone)


def test_responder_answers_in_whole_sentences_of_the_gold():
    gold = {"title": "tides.md", "text": "# Tide tables\n\nThe tide predictor fits harmonic constituents to twelve\n"
                                         "months of gauge readings. Each constituent has an amplitude, e.g. 2.5 m,\n"
                                         "and a phase lag.\n\n- Spring tides bring the largest range.\n\n"
                                         "```python\ntides.predict(days=90)\n```\n\nThe predictor extrapolates "
                                         "high water times for the next ninety days."}
    answer = Responder().baseline(gold=gold, question="What does each constituent of the tide predictor have?").answer
    gold_sentences = {plain_text(sentence) for sentence in sentences(gold["text"])}
    answered = [sentence for paragraph in answer.split("\n\n") for sentence in split_sentences(paragraph)]
    assert answered and set(answered) <= gold_sentences
    assert "Each constituent has an amplitude, e.g. 2.5 m, and a phase lag." in answered
    assert "tides.predict" not in answer and "Tide tables" not in answer


def test_responder_matches_words_by_stem():
    gold = {"title": "json.md", "text": "The encoder sorts keys when asked. It returns a str for every input."}
    assert Responder().baseline(gold=gold, question="What does the function return?").answer == \
        "It returns a str for every input."


def test_join_sentences_splits_back_into_the_same_sentences():
    chosen = ["First one ends here.", "lower-case start follows.", "Heading without stop", "Last one."]
    text = join_sentences(chosen)
    assert [s for paragraph in text.split("\n\n") for s in split_sentences(paragraph)] == chosen


def test_polisher_refers_back_to_the_previous_subject_and_the_rewrite_stays_self_contained():
    passage = {"title": "json.md", "text": "The json.dumps function escapes non-ASCII characters unless ensure_ascii "
                                           "is false. It returns a str for every input."}
    statistics = PassageStatistics([passage["text"]])
    first = Questioner().baseline(gold=passage, history=[], corpus_stats=statistics)
    history = [{"question": first.question, "question_unpolished": first.question, "rewrite": first.rewrite,
                "response": "The json.dumps function escapes non-ASCII characters unless ensure_ascii is false."}]
    follow_up = Questioner().baseline(gold=passage, history=history, switch="follow-up", corpus_stats=statistics,
                                      previous_subject=first.subject)
    assert follow_up.subject == first.subject == "the json.dumps function"
    polished = Polisher().baseline(question=follow_up.question, subject=follow_up.subject,
                                   previous_subject=first.subject, title="json.md", previous_title="json.md").question
    assert polished == "What does it return?"
    assert follow_up.rewrite == "What does the json.dumps function return?" != polished
    history_text = [text for turn in history for text in (turn["question"], turn["response"])]
    assert review_polish(follow_up.question, polished, history_text).accepted


@pytest.mark.parametrize("question, subject, expected", [
    ("In tides, what is the timeout of the gauge client?", "the gauge client", "And its timeout?"),
    ("What are the buoys used for?", "the buoys", "What are they used for?"),
    ("How does json.dumps escape keys?", "json.dumps", "How does it escape keys?"),
])
def test_polisher_uses_pronouns_and_ellipsis(question, subject, expected):
    polished = Polisher().baseline(question=question, subject=subject, previous_subject=subject.upper()).question
    assert polished == expected
    assert review_polish(question, polished, [question]).accepted


def test_polisher_leaves_a_question_about_another_subject_alone_but_drops_a_known_document():
    question = "In tides, how is the gauge read?"
    assert Polisher().baseline(question=question, subject="the gauge", previous_subject="the ferry").question == question
    assert Polisher().baseline(question=question, subject="the gauge", previous_subject="the ferry", title="tides",
                               previous_title="tides").question == "How is the gauge read?"
