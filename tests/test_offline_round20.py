"""Round 20 of the offline questioner, from the development trees' tutorials: a section whose heading names a
task and that shows it at once in a short example is asked as that task, and answered by the prose before the
example and the example itself; a heading's verb in the spelling documentation writes."""

from __future__ import annotations

from benchsmith.agents.offline.asking import answer
from benchsmith.agents.offline.facts import Fact, passage_facts
from benchsmith.agents.offline.facts.tasks import heading_task
from benchsmith.agents.offline.wording import wordings

TITLEBOX = "TitleBox › Examples › Putting widgets in a TitleBox"
EXAMPLE = 'from guizero import App, TitleBox, Text\napp = App()\nbox = TitleBox(app, text="Name")\napp.display()'


def section(heading: str, *paragraphs: str, code: str = EXAMPLE) -> str:
    return "\n\n".join([heading, *paragraphs, f"```\n{code}\n```"])


def procedure_facts(text: str, title: str) -> list[Fact]:
    return [fact for fact in passage_facts(text, title) if fact.kind == "procedure"]


def procedures(text: str, title: str) -> list[str]:
    return [fact.slot("vp") for fact in procedure_facts(text, title)]


def test_a_task_shown_by_an_example_is_asked_and_answered_by_the_prose_and_the_example():
    text = section(
        "Putting widgets in a TitleBox",
        "The TitleBox object is a visible container which can group together other widgets within a border.",
        "One has titlebox as its master, the other has app as its master.",
    )
    facts = procedure_facts(text, TITLEBOX)
    assert [fact.slot("vp") for fact in facts] == ["put widgets in a TitleBox"]
    assert facts[0].answer == (1, 2) and facts[0].example == f"```\n{EXAMPLE}\n```"
    question = wordings(facts[0])[0].question
    assert question == "How do I put widgets in a TitleBox?"
    reply = answer({"text": text, "title": TITLEBOX}, question)
    assert reply is not None
    assert reply.startswith("The TitleBox object is a visible container") and reply.endswith(f"```\n{EXAMPLE}\n```")
    # an example right under the heading is the whole reply
    bare = section("Putting widgets in a TitleBox")
    assert answer({"text": bare, "title": TITLEBOX}, question) == f"```\n{EXAMPLE}\n```"


def test_an_example_that_is_not_the_sections_own_answer_asks_nothing():
    heading = "Putting widgets in a TitleBox"
    long_program = "\n".join(f"box{i} = TitleBox(app, text='{i}')" for i in range(16))
    cases = {
        "a program, not an example a reply shows": section(heading, code=long_program),
        "an example of neither the verb nor the thing": section(heading, code="x = 1\nprint(x)"),
        "prose that goes on past two paragraphs": section(heading, "One.", "Two sentences here.", "Three of them."),
        "another heading before it": section(heading, "Grouping objects within a TitleBox"),
        "a list before it": section(heading, "- first item\n- second item"),
        "a file the build pastes in": section(heading, code="{!../docs_src/titlebox/tutorial001.py!}"),
        "a snippet the build pastes in": section(heading, code='--8<-- "docs/titlebox.py"'),
    }
    for why, text in cases.items():
        assert "put widgets in a TitleBox" not in procedures(text, TITLEBOX), why
    # a signature line is code but no example: an API reference under a task-like heading
    signature = "Putting widgets in a TitleBox\n\nguizero.TitleBox.add(widget)\n\nAdds a widget."
    assert "put widgets in a TitleBox" not in procedures(signature, TITLEBOX)


def test_a_heading_that_reads_as_a_noun_phrase_is_no_task_an_example_shows():
    code = "def pytest_report_header(config):\n    return 'project deps: mylib-1.1'"
    title = "API Reference › Hooks › Reporting hooks"
    # the section itself uses the words as a noun phrase: hooks of reporting
    text = section("Reporting hooks", "Session related reporting hooks:", code=code)
    assert not procedures(text, title)
    # an imperative heading without an article reads as a noun phrase too ("Return Values", "Help Messages")
    values = section("Return Values", "The return value of a command is stored.", code="return_value = app.onecmd()")
    assert not procedures(values, "Commands › Return Values")
    # with its article it is a task
    command = section("Hide a command", "A hidden command stays callable.", code="self.hidden_commands.append('x')")
    assert procedures(command, "Disabling Commands › Hide a command") == ["hide a command"]


def test_a_headings_verb_is_written_as_documentation_writes_it():
    assert heading_task("Installing MkDocs", "Install MkDocs with pip.") == ("install MkDocs", "MkDocs")
    assert heading_task("Monkeypatching functions", "") == ("monkeypatch functions", "functions")
    assert heading_task("Uninstalling cmd2", "") == ("uninstall cmd2", "cmd2")
    # Title Case articles are no names
    assert heading_task("Create A Command", "") == ("create a command", "a command")


def test_an_example_of_a_thing_the_heading_does_not_narrow_asks_nothing():
    # "Validating the answer": which answer the page says, not the question
    bare = section("Validating the answer", code="question.set_validator(validate_answer)")
    assert not procedures(bare, "Question Helper › Validating the answer")


def test_a_lead_sentence_that_leans_on_the_page_is_left_out_of_the_reply():
    text = section(
        "Putting widgets in a TitleBox",
        "Our TitleBox above does not group anything yet.",
        "A TitleBox groups the widgets given it as their master.",
    )
    facts = procedure_facts(text, TITLEBOX)
    assert [fact.answer for fact in facts] == [(2,)]


def introduced(introduction: str, code: str = "pytest tests/test_widgets.py") -> str:
    return f"Testing\n\nSome prose first. {introduction}\n\n```\n{code}\n```"


def test_a_sentence_that_introduces_an_example_is_asked_and_answered_by_it_and_the_example():
    text = introduced("To run a specific test within a module:")
    facts = procedure_facts(text, "Development › Testing")
    assert [fact.slot("vp") for fact in facts] == ["run a specific test within a module"]
    question = wordings(facts[0])[0].question
    assert question == "How do I run a specific test within a module?"
    reply = answer({"text": text, "title": "Development › Testing"}, question)
    assert reply == "To run a specific test within a module:\n\n```\npytest tests/test_widgets.py\n```"
    # a label before the sentence is no part of the reply
    faq = introduced("Answer: To purge all configured task queues:", "$ celery purge")
    assert procedures(faq, "FAQ") == ["purge all configured task queues"]
    assert answer({"text": faq, "title": "FAQ"}, "How do I purge all configured task queues?").startswith("To purge")


def test_an_introduction_that_is_not_one_task_or_not_followed_by_an_example_asks_nothing():
    cases = {
        "the instruction run into the task": introduced("To create a transcript use the -t or --transcription option:"),
        "no example after it": "Testing\n\nTo run a specific test within a module:\n\nThen read the report.",
        "an indented block, not fenced": "Testing\n\nTo run a specific test within a module::\n\n    pytest x.py\n",
        "a program": introduced("To run a specific test within a module:", "\n".join(["pytest"] * 16)),
        "a file the build pastes in": introduced("To run a specific test within a module:", "{!../docs_src/t.py!}"),
        "no colon: the example is not what it says": introduced("You can run a specific test within a module."),
        # more than the task: the statement readers' business, whose lifted phrases read broken as first questions
        "an instruction with its means": introduced("You can run a specific test within a module using a node id:"),
    }
    for why, text in cases.items():
        assert not [vp for vp in procedures(text, "Testing") if "specific test" in vp or "transcript" in vp], why


def test_a_procedures_verb_in_a_users_words_keeps_its_meaning():
    # "require" is a user's "need" in "does it require X?", not in a task: "How do I need plugins?"
    text = introduced("To require plugins in a test module:", 'pytest_plugins = "myapp"')
    assert "How do I require plugins in a test module?" in [
        w.question for fact in passage_facts(text, "Plugins") for w in wordings(fact)
    ]
