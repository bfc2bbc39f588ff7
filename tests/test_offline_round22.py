"""Round 22 of the offline questioner, from FastAPI's sources and the development trees: a purpose written
without its comma ("To restart the worker you should send ...") is read as the purpose it is; what the user
wants is neither a capability nor what happens; "you are already returning X" is no step; a section's example
of imports only, or one whose heading's task is only the occasion, shows no task; a follow-up's pronoun does
not stand for one item of a list."""

from __future__ import annotations

from benchsmith.agents.offline.facts import passage_facts
from benchsmith.agents.offline.facts.referents import leans_on_context
from benchsmith.agents.offline.wording import wordings
from benchsmith.agents.polisher import refer_back
from benchsmith.language import parse


def questions(text: str, title: str = "Guide") -> list[str]:
    return [wording.question for fact in passage_facts(text, title) for wording in wordings(fact)]


def test_a_purpose_written_without_its_comma_asks_how_to_reach_it():
    asked = questions('To create a middleware you use the decorator @app.middleware("http") on top of a function.')
    assert "How do I create a middleware?" in asked
    asked = questions("To convert the ordered multi dict into a list you can use the items() method.")
    assert "How do I convert the ordered multi dict into a list?" in asked
    # with its comma it was read so already, and still is
    assert "How do I create a middleware?" in questions(
        'To create a middleware, use the decorator @app.middleware("http").'
    )
    # "you found" is a relative clause about the typo, its object, not an instruction
    assert "How do I fix a typo?" not in questions("To fix a typo you found on the documentation.")
    # "To read more ... you should see": a pointer to the manual, as with the comma
    assert not questions("To read more about task states you should see the States section in the user guide.")


def test_what_the_user_wants_is_neither_a_capability_nor_what_happens():
    assert not any("want" in question for question in questions("You could want a process manager in the container."))
    wanting = (
        "In most cases, when you create a web API, you want it to be always running, so that clients can access it."
    )
    assert not any(question.startswith("What happens") for question in questions(wanting))
    # what happens under the same condition is still asked
    happening = "When you create a web API with FastAPI, the interactive documentation is generated at /docs."
    assert any(question.startswith("What happens when I create a web API") for question in questions(happening))


def test_what_the_user_is_already_doing_is_no_procedure_but_what_they_can_do_is():
    doing = (
        "By returning the result of calling generate_html_response(), you are already returning a Response "
        "that will override the default behavior of FastAPI."
    )
    assert not any("way to return" in question or "returning" in question for question in questions(doing))
    able = "You can return a Response directly by calling generate_html_response()."
    assert "How do I return a Response?" in questions(able)


SECTION = "Response Headers › {heading}"


def test_a_sections_example_of_imports_shows_no_task():
    imports_only = (
        "Create a websocket\n\nIn your FastAPI application, create a websocket:\n\n"
        "```Python\nfrom fastapi import FastAPI, WebSocket\nfrom fastapi.responses import HTMLResponse\n\n"
        "app = FastAPI()\n```\n"
    )
    assert not any("websocket" in question for question in questions(imports_only, "WebSockets › Create a websocket"))
    showing = imports_only.replace(
        "app = FastAPI()\n",
        'app = FastAPI()\n\n@app.websocket("/ws")\nasync def websocket_endpoint(websocket: WebSocket):\n'
        "    await websocket.accept()\n",
    )
    assert any("create a websocket" in question for question in questions(showing, "WebSockets › Create a websocket"))


def test_a_heading_whose_task_is_only_the_occasion_of_the_sections_example_is_not_asked():
    occasion = (
        "Return a Response directly\n\nYou can also add headers when you return a Response directly.\n\n"
        '```Python\nfrom fastapi.responses import JSONResponse\n\ndef get_headers():\n    return JSONResponse(content={}, headers={"X-Cat": "dog"})\n```\n'
    )
    title = SECTION.format(heading="Return a Response directly")
    assert not any("return a Response" in question for question in questions(occasion, title))
    # a wish is the task itself
    wished = (
        "Overwrite the current line\n\nIf you want to overwrite the current line, you can use the overwrite() method.\n\n"
        "```python\ndef handle(self):\n    self.write('Processing...')\n    self.overwrite('Done!')\n```\n"
    )
    shown = [fact for fact in passage_facts(wished, "Usage › Overwrite the current line") if fact.example]
    assert any(fact.kind == "procedure" and "overwrite('Done!')" in (fact.example or "") for fact in shown)
    # what doing the task does, with no user in it, is no occasion: the example shows the task
    result = (
        "Remove A Command\n\nWhen a command has been removed, the command method has been deleted from the object. "
        "Delete the command method in your initialization code:\n\n"
        "```python\nclass RemoveBuiltinCommand(cmd2.Cmd):\n    def __init__(self):\n        del cmd2.Cmd.do_edit\n```\n"
    )
    shown = [fact for fact in passage_facts(result, "Disabling Commands › Remove A Command") if fact.example]
    assert any("remove a command" in fact.slot("vp") for fact in shown if fact.has("vp"))
    told = occasion.replace(
        "You can also add headers when you return a Response directly.", "Return a Response directly."
    )
    assert any("return a Response" in question for question in questions(told, title))


def test_a_means_said_as_doing_it_leans_on_the_step_before():
    assert not questions("By doing it, you will receive notifications whenever there's a new release.")
    assert leans_on_context(parse("By doing so, you will receive notifications.")) == "points back with 'by doing so'"
    # a means of its own is still one
    watching = "By watching the repository, you will receive notifications whenever there's a new release."
    assert "How do I get notifications?" in questions(watching)
    assert leans_on_context(parse("By watching the repository, you will receive notifications.")) is None


def test_an_object_pronoun_before_any_noun_and_a_pointer_to_later_lean_on_the_page():
    assert (
        leans_on_context(parse("If you are just starting, you can skip it."))
        == "stands for something before it with 'it'"
    )
    assert not questions("If you are just starting, you can skip it.")
    later = "The most common case would be returning a Response directly as explained later in the advanced docs."
    assert leans_on_context(parse(later)) == "points ahead with 'later'"
    # a pronoun after the noun it stands for, and "later" as a time, stand alone
    assert leans_on_context(parse("Create a session and close it when you are done.")) is None
    assert leans_on_context(parse("You can change the setting later.")) is None


def test_a_follow_ups_pronoun_does_not_stand_for_one_item_of_a_list():
    listed = "Is there a way to get uploaded files and/or form data?"
    assert refer_back(listed, "uploaded files", "uploaded files") == listed
    assert refer_back("Can I get form data or uploaded files?", "uploaded files", "uploaded files").endswith(
        "uploaded files?"
    )
    # alone, it is still referred back to
    assert refer_back("How do I configure the session?", "session", "session") == "How do I configure it?"
