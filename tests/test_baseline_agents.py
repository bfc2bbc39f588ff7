"""The offline baseline agents: passages read as units and whole sentences, questions about a
sentence's subject (never markup, never key terms many chunks share), answers of whole
sentences, and follow-ups that refer back to the previous subject."""

from __future__ import annotations

import pytest

from benchsmith.agents.polisher import Polisher
from benchsmith.agents.questioner import SHARED_CHUNKS, Questioner
from benchsmith.agents.responder import Responder
from benchsmith.agents.questioner import candidate_questions
from benchsmith.agents.sentence_questions import page_title, question_about, user_phrasings
from benchsmith.passages import is_informative, join_sentences, plain_text, sentences, split_sentences, units
from benchsmith.agents.text import PassageStatistics, estimated_overlap
from benchsmith.evals.lexical_overlap import lexical_overlap
from benchsmith.evals.question_form import ill_formed_questions, question_form
from benchsmith.tools.polish import review_polish
from benchsmith.words import content_words, stems

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


def test_a_negated_predicate_is_not_asked_as_if_it_held():
    """Seen on the stdlib demo: "escapes are not expanded" was asked as "How are escapes expanded?"."""
    assert question_about("Escapes are not expanded.", title="shlex") is None
    assert question_about("The file will not be closed.", title="x") is None
    assert question_about("Escapes are expanded before the call.", title="shlex").question == \
        "In shlex, how are escapes expanded?"


def test_no_question_leans_on_what_only_the_passage_names():
    """Seen in multi-passage turns of the stdlib demo: "how does FancyURLopener.prompt_user_passwd
    override this in a GUI environment?" and "how are the remaining arguments passed?" point at
    what the sentence before said, which the asker never saw."""
    context = {"title": "urllib.request", "context_name": "FancyURLopener.prompt_user_passwd"}
    assert question_about("Override this in a GUI environment!", **context) is None
    assert question_about("The remaining arguments are passed to the constructor.", title="warnings") is None
    assert question_about("The above example prints the result.", title="x") is None
    # An object that names its thing, or a question without the object, still stands.
    assert question_about("Override the prompt in a GUI environment.", **context).question == \
        "How does FancyURLopener.prompt_user_passwd override the prompt in a GUI environment?"
    assert question_about("It returns it to the caller.", title="x", previous_subject="json.dumps").question == \
        "What does json.dumps return?"


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
    # In the user's words: "escapes" is what the documentation says, "deal with" what a user asks.
    assert asked[0] == "How does the json.dumps function deal with non-ASCII characters?"


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


def test_responder_answers_about_the_entry_whose_signature_names_the_asked_function():
    """A chunk of an API reference holds several entries; the one asked about is named by its
    signature line only (seen on the stdlib demo: "a short summary of isgeneratorfunction" was
    answered with the chunk's first entry, isdatadescriptor)."""
    gold = {"title": "inspect › isdatadescriptor", "text": (
        "inspect.isdatadescriptor(object)\nReturn true if the object is a data descriptor.\n\n"
        "Data descriptors have a __set__ or a __delete__ attribute.\n\n"
        "inspect.isfunction(object)\nReturn true if the object is a user-defined function.\n\n"
        "inspect.isgeneratorfunction(obj)\nReturn true if the object is a user-defined generator function.")}
    responder = Responder()
    assert responder.baseline(gold=gold, question="Could you give me a short summary of isgeneratorfunction?").answer \
        == "Return true if the object is a user-defined generator function."
    assert responder.baseline(gold=gold, question="What is isfunction good for?").answer \
        == "Return true if the object is a user-defined function."
    # A question in the entries' own words still finds them by those words.
    assert "Data descriptors have a set or a delete attribute." in \
        responder.baseline(gold=gold, question="What do data descriptors have?").answer


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
    assert polished == "What do I get back from it?"
    assert follow_up.rewrite == "What do I get back from the json.dumps function?" != polished
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


def test_polisher_leaves_a_keyword_query_about_the_previous_subject_as_typed():
    """Seen on the stdlib demo: "it usage example"."""
    polisher = Polisher()
    assert polisher.baseline(question="BufferedProtocol usage example", subject="BufferedProtocol",
                             previous_subject="BufferedProtocol").question == "BufferedProtocol usage example"


def test_polisher_leaves_a_question_about_another_subject_alone_but_drops_a_known_document():
    question = "In tides, how is the gauge read?"
    assert Polisher().baseline(question=question, subject="the gauge", previous_subject="the ferry").question == question
    assert Polisher().baseline(question=question, subject="the gauge", previous_subject="the ferry", title="tides",
                               previous_title="tides").question == "How is the gauge read?"


@pytest.mark.parametrize("sentence, title, expected", [
    # "X returns Y" → what a user gets back, not the documentation's verb
    ("The parser returns a dict for every JSON object.", "json", "What do I get back from the parser?"),
    ("If the file is missing, the loader raises FileNotFoundError.", "loaders",
     "What makes the loader throw FileNotFoundError?"),
    ("The installer deletes stale wheels from the cache.", "Installation",
     "How does the installer get rid of stale wheels from the cache?"),
    ("Use the mirror directory to configure offline installs.", "Installation", "How do I set up offline installs?"),
    ("The gauge client is used to poll the tide feed.", "Tides", "Why would I need the gauge client?"),
])
def test_questions_are_asked_in_the_users_words(sentence, title, expected):
    ask = question_about(sentence, title=title)
    phrased = user_phrasings(ask, title)
    assert phrased[0].question == expected
    # the user's words are not the passage's: the question copies no more of it, and says something in its own words
    assert estimated_overlap(phrased[0].question, sentence) <= estimated_overlap(ask.question, sentence)
    assert set(stems(content_words(phrased[0].question))) - set(stems(content_words(sentence)))


def test_heading_paths_fragments_and_clause_pieces_make_no_question():
    path = "Issue Triage › Triage Issues › Reaching resolution"
    assert page_title(path) == "Issue Triage"
    assert question_about("A user may be having the same problem.", title=path) is None
    assert question_about("Command is on CLI.", title="pip › CLI") is None
    short = question_about("It is used for caching.", title=path, previous_subject="the store")
    assert short.question == "In Issue Triage, what is the store used for?"
    # "What will the prefix default?" asks nothing
    assert question_about("The prefix will only default to spaces.", title="textwrap") is None
    assert question_about("The prefix will only be added to the lines.", title="textwrap").question == \
        "In textwrap, how will the prefix be added?"
    # a passive still makes its question
    assert question_about("The buoy may be moved by the harbour master.", title="Moorings").question == \
        "In Moorings, how may the buoy be moved?"


def test_no_candidate_is_a_template_a_heading_path_or_a_fragment():
    gold = {"title": "Issue Triage › Triage Issues › Reaching resolution",
            "text": "Reaching resolution\n\nA maintainer closes an issue once the reporter confirms the fix. "
                    "When a user may be having the same problem, the maintainer links the duplicate reports. "
                    "This is now covered in the packaging guide. Stale issues receive a reminder label after "
                    "thirty days. Offline machines read wheels from a local mirror directory instead."}
    questions = {str(index): candidate.ask.question
                 for index, candidate in enumerate(candidate_questions(gold, PassageStatistics([gold["text"]])))}
    assert len(questions) >= 5
    assert ill_formed_questions(questions) == {}
    for question in questions.values():
        assert "›" not in question and "now covered" not in question and "know about" not in question, question
        assert "documentation say about" not in question and len(content_words(question)) >= 3, question
    # key phrases are things, not pieces of clauses
    assert not any(phrase in question for question in questions.values()
                   for phrase in ("issues receive", "machines read", "maintainer links", "directory instead"))


def test_names_in_addresses_are_not_asked_about():
    gold = {"title": "encodings.rot_13", "text": "This codec de/encodes from str to str.\n\nWritten by Marc-Andre "
                                                 "Lemburg (mal@lemburg.com), see www.example.org/codecs.html."}
    questions = [candidate.ask.question for candidate in candidate_questions(gold, PassageStatistics([gold["text"]]))]
    assert not any("lemburg.com" in question or "example.org" in question for question in questions), questions
    # a name only mentioned ("generated with gencodec.py"), a path, or the page's own name: nothing to ask
    gold = {"title": "encodings.mac_roman", "text": "Python Character Mapping Codec mac_roman generated from "
                                                    "'MAPPINGS/VENDORS/APPLE/ROMAN.TXT' with gencodec.py."}
    assert [candidate.ask.question for candidate in candidate_questions(gold, PassageStatistics([gold["text"]]))] == []
    documented = {"title": "compileall", "text": "limit_sl_dest: ignore symlinks that point outside the directory.\n"
                                                 "force: if True, force compilation."}
    questions = [candidate.ask.question
                 for candidate in candidate_questions(documented, PassageStatistics([documented["text"]]))]
    assert "In compileall, why would I need limit_sl_dest?" in questions
    assert not any("ignore symlinks" in question for question in questions), questions
    example = {"title": "unittest.case", "text": "TestCase.assertWarns(self, expected_warning)\nFail unless the "
                                              "warning is triggered. It returns a context object used like this::\n\n"
                                              "    with self.assertWarns(SomeWarning):\n        do_something()\n"}
    questions = [candidate.ask.question
                 for candidate in candidate_questions(example, PassageStatistics([example["text"]]))]
    assert questions and not any("do_something" in question for question in questions), questions


def test_estimated_overlap_is_the_evaluation_measure_on_a_worked_example():
    gold = "The tide predictor fits harmonic constituents to gauge readings."
    # stems of {tide, predictor, fit, harmonic, constituents} all occur: 5/5; {work, tide, predictor} 2/3
    assert estimated_overlap("How does the tide predictor fit harmonic constituents?", gold) == 1.0
    assert estimated_overlap("How does the tide predictor work?", gold) == pytest.approx(2 / 3)
    assert estimated_overlap("Is it so?", gold) == 0.0
    for question in ("How does the tide predictor fit harmonic constituents?", "How does the tide predictor work?",
                     "What do I get back from the predictor?"):
        assert estimated_overlap(question, gold) == pytest.approx(lexical_overlap(question, [gold]))


def test_a_second_ask_under_max_overlap_finds_a_question_that_copies_less():
    gold = {"title": "Tide tables", "text": "The tide predictor fits harmonic constituents to twelve months of gauge "
                                            "readings. The gauge client returns the latest reading."}
    statistics = PassageStatistics([gold["text"]])
    first = Questioner().baseline(gold=gold, history=[], corpus_stats=statistics)
    first_overlap = estimated_overlap(first.question, gold["text"])
    assert first_overlap > 0.5
    second = Questioner().baseline(gold=gold, history=[], corpus_stats=statistics, max_overlap=0.5,
                                   rejected=[{"question": first.question, "overlap": first_overlap}])
    assert second.question != first.question
    assert estimated_overlap(second.question, gold["text"]) <= 0.5
    assert not ill_formed_questions({"q": second.question})


def test_a_key_phrase_of_words_every_page_uses_makes_no_question():
    from benchsmith.agents.questioner import key_phrase_question

    sentence = "Unlike the others, with the python code and legacy pyc paths."
    common = PassageStatistics([sentence, *(f"Page {number} shows python code." for number in range(40))])
    assert key_phrase_question(sentence, "compileall", common).question == "What is the role of the legacy pyc paths?"
    assert key_phrase_question("Unlike the others, with the python code.", "compileall", common) is None


def test_responder_answers_from_the_asked_entry_alone_though_its_neighbours_share_the_class_name():
    """Seen on the stdlib demo: "a short summary of POP3.rset" was answered with rset's sentence and
    then quit's, close's and rpop's, whose signatures also name POP3 (a rare word, so each matched
    half as well as rset's)."""
    gold = {"title": "poplib › POP3", "text": (
        "poplib.POP3.rset(self)\nUnmark all messages marked for deletion.\n\n"
        "poplib.POP3.quit(self)\nSignoff: commit changes on server, unlock mailbox, close connection.\n\n"
        "poplib.POP3.close(self)\nClose the connection without assuming anything about it.")}
    responder = Responder()
    assert responder.baseline(gold=gold, question="Could you give me a short summary of POP3.rset?").answer \
        == "Unmark all messages marked for deletion."
    # A question naming no entry is answered from the whole passage, as before.
    assert "Close the connection without assuming anything about it." in \
        responder.baseline(gold=gold, question="How is the connection closed in POP3?").answer


def test_a_chunk_cut_inside_an_entry_answers_for_the_entry_its_heading_names():
    """A chunk that opens with the end of noop's docstring (its title's heading: POP3.noop) answers
    "how does noop work?" with that sentence, not with the entries after it."""
    gold = {"title": "poplib › POP3.noop", "text": (
        "One supposes the response indicates the server is alive.\n\n"
        "poplib.POP3.rset(self)\nUnmark all messages marked for deletion.\n\n"
        "poplib.POP3.quit(self)\nSignoff: commit changes on server, unlock mailbox, close connection.")}
    assert Responder().baseline(gold=gold, question="I mean the one in poplib: how does noop work there?").answer \
        == "One supposes the response indicates the server is alive."


def test_polisher_keeps_the_subject_after_a_question_that_named_several_things():
    """Seen on the stdlib demo: "Can you explain how it works?" right after "How does
    Bdb.set_continue compare with Bdb.set_trace?": "it" could be either."""
    polish = Polisher().baseline
    asked = {"question": "Can you explain how Bdb.set_continue works?", "subject": "Bdb.set_continue",
             "previous_subject": "Bdb.set_continue"}
    for previous in ("How does Bdb.set_continue compare with Bdb.set_trace?",
                     "What does Bdb.set_continue do? Also, what does Bdb.set_trace do?"):
        assert polish(**asked, history=[{"question_unpolished": previous}]).question == asked["question"]
    assert polish(**asked, history=[{"question_unpolished": "What is Bdb.set_continue for?"}]).question == \
        "Can you explain how it works?"
