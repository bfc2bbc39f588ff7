"""A reader of what a tutorial says of a named thing in the present passive: what sets it (an ``agent``: "The
prompt is defined by the cmd2.Cmd.prompt attribute" → what defines the prompt) and when it happens (an
``occasion``: "Postparsing hooks are called after the user input has been parsed" → when are postparsing hooks
called)."""

from __future__ import annotations

from benchsmith.agents.offline.facts.actions import TIME_MARKS
from benchsmith.agents.offline.facts.conditionals import QUANTIFYING_DETERMINERS
from benchsmith.agents.offline.facts.phrases import fits, noun_phrase, render, sentence_inner, span, specific_noun
from benchsmith.agents.offline.facts.record import Found
from benchsmith.entries import Statement
from benchsmith.language import Sentence, Token

# Verbs whose agent is what sets a thing: "The prompt is specified by the cmd2.Cmd.prompt attribute" → what specifies
# the prompt. Their third person, as the question says it.
AGENT_VERBS = {
    "specify": "specifies",
    "define": "defines",
    "determine": "determines",
    "control": "controls",
    "set": "sets",
    "configure": "configures",
    "decide": "decides",
    "govern": "governs",
}
# Marks of a clause that says when something happens ("after the user input has been parsed").
OCCASION_MARKS = TIME_MARKS | {"until"}
# ("after" as a preposition is as often a name's source: "codenamed after a song")
OCCASION_PREPOSITIONS = frozenset({"during"})


def _named_subject(sentence: Sentence, subject: Token) -> bool:
    """A subject that says which thing: a name, or a noun with a word or a phrase that narrows it ("postparsing
    hooks", "the prompt for subsequent lines of input"); "an exception", "duplicates", "the default" do not."""
    if subject.code or subject.pos == "PROPN":
        return True
    narrowed = any(child.dep in ("compound", "amod", "poss", "prep") for child in sentence.children(subject.index))
    return narrowed and (specific_noun(sentence, subject) or sentence.child(subject.index, "prep") is not None)


def passives(statement: Statement, sentence: Sentence) -> Found:
    """What a tutorial says of a named thing in the present passive: what sets it ("The prompt for subsequent
    lines of input is defined by the cmd2.Cmd.continuation_prompt attribute" → what defines the prompt for
    subsequent lines of input) and when it happens ("Postparsing hooks are called after the user input has been
    parsed" → when are postparsing hooks called). Neither a modal, a negation, a concession ("even if") nor a
    subject that names nothing on its own ("the default", "any return value"). (cmd2, development round 17.)"""
    root = sentence.root
    be = sentence.child(root.index, "auxpass")
    subject = sentence.child(root.index, "nsubjpass")
    if (
        root.tag != "VBN"
        or be is None
        or be.tag not in ("VBZ", "VBP")
        or sentence.child(root.index, "aux", "neg") is not None
        or subject is None
        or subject.pos not in ("NOUN", "PROPN")
        or not _named_subject(sentence, subject)
        or any(child.dep in ("xcomp", "ccomp", "oprd") for child in sentence.children(root.index))
        or any(
            child.dep == "det" and child.lemma in QUANTIFYING_DETERMINERS for child in sentence.children(subject.index)
        )
        or any(
            child.dep == "advmod" and child.lemma in ("even", "also", "only") for child in sentence.children(root.index)
        )
    ):
        return []
    indices = span(sentence, subject.index)
    thing = render(sentence, indices) if fits([root.index, *indices]) and len(indices) <= 10 else None
    if not thing:
        return []
    thing = sentence_inner(sentence, indices, thing)
    plural = (subject.tag in ("NNS", "NNPS") and not subject.code) or sentence.child(subject.index, "conj") is not None
    slots: tuple[tuple[str, str], ...] = (("thing", thing), ("verbed", root.text.lower()))
    slots = (*slots, *((("plural", "yes"),) if plural else ()))
    topic = noun_phrase(sentence, subject) or thing
    agent = sentence.child(root.index, "agent")
    if agent is not None and root.lemma in AGENT_VERBS:
        low, high = sentence.subtree(agent.index)
        if any(token.code for token in sentence.tokens[low:high]):
            return [("agent", topic, (*slots, ("verbs", AGENT_VERBS[root.lemma])))]
        return []
    occasion = any(
        child.index > root.index
        and (
            (
                child.dep == "advcl"
                and any(
                    mark.dep in ("mark", "advmod") and mark.lemma in OCCASION_MARKS
                    for mark in sentence.children(child.index)
                )
            )
            or (child.dep == "prep" and child.lemma in OCCASION_PREPOSITIONS)
        )
        for child in sentence.children(root.index)
    )
    return [("occasion", topic, slots)] if occasion else []
