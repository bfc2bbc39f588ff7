"""Round 18 of the offline questioner, from the development readings of guizero (a GUI library's tutorial pages,
each an example program and tables) and cleo (a command-line framework's usage guide): a sentence the tree
repeats on every page with another name in it is the tree's template, not a question of each page."""

from __future__ import annotations

from benchsmith.agents.offline.asking import ask, templated
from benchsmith.agents.text import PassageStatistics

WIDGETS = ("Box", "Text", "Slider", "Combo", "Picture")


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
    assert not templated(pages[0], PassageStatistics(pages))  # four words less the names: chance, not a template
    assert not templated(pages[0], None)  # no statistics, nothing counted
