"""Round 21 of the offline questioner, from FastAPI's sources (a development tree in the style of typer's
tutorial): a statement about "that code" leans on a page the reply leaves out; a behaviour whose purpose
is too long to ask is not asked by its object alone; the tree's own name is not asked what it does to
something ("What does FastAPI call?" has an answer on every page)."""

from __future__ import annotations

from benchsmith.agents.offline.asking import answer, ask
from benchsmith.agents.offline.facts import passage_facts
from benchsmith.agents.offline.facts.referents import example_pointer, leans_on_context
from benchsmith.agents.offline.wording import wordings
from benchsmith.agents.text import PassageStatistics
from benchsmith.language import parse


def questions(text: str, title: str = "Guide") -> list[str]:
    return [wording.question for fact in passage_facts(text, title) for wording in wordings(fact)]


def test_a_statement_about_that_code_asks_nothing_but_one_that_named_it_first_still_asks():
    pointing = "You could reduce duplication in that code by putting it in a function and using it from both files."
    assert not any("duplication" in question for question in questions(pointing))
    assert leans_on_context(parse(pointing)) == "points back with 'that code'"
    named_first = "When a request fails, the client retries that request once."
    assert leans_on_context(parse(named_first)) is None
    # an entry's description speaks of its own arguments so: "the value of that option"
    assert leans_on_context(parse("Return the value of that option."), in_entry=True) is None


def test_a_behaviour_whose_purpose_is_too_long_to_ask_is_not_asked_by_its_object():
    long_purpose = (
        "Pydantic's orm_mode will tell the Pydantic model to read the data even if it is not a dict, but an "
        "ORM model (or any other arbitrary object with attributes)."
    )
    assert not any(question.startswith("What does") and "tell" in question for question in questions(long_purpose))
    short_purpose = "MkDocs uses Python-Markdown to render Markdown documents to HTML."
    assert "What does MkDocs use to render Markdown documents to HTML?" in questions(short_purpose)


def test_the_trees_own_name_is_not_asked_what_it_does_to_something():
    gold = {"text": "MkDocs includes the search plugin.", "title": "Plugins"}
    pages = [f"MkDocs page {number} about themes." for number in range(6)]
    tree = PassageStatistics([gold["text"], *pages, "Python-Markdown extensions.", "Jinja templates."])
    asked = ask(gold, [], statistics=tree, question_type="factoid")
    assert asked is not None and asked.question == "Does MkDocs include the search plugin?"
    # where the name is on few of the tree's pages it is still asked what it does
    few = PassageStatistics([gold["text"], *(f"Sphinx page {number} about themes." for number in range(6))])
    asked = ask(gold, [], statistics=few, question_type="factoid")
    assert asked is not None and asked.question == "What does MkDocs include?"


def test_a_tutorials_sentence_that_opens_on_its_running_example_is_no_answer_on_its_own():
    pointing = {
        "Here we are including it in the message just for demonstration purposes.": "here",
        "Here's where you import and use the class FastAPI.": "here",
        "In the code, a Bucket represents the main entrypoint of communication with the database.": "in the code",
        "That way, you can return it from the dependency.": "that way",
    }
    for sentence, pointer in pointing.items():
        assert example_pointer(parse(sentence)) == pointer, sentence
    assert example_pointer(parse("Here is a list of the settings the server reads.")) is None
    # a task's answer leaves such a lead out and keeps the one that says how
    text = (
        "Checking the current root_path\n\n"
        "You can get the current root_path used by your application for each request.\n\n"
        "Here we are including it in the message just for demonstration purposes.\n\n"
        '```Python\n@app.get("/app")\ndef read_main(request: Request):\n    return {"root_path": request.scope.get("root_path")}\n```'
    )
    title = "Behind a Proxy › Checking the current root_path"
    [fact] = [fact for fact in passage_facts(text, title) if fact.kind == "procedure"]
    reply = answer({"text": text, "title": title}, wordings(fact)[0].question)
    assert reply is not None and "You can get the current root_path" in reply and "Here we are" not in reply
