"""benchsmith/language.py: the tagger and parser every layer reads English with."""

from __future__ import annotations

import pytest

from benchsmith.entries import entry_of_line, short_name, statements
from benchsmith.language import is_noun_phrase, parse, parse_all, points_outside, question_frame


def test_code_names_are_kept_out_of_the_taggers_way_and_come_back():
    sentence = parse("Use app.template_filter to register a filter for SECRET_KEY.")
    texts = [token.text for token in sentence.tokens]
    assert "app.template_filter" in texts and "SECRET_KEY" in texts
    code = {token.text for token in sentence.tokens if token.code}
    assert code == {"app.template_filter", "SECRET_KEY"}
    assert all(token.pos == "PROPN" for token in sentence.tokens if token.code)
    # the verb is read as a verb whatever the code name beside it is
    assert next(token for token in sentence.tokens if token.text == "register").pos == "VERB"


def test_an_attribute_named_alone_is_a_code_name_but_a_files_ending_is_not():
    sentence = parse('You can use the property .openapi_schema as a "cache", or call .save().')
    assert {token.text for token in sentence.tokens if token.code} == {".openapi_schema", ".save()"}
    assert not any(token.code for token in parse("Build a .whl file, with .pyz appended.").tokens)


def test_a_batch_parses_as_one_at_a_time():
    texts = ["Blueprints record operations.", "The session cookie is signed.", "Blueprints record operations."]
    assert parse_all(texts) == [parse(text) for text in texts]


@pytest.mark.parametrize(
    "phrase, expected",
    [
        ("the session cookie", True),
        ("json.dumps", True),
        ("the hooks registered on an app", True),
        ("the come back", False),
        ("familiarize yourself", False),
        ("the maintainer links the reports", False),
        ("Don't treat", False),
        ("header ordering", True),
        ("the familiarize yourself", False),
    ],
)
def test_a_noun_phrase_is_a_thing_not_a_clause(phrase, expected):
    assert is_noun_phrase(parse(phrase)) is expected


@pytest.mark.parametrize(
    "question, frame",
    [
        ("What is the role of the come back?", "what is role of … back"),
        ("How do I disable SSL verification?", "how do i …"),
        ("When does Session.send raise ConnectionError?", "when does … raise …"),
        ("What is the difference between a Blueprint and an app?", "what is difference between …"),
        ("What is Session.send for?", "what is … for"),
        ("What happens if the session cookie is too large?", "what happens if …"),
        # the frame's own nouns and verbs are not its topic: not "what …" for both of these
        ("What problem does Session.send solve?", "what problem does … solve"),
        ("What is Session.send meant for?", "what is … meant for"),
    ],
)
def test_question_frames_leave_out_what_a_question_is_about(question, frame):
    assert question_frame(question) == frame


def test_two_questions_on_other_topics_share_their_frame():
    assert question_frame("What is the role of the reminder label?") == question_frame(
        "What is the role of the gauge client?"
    )
    assert question_frame("How do I add a header?") != question_frame("What is the purpose of Session.send?")


@pytest.mark.parametrize(
    "sentence, leans",
    [
        ("However, the encoder sorts keys.", True),
        ("This flag is set by default.", True),
        ("As shown above, the encoder sorts keys.", True),
        ("Pass one of these values:", True),
        ("The encoder sorts keys when asked.", False),
        ("Blueprints record operations to run later.", False),
        # an opening of several words restates or names a case the reply does not show
        ("In other words, you cannot use the entry point in one place and the name in another.", True),
        ("In that case, the encoder sorts keys.", True),
        ("On the other hand, the encoder sorts keys.", True),
        ("In other places the encoder sorts keys.", False),
    ],
)
def test_a_sentence_that_leans_on_its_neighbours_is_recognised(sentence, leans):
    assert (points_outside(parse(sentence)) is not None) is leans


def test_a_demonstrative_that_names_the_thing_just_read_points_at_nothing_unseen():
    sentence = parse("Return a copy of this RequestsCookieJar.")
    assert points_outside(sentence) is not None
    assert points_outside(sentence, frozenset({"requestscookiejar"})) is None


@pytest.mark.parametrize(
    "line, name, kind",
    [
        ("requests.Session.mount(prefix, adapter)", "requests.Session.mount", "method"),
        ("class requests.Response", "requests.Response", "class"),
        ("property requests.Response.content", "requests.Response.content", "property"),
        ("exception requests.HTTPError(*args, **kwargs)", "requests.HTTPError", "exception"),
        ("SECRET_KEY", "SECRET_KEY", "setting"),
        ("-q, --quiet", "--quiet", "option"),
        ("--depth <depth>", "--depth", "option"),
        ("is_link: bool = False class-attribute", "is_link", "attribute"),
    ],
)
def test_entry_lines_name_their_entry(line, name, kind):
    entry = entry_of_line(line)
    assert entry is not None and (entry.name, entry.kind) == (name, kind)


def test_a_lone_word_or_a_sentence_is_no_entry():
    assert entry_of_line("Parameters") is None and entry_of_line("The encoder sorts keys.") is None


def test_statements_carry_the_entry_they_document_and_parameters_their_name():
    text = (
        "requests.Session.send(request, **kwargs)\n\nSend a given PreparedRequest.\n\nParameters\n\n"
        "timeout (float) – How long to wait for the server.\n\nrequests.Session.close()\n\n"
        "Closes all adapters and as such the session."
    )
    found = statements(text, "Developer Interface › Request Sessions")
    assert [(s.entry, s.role, s.parameter) for s in found] == [
        ("requests.Session.send", "first", None),
        ("requests.Session.send", "parameter", "timeout"),
        ("requests.Session.close", "first", None),
    ]


@pytest.mark.parametrize(
    "entry, short",
    [
        ("requests.Session.mount", "Session.mount"),
        ("json.decoder.JSONDecoder.decode", "JSONDecoder.decode"),
        ("os.path.join", "os.path.join"),
        ("color.advice.hint", "color.advice.hint"),
        ("a.b.c.d", "c.d"),
    ],
)
def test_an_entry_is_named_as_a_user_names_it(entry, short):
    assert short_name(entry) == short
