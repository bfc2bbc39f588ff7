"""What a statement does, read from its grammar: the facts a user's question can ask for.

:func:`passage_facts` reads each parsed statement of a passage (benchsmith/language.py) with the
readers in READERS; each finds at most a few facts of its kind, each with the slots its questions are
worded from (agents/offline/wording.py):

* ``procedure``: a purpose and how to reach it. "To disable verification, set verify to False",
  "Session objects allow you to persist parameters", "You can stream a response with stream=True",
  an imperative with a purpose or a means ("Use app.cli.command to add a command") → *how do I VP*.
* ``condition``: what happens under a condition ("If verify is False, requests accepts any
  certificate") → *what happens if C*; ``remedy`` when the main clause is an instruction
  ("If the import fails, install the package") → *what should I do if C*.
* ``error``: what raises an exception and when ("It raises ValueError if the URL is invalid",
  "A TooManyRedirects exception is raised if ...") → *when does F raise E*.
* ``definition``: "Blueprints are a way to organize views", "X refers to Y" → *what is X*.
* ``purpose``, ``returns``, ``parameter``: an API entry's first sentence, its return value, a
  parameter's description → *what does F do*, *what does F return*, *what is P of F for*.
* ``comparison``: two named things set against each other ("Unlike A, B ...", "A instead of B",
  "A differs from B") → *what is the difference between A and B*.
* ``capability``: "You can/cannot VP", "X supports Y" → *can I VP*, *does X support Y*.
* ``default``: "X defaults to V" → *what does X default to*.
* ``agent``, ``occasion``: a present passive that says what sets a thing or when it happens ("The prompt is
  defined by the prompt attribute", "Hooks are called after the input is parsed") → *what defines X*, *when
  are X called*.

A fact's topic is a noun phrase or an entry, never a verb phrase or a clause fragment; a slot
that would need a referent outside the statement ("it", "this", "they") is filled from the entry
the statement documents, or the fact is not taken.

The readers by what they read: ``actions`` (procedures, advice), ``capabilities``, ``conditionals``
(conditions, remedies, errors), ``things`` (definitions, comparisons, behaviours, sections), ``passives``
(what sets a thing, when it happens),
``api_entries`` (an entry's purpose, returns and parameters, defaults), ``tasks`` (a section whose heading names
a task: how do I do it, answered by the statement that tells how or the example that shows it), ``examples`` (a
sentence that introduces an example with its task alone, and what example a reply can show); they share ``phrases``
(the words a question is made of) and ``clauses`` (a verb's subject and mood); ``referents`` refuses
a statement that leans on an example or a step the reply leaves out ("After that ...", "will now be
available"); ``record`` holds the :class:`Fact`; ``example_names`` the names a page's example defines, which are the
example's, not the library's, and are not asked about. Two entries answered in the same words get their next
sentence or are not asked.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace

from benchsmith.agents.offline.facts.actions import advice, procedures
from benchsmith.agents.offline.facts.api_entries import LABEL_OPENING, PARTIAL_SLOT, defaults, entries, named_uses
from benchsmith.agents.offline.facts.capabilities import capabilities
from benchsmith.agents.offline.facts.clauses import docstring_mood
from benchsmith.agents.offline.facts.conditionals import GIVEN_SLOT, conditions, errors
from benchsmith.agents.offline.facts.example_names import example_defined_names
from benchsmith.agents.offline.facts.examples import introduced_examples
from benchsmith.agents.offline.facts.passives import passives
from benchsmith.agents.offline.facts.record import Fact
from benchsmith.agents.offline.facts.referents import leans_on_context
from benchsmith.agents.offline.facts.tasks import task_sections
from benchsmith.agents.offline.facts.things import behaviours, comparisons, definitions, sections
from benchsmith.entries import VERSION_NOTE, Statement, entry_of_line, statements
from benchsmith.language import Sentence, parse_all
from benchsmith.passages import units

__all__ = ["Fact", "passage_facts"]

# What an entry's own description calls it: "This option mirrors ...", "Use this event to ...".
SELF_NOUNS = frozenset(
    "option event setting attribute method function class property value variable command "
    "hook plugin object instance parameter argument key field flag".split()
)

# A task "too" or "also": "How do I also support .save()?" (drf, development round 28, read broken), "How do I
# accept slashes too?" (bottle, test half) ask for what comes besides something the question never says.
ADDITIVE = re.compile(r"\balso\b|\b(?:too|as well)$")


@functools.lru_cache(maxsize=4096)
def passage_facts(text: str, title: str = "") -> tuple[Fact, ...]:
    """Every fact of the passage's statements, in passage order."""
    found = statements(text, title)
    parsed = parse_all([statement.text for statement in found])
    facts: list[Fact] = []
    for statement, sentence in zip(found, parsed):
        if VERSION_NOTE.match(statement.text):
            continue  # "Changed in version 0.15.3: If the www_authenticate argument is not set, ...": when, not what
        if statement.text.rstrip().endswith("?"):
            continue  # "Should the schema be considered public?": a question put to the reader answers nothing (drf)
        if not statement.whole or leans_on_context(
            sentence,
            SELF_NOUNS if statement.entry else frozenset(),
            in_entry=statement.entry is not None,
            parameter=statement.role == "parameter",
        ):
            continue  # no answer on its own: cut off, or "This flag ...", "However, ...", "After that ..."
        answer = _answer(found, parsed, statement)
        # an option's description says what the option does, in the imperative ("With --batch, follow
        # symlinks ..."): no instruction to the user, however it is worded
        describes = docstring_mood(statement, sentence) or statement.entry_kind == "option"
        named_before = {token.lemma for earlier in parsed[: statement.position] for token in earlier.tokens}
        for reader in ENTRY_READERS if describes else READERS:
            for kind, topic, slots in reader(statement, sentence):
                said = dict(slots)
                if (
                    said.get(GIVEN_SLOT) in named_before
                    or ADDITIVE.search(said.get("vp", ""))
                    or (len(answer) < 2 and PARTIAL_SLOT in said)
                ):
                    continue
                facts.append(
                    Fact(kind, topic, slots, statement.position, answer, statement.entry, statement.entry_kind)
                )
    facts.extend(sections(found, title))
    told = {fact.statement for fact in facts if fact.kind == "procedure"}
    passage = units(text)  # the examples: statements leave code out
    facts.extend(fact for fact in task_sections(found, parsed, title, passage) if fact.statement not in told)
    shown = [fact.example for fact in facts if fact.example]
    facts.extend(
        fact
        for fact in introduced_examples(passage, len(found))
        if not any(fact.example and fact.example.endswith(example) for example in shown)  # the task's example
    )
    own = example_defined_names(passage)
    # a name the page's example defines is the example's ("What is items_t?"), not the library's
    facts = [fact for fact in facts if fact.entry is not None or fact.topic not in own]
    return tuple(_told_apart(_owned_flags(facts), found))


# A condition on a flag's value ("if html is False"): a parameter's or a setting's, which only its owner names.
FLAG_CONDITION = re.compile(r"^[a-z_]\w* (?:is|are) (?:not )?(?:True|False|None|true|false)$")


def _owned_flags(facts: list[Fact]) -> list[Fact]:
    """Conditions on a bare flag are kept only where the statement documents an entry: "What should I
    expect if html is False?" names no function (a chunk that opens inside lipsum's description: jinja2,
    development round 12)."""
    return [
        fact
        for fact in facts
        if not (fact.entry is None and fact.has("clause") and FLAG_CONDITION.match(fact.slot("clause")))
    ]


def _told_apart(facts: list[Fact], found: tuple[Statement, ...]) -> list[Fact]:
    """Two entries' facts answered in the same words ("loop.depth" and "loop.depth0": "Indicates how deep in a
    recursive loop the rendering currently is."): each answer gains its entry's next statement, which tells them
    apart ("Starts at level 1"); facts still answered alike are dropped (jinja2, development round 12)."""
    texts = {statement.position: statement.text for statement in found}

    def said(fact: Fact) -> str:
        return " ".join(texts[position] for position in fact.answer)

    owners: dict[str, set[str | None]] = {}
    for fact in facts:
        owners.setdefault(said(fact), set()).add(fact.entry)
    kept = []
    for fact in facts:
        if len(owners[said(fact)]) < 2:
            kept.append(fact)
            continue
        after = fact.answer[-1] + 1
        if (
            after < len(found)
            and found[after].entry == fact.entry
            and found[after].role == "prose"
            and entry_of_line(found[after].text) is None  # not a member's line read as prose
            and not found[after].text.rstrip().endswith(":")
        ):
            longer = replace(fact, answer=(*fact.answer, after))
            if sum(said(other) == said(longer) for other in facts) == 0:
                kept.append(longer)
    return kept


def _answer(found: tuple[Statement, ...], parsed: list[Sentence], statement: Statement) -> tuple[int, ...]:
    """The statement, and for an entry's first sentence the next one of the same entry when it
    stands on its own (it often completes it: "Returns Response object.")."""
    if statement.role == "first":
        following = [
            s.position
            for s in found[statement.position + 1 : statement.position + 2]
            if s.entry == statement.entry
            and s.role == "prose"
            and s.whole
            and not leans_on_context(parsed[s.position], SELF_NOUNS, in_entry=True)
            and not LABEL_OPENING.match(s.text)
        ]
        return (statement.position, *following)
    return (statement.position,)


READERS = (
    procedures,
    conditions,
    errors,
    definitions,
    entries,
    comparisons,
    capabilities,
    defaults,
    behaviours,
    passives,
    advice,
    named_uses,
)
ENTRY_READERS = (conditions, errors, entries, defaults)  # a docstring's sentence: what the entry does
