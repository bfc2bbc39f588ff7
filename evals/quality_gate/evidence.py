"""What the quality gate judges a turn on, and helpers its rules share."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from benchsmith.entries import statements
from benchsmith.language import Sentence
from benchsmith.words import UNANCHORED_NOUNS, content_words, stems

# The reading rubric's broken classes (data/readings/RUBRIC.md), in the order a reader gives the first.
GATE_CLASSES = (
    "unaskable",
    "topic_not_noun_phrase",
    "reply_mismatch",
    "dangling_referent",
    "fake_ambiguity",
    "unanswerable_answered",
    "copies_passage",
)


@dataclass(frozen=True)
class TurnEvidence:
    """One turn and what it is judged on."""

    question: str  # as asked
    reply: str
    turn_type: str = "answerable"  # answerable, unanswerable, partial, underspecified, multi-passage, clarification
    previous: Sequence[tuple[str, str]] = ()  # the earlier (question, reply) pairs, in order
    gold: Sequence[tuple[str, str]] = ()  # (title, text) of the gold passages
    held_out: Sequence[tuple[str, str]] = ()  # (title, text) of the passages held out of the corpus
    candidates: Sequence[tuple[str, str]] = ()  # (title, text) an underspecified question could mean
    remaining_pool: Sequence[str] | None = None  # texts retrieval finds in what remains (unanswerable, partial)

    @property
    def asked(self) -> str:
        """The question a clarification asks, its "I mean X:" opening read into it ("I mean
        Distribution.discover: what problem does it solve?" asks what problem Distribution.discover
        solves)."""
        if self.turn_type == "clarification" and ":" in self.question:
            opening, rest = (part.strip() for part in self.question.split(":", 1))
            meant = re.sub(r"^I mean\s+", "", opening)
            rest = re.sub(r"\bit\b", meant, rest, count=1) if meant != opening else rest
            return rest[:1].upper() + rest[1:]
        return self.question.strip()

    @property
    def history_text(self) -> str:
        return " ".join(f"{question} {reply}" for question, reply in self.previous)


# A code name as questions write it: dotted, with a call, snake_case, or a constant in capitals.
CODE_WORD = re.compile(
    r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?|(?<![\w.])[A-Za-z_]\w*\(\)"
    r"|(?<![\w.])[a-z]+_[a-z_]\w*|(?<![\w.])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
    r"|(?<![\w-])--?[a-z][\w-]*"
)  # ... and a command-line option

# Words that frame a question, not its topic: a reply need not repeat them.
FRAME_WORDS = frozenset(
    "role purpose point meaning use used using work works happen happens next expect explain exactly way best "
    "possible able difference differ compare default value return returns returned raise raised cause causes "
    "hold holds store stored pass control controls signal represent mean means get back need know tell give "
    "show find learn recommended should would could can will does do did thing things".split()
)


def code_names(text: str) -> list[str]:
    return [name.rstrip("()") for name in CODE_WORD.findall(text)]


def spoken_entry(question: str, gold: Sequence[tuple[str, str]]) -> str | None:
    """The gold's entry a question names as a custom documentation domain does, by its short name and
    its kind ("the urlize filter", "the sameas test": no code name marks it), or None."""
    for title, text in gold:
        for statement in statements(text, title):
            if not statement.entry or not statement.entry_kind:
                continue
            short = statement.entry.rsplit(".", 1)[-1]
            if re.search(rf"(?i)\bthe {re.escape(short)} {re.escape(statement.entry_kind)}\b", question):
                return statement.entry
    return None


def topic_words(question: str) -> list[str]:
    """The question's content words less its frame, a code name also in its parts ("has_section":
    has, section; "Session.mount": session, mount)."""
    found = [word for word in content_words(question) if word not in FRAME_WORDS]
    for name in code_names(question):
        found += [part.lower() for part in re.split(r"[._()]+|(?<=[a-z])(?=[A-Z])", name) if len(part) > 2]
    return found


# What says which one a noun means: a name or an adjective beside it, a possessor, a number, an "of"
# phrase, a clause ("the file it writes").
DESCRIBING = frozenset({"compound", "amod", "prep", "poss", "nmod", "acl", "relcl", "nummod"})


def unnamed_definite(sentence: Sentence, before: str) -> str | None:
    """ "The zero-based level of the item": a definite common noun that says nothing of which one
    (words.UNANCHORED_NOUNS, nothing describing it) and that ``before`` (the question, the last
    exchange) does not name. The noun, or None."""
    named = set(stems(content_words(before)))
    for token in sentence.tokens:
        if token.pos != "NOUN" or token.code or token.lemma not in UNANCHORED_NOUNS:
            continue
        if stems([token.lemma])[0] in stems(content_words(sentence.span_text(0, token.index))):
            continue  # named earlier in the same sentence ("a sequence of objects ... rejecting the objects")
        children = sentence.children(token.index)
        if not any(child.dep == "det" and child.lemma == "the" for child in children):
            continue
        if any(child.dep in DESCRIBING for child in children) or stems([token.lemma])[0] in named:
            continue
        return token.text
    return None
