"""The rules that read the reply against the question: ``reply_mismatch`` and the reply's half of
``dangling_referent``."""

from __future__ import annotations

import re

from benchsmith.entries import short_name, statements
from benchsmith.evals.quality_gate.evidence import TurnEvidence, code_names, topic_words
from benchsmith.language import parse, points_outside
from benchsmith.passages import split_sentences
from benchsmith.words import content_words, stems

NOT_ANSWERED = re.compile(r"\b(does not|doesn't|do not|don't|cannot|can't|not (?:cover|answer|say|document))\b",
                          re.IGNORECASE)
NEGATION = re.compile(r"\b(not|no|never|without|unless|none|n't)\b|n't\b", re.IGNORECASE)
WHAT_HAPPENS = re.compile(r"^(?:what happens|what should i expect|what goes wrong)\b.*\b(if|when|without)\b(?P<clause>.+)\?$",
                          re.IGNORECASE)
REQUIREMENT = re.compile(r"\b(must|should|need to|needs to|have to|has to|is required|are required|make sure|"
                         r"ensure that)\b", re.IGNORECASE)
DEFINITION = re.compile(r"^(?:what (?:exactly )?(?:is|are) (?!the (?:purpose|role|point|meaning|return value|"
                        r"default|difference|best)\b)(?P<thing>[^?]+?)|can you explain what (?P<explained>[^?]+?) "
                        r"(?:is|are)|what does (?P<meant>[^?]+?) mean)\?$", re.IGNORECASE)
DEFINING_VERBS = frozenset({"be", "mean", "refer", "represent", "denote", "describe", "stand", "contain", "hold",
                            "provide", "define", "implement", "allow", "let", "give", "store"})


def _defines(thing: str, reply: str) -> bool:
    """Does the reply's first sentence say what ``thing`` is: the thing (its head word) as the subject
    of a copula or a defining verb ("Blueprints are a way to ...", "The index object holds ...")?"""
    sentences = split_sentences(reply)
    if not sentences:
        return False
    head = (thing.split()[-1] if thing.split() else thing).lower().rstrip("s")
    first = parse(sentences[0])
    for token in first.tokens:
        if token.dep in ("nsubj", "nsubjpass") and (token.text.lower().rstrip("s").endswith(head) or
                                                     head.endswith(token.text.lower().rstrip("s"))):
            verb = first.tokens[token.head]
            if verb.lemma == "be":  # "X is a Y": a noun says what it is; "X was new in 1.0" does not
                children = first.children(verb.index)
                return not any(child.dep == "acomp" for child in children) and any(
                    child.dep == "attr" and child.pos in ("NOUN", "PROPN") for child in children)
            return verb.lemma in DEFINING_VERBS
    return bool(re.match(rf"(?i)^\W*(?:the |an? )?{re.escape(thing)}\b", sentences[0])) or \
        bool(re.match(r"(?i)^\W*(?:an?|the) \w", sentences[0]) and len(first.tokens) > 3 and
             first.root.pos in ("NOUN", "PROPN"))  # a docstring's noun-phrase definition: "A user-created object."


def reply_mismatch(turn: TurnEvidence) -> str | None:
    reply = turn.reply.strip()
    if turn.turn_type == "unanswerable":
        return None if NOT_ANSWERED.search(reply) else "an unanswerable turn's reply answers"
    if turn.turn_type == "underspecified":
        return None if "?" in reply else "an underspecified turn's reply asks nothing back"
    if re.search(r"(such as|e\.g\.|:|,)\s*$", reply) or re.search(r"\b(to|use|the|a|an|of|with)\s*$", reply):
        return "the reply is cut off"
    question = turn.asked
    found = WHAT_HAPPENS.match(question)
    if found:
        if reason := _condition_mismatch(found["clause"], reply):
            return reason
    defined = DEFINITION.match(question)
    thing = defined and (defined["thing"] or defined["explained"] or defined["meant"])
    if thing and not code_names(thing) and not thing.endswith(" for") and not _defines(thing, reply):
        return f"asks what {thing} is; the reply does not say"
    asked = set(stems(topic_words(question)))
    if not asked:
        return None
    named = next(iter(code_names(question)), None)
    if named and turn.gold:
        documented = _reply_entries(reply, turn.gold)
        if documented and not any(entry.rsplit(".", 1)[-1] == named.rsplit(".", 1)[-1] for entry in documented):
            return f"asks about {named}, answers about {', '.join(sorted(short_name(e) for e in documented))}"
        if documented:
            return None
    said = set(stems(content_words(reply)))
    if not asked & said:
        return "the reply shares none of the question's topic words"
    if len(said - set(stems(content_words(question)))) <= 1:
        return "the reply only restates the question"
    return None


def _condition_mismatch(clause: str, reply: str) -> str | None:
    """A "what happens if C" question whose reply states a requirement, or the condition's opposite."""
    sentence = next((s for s in split_sentences(reply) if re.search(r"\b(if|when|unless|without)\b", s, re.I)),
                    split_sentences(reply)[0] if reply else "")
    asked_negated = bool(NEGATION.search(clause))
    said_clause = re.search(r"\b(?:if|when|unless|without)\b(?P<clause>[^,.;]+)", sentence, re.IGNORECASE)
    if said_clause:
        said_negated = bool(NEGATION.search(said_clause["clause"])) or "unless" in sentence.lower() or \
            bool(re.search(r"\bwithout\b", sentence, re.I))
        if said_negated != asked_negated:
            return "the reply is about the opposite condition"
    main = re.sub(r"\b(?:if|when|unless)\b[^,]*,?", "", sentence, flags=re.IGNORECASE)
    if REQUIREMENT.search(main):
        return "asks what happens; the reply states a requirement"
    return None


def _reply_entries(reply: str, gold: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> set[str]:
    """The entries of the gold whose statements the reply repeats."""
    reply_text = " ".join(reply.split())
    found = set()
    for title, text in gold:
        for statement in statements(text, title):
            if statement.entry and len(statement.text) > 12 and " ".join(statement.text.split()) in reply_text:
                found.add(statement.entry)
    return found


def dangling_reply(turn: TurnEvidence) -> str | None:
    """A reply whose first sentence leans on text the turn does not show ("This is useful for ...",
    "Otherwise, ...", "as shown above", "both of these")."""
    if turn.turn_type in ("unanswerable", "underspecified"):
        return None
    sentences = split_sentences(turn.reply.strip())
    if not sentences:
        return None
    named = frozenset([*topic_words(turn.asked), *SELF_NOUNS])
    reason = points_outside(parse(sentences[0]), named)
    return f"the reply {reason}, which nothing in the turn names" if reason else None


# What an API entry's own documentation calls the entry: "Return a copy of this jar", "This error is raised".
SELF_NOUNS = frozenset("object class method function instance error exception module call module package attribute "
                       "property value type widget command option event hook plugin".split())
