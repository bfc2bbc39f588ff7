"""Examples a reply can show, and the sentences that introduce them with their task alone: "To run a specific test
within a module:", "To start the celery beat service:", "Here's how to ...:". Such a sentence says what its
example does and the example shows how; it ends on a colon, so no reader of statements sees it (a tutorial says
much of its how so: guizero, cleo, cmd2, development round 20)."""

from __future__ import annotations

import itertools
import re

from benchsmith.agents.offline.facts.capabilities import capabilities
from benchsmith.agents.offline.facts.record import Fact, Found
from benchsmith.agents.offline.facts.referents import leans_on_context
from benchsmith.entries import LABEL, Statement
from benchsmith.language import Sentence, parse
from benchsmith.passages import Unit, plain_text, split_sentences

MAX_EXAMPLE_LINES = 15  # an example a reply can show whole; a longer one is a program, not a task's answer
# A line that pastes a file in when the site is built (MkDocs' markdown-include, pymdownx snippets): the tree as
# installed keeps the directive, not the file's code (typer, test half: found on its round-20 sheet). Not Jinja's
# "{% include %}", which is the example where a page teaches templates.
INCLUDE_DIRECTIVE = re.compile(r"^\s*(?:\{!.*!\}|-{2}8<-{2}.*)\s*$")
# An import line names what a program uses, not what it does: "from fastapi import WebSocket" creates no websocket.
IMPORT_LINE = re.compile(r"^\s*(?:from\s+\S+\s+)?import\s")
# "To VP:", "Here's how to VP:", "This is how you can VP:": the task alone, what the example does.
TASK_INTRODUCTION = re.compile(
    r"^(?:To|(?:Here's|Here is|This is) how (?:to|you can)) (?P<vp>[a-z][^,:;]*?)"
    r"(?:,? (?:like this|like so|as follows|as shown below))?:$"
)


def showable(unit: Unit) -> str | None:
    """The code of a fenced example a reply can show whole; None for a longer one, or a build's include line."""
    if unit.kind != "code" or not unit.fenced:
        return None
    code = unit.text.strip("\n")
    if code.count("\n") >= MAX_EXAMPLE_LINES or all(INCLUDE_DIRECTIVE.match(line) for line in code.splitlines()):
        return None
    return code


def fenced(code: str, introduction: str = "") -> str:
    """What a reply shows of an example: the sentence that introduces it, if any, then the code in fences."""
    return "\n\n".join(part for part in (introduction, f"```\n{code}\n```") if part)


def introduced_examples(passage: list[Unit], first_position: int) -> list[Fact]:
    """How do I do what a sentence that introduces an example says the example does, answered by that sentence and
    the example, over the ``passage``'s units. Facts are numbered from ``first_position``: the sentence is none of the passage's statements."""
    facts: list[Fact] = []
    for paragraph, unit in itertools.pairwise(passage):
        if paragraph.kind != "prose" or (code := showable(unit)) is None:
            continue
        sentences = split_sentences(plain_text(paragraph.text))
        introduction = LABEL.sub("", sentences[-1].strip()) if sentences else ""  # "Answer: You can use ..."
        if not introduction.endswith(":"):
            continue
        for kind, topic, slots in _what_it_shows(introduction):
            facts.append(Fact(kind, topic, slots, first_position + len(facts), (), example=fenced(code, introduction)))
    return facts


def _what_it_shows(introduction: str) -> Found:
    """The task the introducing sentence names alone ("To run a specific test within a module:"), read as what the
    user can do, with the capability reader's checks of a verb phrase that says it whole. A sentence that says
    more than the task ("To X, use Y:", "You can X using Y:") is left out: read by the statement readers, its
    questions lifted phrases ("How do I access templates in subdirectories with a slash?") and pages' headings
    ("In Abstract Tasks, how do I ...?"): 13 of 37 such development facts read broken against none of the 3
    task introductions (development round 20)."""
    task = TASK_INTRODUCTION.match(introduction)
    if task is None:
        return []
    sentence = parse(f"You can {task['vp']}.")
    if _more_than_one_clause(sentence) or leans_on_context(sentence):
        return []  # "To create a transcript use the -t option": the instruction run into the task
    return [
        ("procedure", topic, (("vp", dict(slots)["vp"]),))
        for kind, topic, slots in capabilities(_statement(sentence), sentence)
        if kind == "capability"
    ]


def _statement(sentence: Sentence) -> Statement:
    return Statement(sentence.text, 0, None, None, "prose")


def _more_than_one_clause(sentence: Sentence) -> bool:
    """A second subject, a verb hung loosely on the first, two objects of one verb or an object of a noun ("create
    a transcript use the -t option", its "use" read as a noun): two clauses read as one verb phrase."""
    tokens = sentence.tokens
    return (
        sum(token.dep in ("nsubj", "nsubjpass") for token in tokens) > 1
        or any(token.dep in ("dep", "parataxis", "ccomp") and token.pos in ("VERB", "AUX") for token in tokens)
        or sum(token.dep == "dobj" and token.head == sentence.root.index for token in tokens) > 1
        or any(token.dep == "dobj" and tokens[token.head].pos not in ("VERB", "AUX") for token in tokens)
    )
