"""What a page's headings name: the "In X," context a question may carry ("In git submodule, ...", "In
Session.mount, ..."), and the headings that name no thing a user works with (a task, a part of the manual)."""

from __future__ import annotations

import re

from benchsmith.agents.offline.facts.phrases import GENERIC_NOUNS, QUALIFYING_WORDS
from benchsmith.entries import MAN_PAGE, page_subject, page_topic, section_heading
from benchsmith.language import Sentence, Token, parse

# A name as code writes it: dotted, called, camelCase or in capitals.
CODE_LIKE = re.compile(r"[._()]|[a-z][A-Z]|^[A-Z]{2,}")


def context_name(title: str) -> str:
    """What a page is about, as a user names it: a command's man page by the command ("git-submodule(1)
    Manual Page" → "git submodule"); a section that names an entry or a thing by its heading; else
    the page's title when it names a thing; else nothing ("Lower-Level Classes", "Chapter 4.
    Sharing development with others" and "How to recover an object" are parts of a manual: "In
    Lower-Level Classes, ..." is no question a user asks)."""
    page, heading = page_topic(title), section_heading(title)
    if MAN_PAGE.match(page):
        return page_subject(title)
    if heading and (signature := SIGNATURE_HEADING.fullmatch(heading.strip())):
        # a heading that is a call's signature is named by its name: "In .force_authenticate(user=None,
        # token=None), ..." is no way a user names a method (drf, development round 14)
        return signature["name"]
    if heading and heading != page and MODULE_NAME.fullmatch(page) and IDENTIFIER.fullmatch(heading):
        # a docstring tree's page is a module, its section one of the module's names ("code › interact"): "In
        # code, ..." names an English word, "In code.interact, ..." the function (stdlib, development round 12)
        return f"{page}.{heading}"
    if (
        heading
        and heading != page
        and (
            _code_name(heading)
            or (
                names_a_thing(heading)
                and len(heading.split()) > 1
                and heading.split()[0].lower() not in QUALIFYING_WORDS
            )
        )
    ):
        # a one-word heading is a part of its page ("Timeline" of the release process, "Core"), and "More
        # complicated POST requests" continues the section before it: no context a user names (requests,
        # development round 5)
        return heading
    return page if _code_name(page) or names_a_thing(page) else ""


SIGNATURE_HEADING = re.compile(r"\.?(?P<name>[A-Za-z_][\w.]*)\(.*\)")
MODULE_NAME = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*")
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _sentence_case(heading: str) -> bool:
    """A heading written as a sentence ("Upload new source files"), not a name in title case ("Read the Docs")."""
    return any(word[:1].islower() and word.lower() not in TITLE_CASE_SMALL_WORDS for word in heading.split()[1:])


TITLE_CASE_SMALL_WORDS = frozenset("a an the of and or to in on for with at by from as".split())


def _code_name(heading: str) -> bool:
    # "API" is in capitals and names a part of the manual, no thing ("In API, what happens if ...": jinja2, round 12)
    return len(heading.split()) == 1 and bool(CODE_LIKE.search(heading)) and heading.lower() not in MANUAL_TITLE_WORDS


MANUAL_TITLE_WORDS = frozenset(
    "guide usage interface introduction overview tutorial reference changes changelog "
    "history faq questions documentation contents index notes release quickstart "
    "contributing installation install chapter part appendix section classes functions "
    "methods attributes exceptions modules objects examples api lower higher level "
    "advanced basic basics topics miscellaneous manual handbook book".split()
)


# Dependents after a heading's noun that make it a description ("List of Builtin Filters", "Design based on FastAPI").
POSTMODIFIERS = frozenset({"prep", "acl", "relcl"})


# Kinds of entry a section lists (besides the generic nouns: options, functions, ...).
LISTED_KINDS = frozenset("flag setting variable attribute property field key command hook mark marker filter".split())


def names_a_thing(heading: str) -> bool:
    """A heading that is the name of a thing a user works with ("Encodings", "Response Content",
    "Read the Docs"): at most four words, not a question or a task ("How to ..."), no chapter
    number, no word that names a part of a manual."""
    cleaned = heading.strip()
    if not cleaned or len(cleaned.split()) > 4 or re.search(r"\d", cleaned) or cleaned.endswith("?") or ":" in cleaned:
        return False
    if "(" in cleaned:
        # a remark in parentheses says which part of the manual this is ("Python (optional)", "Setup (Windows)"):
        # "In Python (optional), how can I enable full access to my application?" (cmd2, development round 17)
        return False
    first = cleaned.split()[0].lower()
    if first in ("how", "what", "why", "when", "where", "which", "who", "using", "working", "getting"):
        return False
    if re.match(r"[A-Za-z]+ing (?:and|or) [a-z]+ing\b", cleaned):
        # two tasks joined: "Opening and closing windows", whose first gerund the tagger may read as a noun ("In
        # Opening and closing windows, what should I expect ...?": guizero, development round 18)
        return False
    parsed = parse(cleaned.lower())  # lower-cased: the tagger reads Title Case as names
    opening = parsed.tokens[0]
    if (
        (opening.tag == "VBG" and not opening.code)
        or (
            opening.tag == "VB"
            and opening.dep == "ROOT"
            and ((not opening.code and _sentence_case(cleaned)) or _indefinite_object(parsed, opening))
        )
        or any(t.tag == "PRP$" for t in parsed.tokens)
    ):
        # a task or a tutorial's title, not a thing: "In Preparing Initial Patchset, ...", "In My First Object
        # Walk, ..." (git, development rounds 8 and 11), "In Upload new source files, ..." (drf, round 13)
        return False
    head = parsed.root
    if head.pos in ("NOUN", "PROPN") and any(
        t.dep in POSTMODIFIERS and t.head == head.index and t.index > head.index for t in parsed.tokens
    ):
        # a noun with a phrase after it describes a part of the manual, it is no name a user has: "In List of
        # Builtin Filters, ...", "In How to recover an object from scratch, ..." (the development readings: each
        # of the 8 questions placed in such a heading was broken, 56 of 170 in others; round 16)
        return False
    if head.tag == "NNS" and head.lemma in (GENERIC_NOUNS | LISTED_KINDS):
        # a section that lists entries of a kind ("Command-line Flags", "Custom marks"): "In Command-line Flags,
        # can you explain what an expression is?" names no thing (pytest, development round 12)
        return False
    return not set(re.findall(r"[a-z]+", cleaned.lower())) & MANUAL_TITLE_WORDS


def _indefinite_object(parsed: Sentence, verb: Token) -> bool:
    """A verb on "a" or "an" something: a task however it is capitalized ("Hide A Command", "Add a Shortcut"); a
    name made of a verb has a definite one ("Read the Docs"). "In Hide A Command, ..." was read as no noun phrase
    in three cmd2 readings (development round 17)."""
    obj = parsed.child(verb.index, "dobj")
    article = parsed.child(obj.index, "det") if obj is not None else None
    return article is not None and article.lemma in ("a", "an")
