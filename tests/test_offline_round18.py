"""Round 18 of the offline questioner, from the development readings of guizero (a GUI library's tutorial pages,
each an example program and tables) and cleo (a command-line framework's usage guide): a sentence the tree
repeats on every page with another name in it is its template; an option belongs to a command a heading types;
no capability cut from its list or its purpose; a recipe's task asked when its tool is named in words; a move
the user may make asked as what they can do; no condition on what was said before or on what the user knows."""

from __future__ import annotations

from benchsmith.agents.offline.asking import ask, templated
from benchsmith.agents.offline.facts import passage_facts
from benchsmith.agents.offline.headings import names_a_thing
from benchsmith.agents.offline.wording import wordings
from benchsmith.agents.text import PassageStatistics
from benchsmith.entries import command_of_page, statements

WIDGETS = ("Box", "Text", "Slider", "Combo", "Picture")


def asked(text: str, title: str = "Recipes") -> list[str]:
    return [w.question for fact in passage_facts(text, title) for w in wordings(fact)]


def starting_parameters(widget: str) -> dict[str, str]:
    return {
        "title": f"{widget} › Starting parameters",
        "text": f"Starting parameters\n\nWhen you create a {widget} object you must specify a master and you "
        "can specify any of the optional parameters.",
    }


def test_a_sentence_every_page_repeats_with_another_name_is_not_asked():
    pages = [starting_parameters(widget) for widget in WIDGETS]
    every_page = PassageStatistics(page["text"] for page in pages)
    assert ask(pages[0], [], statistics=every_page) is None
    # on three pages it may be the pages' own words: asked
    three_pages = PassageStatistics(page["text"] for page in pages[:3])
    asked = ask(pages[0], [], statistics=three_pages)
    assert asked is not None and "Box object" in asked.question


def test_a_template_needs_enough_words_to_recur_only_by_copying():
    pages = [f"Sends a GET request to the {widget} server." for widget in WIDGETS]
    assert not templated(pages[0], PassageStatistics(pages))  # two words less the names: chance, not a template
    assert not templated(pages[0], None)  # no statistics, nothing counted


def test_an_option_belongs_to_a_command_a_heading_types_not_to_a_title_in_words():
    assert command_of_page("Command Line Interface › celery › worker") == "celery worker"
    assert command_of_page("git-merge(1) Manual Page › OPTIONS") == "git merge"
    assert command_of_page("Usage › Verbosity Levels") is None
    text = "--loglevel\n\nLogging level, choose between DEBUG, INFO, WARNING, ERROR, CRITICAL, or FATAL."
    owners = {s.owner for s in statements(text, "Command Line Interface › celery › beat") if s.entry == "--loglevel"}
    assert owners == {"celery beat"}
    assert {s.owner for s in statements(text, "Usage › Options") if s.entry == "--loglevel"} == {None}


def test_a_capability_whose_object_an_infinitive_finishes_is_not_asked_without_it():
    cut = asked("You can set the max number of times to ask with the set_max_attempts() method.", "Helpers › Question")
    assert not any("max number of times?" in question for question in cut)
    kept = asked("You can set the max number of attempts.", "Helpers")
    assert any("set the max number of attempts" in question for question in kept)


def test_a_recipe_that_names_its_tool_in_words_asks_its_task():
    assert any(
        "show an image" in q or "display an image" in q for q in asked("Use a Picture object to display an image.")
    )
    assert any("get some data from the user" in q for q in asked("Get some data from the user using a TextBox."))
    # a code name's use is what the code name is for, as before
    assert "What is json.loads for?" in asked("Use json.loads to read a document.")


def test_a_case_or_a_tool_named_before_is_no_means():
    assert not any("fix a bug" in q for q in asked("Fix a bug when using SharedDataMiddleware with frozen packages."))
    similar = asked("You can use a similar mechanism to display a range of commands.")
    assert not any(q.startswith("How") and "range of commands" in q for q in similar)
    assert not any("manage files" in q for q in asked("You can use it to manage files across test sessions."))


def test_two_tasks_joined_in_a_heading_are_no_context():
    assert not names_a_thing("Opening and closing windows")
    assert not names_a_thing("Reading and Writing Files")
    assert names_a_thing("Signals and slots")


def test_a_move_the_user_may_make_is_asked_as_what_they_can_do():
    optional = asked("When an event occurs, you can run a piece of code.", "Using Widgets › Events")
    assert "What can I do when an event occurs?" in optional
    assert not any("need to do" in question or "should I do" in question for question in optional)
    required = asked("When you create a Slider object, you must specify a master.", "Slider")
    assert "What should I do when I create a Slider object?" in required


def test_a_condition_that_does_what_was_said_before_is_not_asked():
    assert asked("If you do so, you can disable all the commands in a category with a single call.", "Commands") == []


def test_one_item_of_a_list_is_not_asked_as_what_the_user_can_do():
    assert not any("min?" in q for q in asked("You can specify min, max or both.", "Numbers"))
    spawned = asked("With eventlet, you can spawn hundreds, or thousands of threads.")
    assert not any(q.startswith("Can I") and "hundreds" in q for q in spawned)
    assert "Can I add hooks to a Session instance?" in asked("You can add hooks to a Session instance.", "Guide")


def test_what_the_user_knows_is_no_condition_that_happens():
    assert not any("know" in q for q in asked("If you know Flask, you already know most of it.", "Features"))
    assert any("What happens if I" in q for q in asked("If you pass an empty list, the call returns None.", "API"))
