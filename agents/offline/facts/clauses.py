"""What a clause says around its verb: its subject, whether it is an instruction or an API entry's
description (the docstring mood), whether its action is on a thing a user can name, and whether a
pronoun stands for the entry the statement documents."""

from __future__ import annotations

from benchsmith.agents.offline.facts.phrases import QUALIFYING_WORDS, one_of_a_list, specific_noun
from benchsmith.entries import Statement, spoken_name
from benchsmith.language import Sentence, Token

META_VERBS = frozenset(
    {
        "see",
        "note",
        "refer",
        "read",
        "look",
        "check",
        "visit",
        "consult",
        "remember",
        "keep",
        "consider",
        "be",
        "notice",
        "recall",
        "imagine",
        "assume",
        "suppose",
        "let",
        "say",
        "review",  # "you should review the Theme Developer Guide": a pointer (mkdocs, development round 11)
    }
)
ORDINALS = frozenset("first second third fourth fifth last next previous former latter following preceding".split())
ENABLING_VERBS = frozenset({"allow", "let", "enable", "help", "permit"})
# What the user wants, not what happens or what they can do: "if you want to X", "you could want a process manager".
WANTING_VERBS = frozenset({"want", "need", "wish", "like", "prefer"})

# Adjectives that judge a thing rather than say what it is: "a huge drain", "a great choice".
EVALUATIVE = frozenset(
    "huge big great good bad best worst important major minor serious simple easy hard "
    "difficult nice common rare popular useful powerful complicated".split()
)

# Nouns that name a relation and mean nothing without its other end ("access" to what, "support" of what).
RELATIONAL_NOUNS = frozenset(
    "access support compatibility control permission help information details integration interoperability".split()
)
DOCSTRING_VERBS = frozenset(
    {
        "return",
        "returns",
        "yield",
        "yields",
        "raise",
        "raises",
        "create",
        "creates",
        "construct",
        "constructs",
        "set",
        "sets",
        "get",
        "gets",
    }
)


# Participles that point at a value given elsewhere ("the specified OPTS": specified where?).
GIVEN_WORDS = frozenset("specified given supplied provided passed aforementioned".split())


def subject_of(sentence: Sentence, verb: Token) -> Token | None:
    return sentence.child(verb.index, "nsubj", "nsubjpass", "expl")


def said_to_you(sentence: Sentence, verb: Token) -> bool:
    """The user does it: the verb's subject is "you" ("you can X", "when you return a Response")."""
    subject = subject_of(sentence, verb)
    return subject is not None and subject.text.lower() == "you"


def is_imperative(sentence: Sentence, verb: Token) -> bool:
    return (
        verb.tag == "VB"
        and subject_of(sentence, verb) is None
        and sentence.child(verb.index, "aux") is None
        and verb.lemma not in META_VERBS
    )


def docstring_mood(statement: Statement, sentence: Sentence) -> bool:
    """A sentence of an API entry whose verb has no subject ("Return a deep copy of self", "If no
    fields exist, returns an empty list", "Cleans up adapter items"): it says what the entry does,
    not what a reader should do."""
    if statement.entry is None or not sentence.tokens:
        return False
    first, root = sentence.tokens[0], sentence.root
    if subject_of(sentence, root) is None and (root.tag in ("VB", "VBZ") or root.lemma in DOCSTRING_VERBS):
        return True
    return first.lemma in DOCSTRING_VERBS or (
        first.text.endswith("s") and first.dep == "ROOT" and first.pos in ("NOUN", "PROPN", "VERB")
    )


def entry_name(statement: Statement) -> str | None:
    return spoken_name(statement.entry, statement.entry_kind) if statement.entry else None


def refers_to_entry(token: Token | None) -> bool:
    return token is not None and token.text.lower() in ("it", "this", "they") and not token.code


def names_something(sentence: Sentence, verb: Token) -> bool:
    """An action on a thing a user can name: its object (or its complement's object) is no generic
    noun alone ("override the default", "move on to the next step" name nothing)."""
    if any(
        grandchild.tag == "WDT" and grandchild.dep == "det"
        for child in sentence.children(verb.index)
        if child.index > verb.index
        for grandchild in sentence.children(child.index)
    ):
        return (
            False  # "name which subdirectory [to make the output relative to]": a question inside, cut (git, round 11)
        )
    obj = sentence.child(verb.index, "dobj", "attr", "dative")
    if obj is None:
        complement = next((child for child in sentence.children(verb.index) if child.dep == "prep"), None)
        obj = sentence.child(complement.index, "pobj") if complement is not None else None
    if obj is not None and any(
        child.dep == "amod" and child.lemma in ORDINALS for child in sentence.children(obj.index)
    ):
        return False  # "apply the second rule", "the last priority": an item of a list the question does not show
    if obj is not None and (
        any(
            child.dep == "det" and child.lemma in ("any", "every", "each", "all")
            for child in sentence.children(obj.index)
        )
        or one_of_a_list(sentence, obj)
        or any(
            child.dep == "amod" and (child.lemma in QUALIFYING_WORDS or child.text.lower() in GIVEN_WORDS)
            for child in sentence.children(obj.index)
        )
    ):  # "set additional configuration", "add the specified OPTS": what the text set or named before (round 13)
        return False  # "perform any request", "edit any snippets": any one of a kind is no task (drf, round 13)
    if (
        obj is not None
        and obj.lemma in RELATIONAL_NOUNS
        and not any(child.dep == "prep" for child in sentence.children(obj.index))
    ):
        return False  # "get direct access" to what? (requests, development round 5)
    return (
        obj is None
        or obj.code
        or (obj.pos == "PRON" and obj.text.lower() in ("i", "me", "myself"))
        or (obj.pos in ("NOUN", "PROPN") and specific_noun(sentence, obj))
    )


def light_on_judgement(sentence: Sentence, verb: Token) -> bool:
    """ "to have better success": a light verb on a judgement (or on nothing) says nothing a user can name."""
    obj = sentence.child(verb.index, "dobj")
    return verb.lemma in ("have", "get", "make", "take", "give") and (
        obj is None
        or any(
            child.dep == "amod" and (child.lemma in EVALUATIVE or child.text.lower() in {"better", "more", "less"})
            for child in sentence.children(obj.index)
        )
    )
