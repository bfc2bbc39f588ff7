"""Round 15 of the offline questioner: after the development readings of round 14 (celery, werkzeug, jinja2,
requests, drf, ungated) no question about what a thing is that names its thing only through the title of a
section; and conversations that reach one passage take its facts in turn, not all the same one."""

from __future__ import annotations

from benchsmith.agents.offline.asking import ask, named_by_heading
from benchsmith.agents.offline.facts import passage_facts
from benchsmith.entries import statements
from tests.questioner_fixtures import asked


def test_a_thing_named_only_by_a_section_title_is_not_asked_what_it_is():
    text = "The buffer size is the number of bytes held in memory during the copy process."
    assert not any("buffer size" in question for question in asked(text, "Advanced Usage › Custom Headers"))
    # nor a task that only the title places (round 26); the same task placed by a name in it is asked
    task = "To use a different encoding, set the charset attribute on the renderer."
    assert not any("different encoding" in question for question in asked(task, "Advanced Usage › Custom Headers"))
    named = "To use a different encoding with JSONRenderer, set its charset attribute."
    assert any("JSONRenderer" in question for question in asked(named, "Advanced Usage › Custom Headers"))


def test_a_code_name_or_a_command_still_places_a_question_about_a_thing():
    assert named_by_heading("In Data Structures, can you explain what the buffer size is?")
    assert not named_by_heading("In git config, what exactly is the pack checksum?")
    assert not named_by_heading("In FileStorage.save, what exactly is the buffer size?")
    # a task or a condition a title of words places is no more a user's question (round 26)
    assert named_by_heading("In Partial updates recap, what is the recommended way to convert the copied model?")
    assert named_by_heading("In Request Files, is there a way to get it?")
    # a name in the question places it, whatever the title
    assert not named_by_heading("In Response Content, what happens when I access r.text?")
    assert not named_by_heading("In Multiple Windows, what happens when I create a Window object?")


UTILITIES = (
    "copy_file(source_path, output_path)\n\nCopy source_path to output_path, making sure any parent directories "
    "exist.\n\nclean_directory(directory)\n\nRemove the content of a directory recursively but not the directory "
    "itself.\n\nis_markdown_file(path)\n\nReturn True if file path is a Markdown file.\n"
)


def test_conversations_that_open_on_one_passage_of_several_entries_take_them_in_turn():
    # ranked alike, conversations asked the same entry first, and a repeat ends a conversation
    first = [
        ask({"text": UTILITIES, "title": "Developer Guide › Utilities"}, [], conversation=f"c{number:04d}")
        for number in range(4)
    ]
    entries = [asked.fact.entry for asked in first if asked is not None]
    assert len(entries) == 4 and entries[0] != entries[1] and entries[2] != entries[3]


def test_an_option_listed_as_name_colon_description_is_described_by_that_sentence():
    text = (
        "readthedocs\n\nThe theme supports the following options:\n\nhighlightjs: Enables highlighting of source code "
        "in code blocks using the highlight.js JavaScript library. Default: True.\n\nhljs_languages: By default, "
        "highlight.js only supports 23 common languages. List additional languages here to include support for them.\n"
    )
    described = {(s.entry, s.role): s.text for s in statements(text, "Choosing your Theme › readthedocs")}
    assert described[("highlightjs", "first")].startswith("Enables highlighting of source code")
    assert described[("hljs_languages", "first")].startswith("By default, highlight.js only supports")
    assert ("highlightjs", "prose") in described and described[("highlightjs", "prose")] == "Default: True."
    # a member's type after its name is no description: the line opens the entry, as before
    typed = {(s.entry, s.role): s.text for s in statements("is_link: bool = False\n\nWhether the item is a link.\n")}
    assert typed == {("is_link", "first"): "Whether the item is a link."}


def test_an_example_of_what_came_before_is_no_fact_on_its_own():
    example = "For example, the Heroku platform API exposes a schema in the JSON Hyperschema format."
    assert passage_facts(example, "API Clients › Overview") == ()
    assert passage_facts(example.removeprefix("For example, ").capitalize(), "API Clients › Overview") != ()
    # without its comma it is the same illustration: "show_default=True" is no definition of show_default
    illustration = "For example `show_default=True` is a keyword argument."
    assert passage_facts(illustration, "CLI Option Name") == ()
    assert passage_facts(illustration.removeprefix("For example "), "CLI Option Name") != ()
