"""Question types (issue 22, after MTRAG): what the questioner is asked for, how the offline
questioner words each type, and how a question's wording gives its type.

The offline wordings read as a user types them, never as a template filled with keywords
(evals/question_form.py's ill-formed rule rejects those): "How do I use the reminder label?",
"Can you explain how the reminder label works?", "reminder label usage example".
"""

from __future__ import annotations

import re

from benchsmith.agents.sentence_questions import (GENERAL_CODE_QUESTIONS, GENERAL_PLURAL_QUESTIONS, GENERAL_QUESTIONS,
                                                  USER_FRAMES, Ask)
from benchsmith.words import REQUEST_WORDS, content_words, stems

QUESTION_TYPE_GUIDANCE = {
    "factoid": "Ask for a specific fact (a value, a name, a default, what something returns).",
    "explanation": "Ask why something is so, or how it works.",
    "comparison": "Ask how two things the passages mention differ or compare.",
    "how-to": "Ask how to get a task done.",
    "yes/no": "Ask a question whose answer is yes or no.",
    "summary": "Ask for a short summary or overview.",
    "keyword": "Type a short keyword query, as into a search box: a few words, no question mark.",
}
# "What is the role of the reminder label?", "What is json.dumps used for?": the thing asked about.
FOCUS_PATTERNS = (re.compile(r"^(?:In [^,]+, )?what is the role of (?P<focus>.+?)\?$", re.IGNORECASE),
                  re.compile(r"^(?:In [^,]+, )?what is (?P<focus>\S+) used for\?$", re.IGNORECASE))
YES_NO_OPENINGS = re.compile(r"^(is|are|was|were|does|do|did|can|could|should|will|would|has|have|must)\b",
                             re.IGNORECASE)


def focus_of(ask: Ask) -> str | None:
    """What a question is about, as a phrase a new question can name: its subject, else the
    phrase its key-phrase form asks about."""
    if ask.subject:
        return ask.subject
    for pattern in FOCUS_PATTERNS:
        if found := pattern.match(ask.question.strip()):
            return found["focus"]
    return None


def distinct_things(focus: str, other: str) -> bool:
    """Two names a comparison can set side by side: neither is the other or a dotted part of it
    ("HTTPServer.server_bind" and "server_bind" are one thing)."""
    first, second = focus.lower().removeprefix("the "), other.lower().removeprefix("the ")
    return first != second and not first.endswith(f".{second}") and not second.endswith(f".{first}") \
        and first.rsplit(".", 1)[-1] != second.rsplit(".", 1)[-1]


def fragment_focus(focus: str) -> bool:
    """A focus a sentence's grammar cut wrongly: a contraction read as a noun ("the don't score")."""
    return bool(re.search(r"\w+n[’']t\b", focus))


# A name a comparison can set beside another: json.dumps, ensure_ascii, parse_args(), OrderedDict.
COMPARABLE_NAME = re.compile(r"^[A-Za-z_][\w.]*(\(\))?$")
CODE_SHAPE = re.compile(r"[._]\w|\w\(|[a-z][A-Z]|^[A-Z][a-z]+[A-Z]")


NOUN_PHRASE = re.compile(r"^the(?: [a-z][a-z0-9-]+){2,4}$")  # "the reminder label"


def comparable(focus: str) -> bool:
    """A code name, or a noun phrase of common words: "the method", "a binascii.Error", "the June
    1989" are not things a user sets side by side."""
    return (bool(COMPARABLE_NAME.match(focus) and CODE_SHAPE.search(focus)) or bool(NOUN_PHRASE.match(focus))) \
        and not fragment_focus(focus)


# The offline questioner's wording of each type: {focus} is what the question is about, {bare} the
# focus without its article, {other} the second thing of a comparison; the rest is the type's frame.
TYPED_WORDINGS = {
    "explanation": "Can you explain how {focus} {works}?",
    "how-to": "How do I use {focus} in practice?",
    "yes/no": "Is there a way to change how {focus} {behaves}?",
    "comparison": "How does {focus} compare with {other}?",
    "summary": "Could you give me a short summary of {focus}?",
    "keyword": "{bare} usage example",
}


def _frame_words(template: str) -> list[str]:
    """A template's content words outside its placeholders ("*" marks a general wording)."""
    return content_words(re.sub(r"\{\w*\}", " ", template.lstrip("*")))


# Stems of the words that frame a question rather than name its topic: the typed wordings above, the
# user's phrasings of agents/sentence_questions.py and a user's request words (benchsmith/words.py).
# A document that answers a question need not contain them, so the offline judges do not look for them.
FRAME_STEMS = frozenset(stems([*REQUEST_WORDS, *(word for template in (
    *TYPED_WORDINGS.values(), *GENERAL_CODE_QUESTIONS, *GENERAL_QUESTIONS, *GENERAL_PLURAL_QUESTIONS,
    *(template for _, templates in USER_FRAMES for template in templates)) for word in _frame_words(template))]))


def typed_wording(question: str, focus: str | None, question_type: str | None, other: str | None = None) -> str | None:
    """The question worded as ``question_type`` asks, about ``focus`` (``other``: a second thing,
    for a comparison); None when the type needs a focus the question has not."""
    if question_type in (None, "factoid"):
        return question
    if not focus or fragment_focus(focus):
        return None
    if question_type == "comparison" and not (other and distinct_things(focus, other) and comparable(focus)
                                              and comparable(other)):
        return None
    bare = re.sub(r"^(the|a|an)\s+", "", focus, flags=re.IGNORECASE)
    template = TYPED_WORDINGS.get(question_type)
    if template is None:
        return None
    plural = is_plural(focus)  # "how the hashable items work", "how json.dumps works"
    return template.format(focus=focus, bare=bare, other=other, works="work" if plural else "works",
                           behaves="behave" if plural else "behaves")


def is_plural(focus: str) -> bool:
    """A noun phrase whose last word is a plural of common words ("the hashable items"); a code
    name never is ("os.fsencode", "NEWS")."""
    last = focus.split()[-1]
    return len(focus.split()) > 1 and last.isalpha() and last.islower() and last.endswith("s") \
        and not last.endswith(("ss", "us", "is"))


def same_comparison(question: str, asked: set[str]) -> bool:
    """A comparison already asked, in either order ("How does b64decode compare with b64encode?"
    after "How does b64encode compare with b64decode?")."""
    found = re.match(r"^How does (?P<first>.+) compare with (?P<second>.+)\?$", question)
    return bool(found) and TYPED_WORDINGS["comparison"].format(focus=found["second"], other=found["first"]) in asked


def question_type_of(question: str) -> str:
    """The type a question's wording gives (the label of a turn no type was asked for)."""
    text = question.strip()
    lowered = text.lower()
    if not text.endswith("?") and not re.match(r"^(what|which|who|when|where|why|how)\b", lowered):
        return "keyword"
    if re.search(r"\b(compare|comparison|differ|difference|versus|vs\.?)\b", lowered):
        return "comparison"
    if re.search(r"\b(summary|summari[sz]e|sum up|overview)\b", lowered):
        return "summary"
    if re.match(r"^(how (do|can|should) (i|we)|how to)\b", lowered):
        return "how-to"
    if re.match(r"^(why\b|can you explain|could you explain|how does .+ work)", lowered):
        return "explanation"
    if YES_NO_OPENINGS.match(lowered) and not re.match(r"^(can|could) you (tell|give|show|explain)", lowered):
        return "yes/no"
    return "factoid"
