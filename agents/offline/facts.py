"""What a statement does, read from its grammar: the facts a user's question can ask for.

Each reader below looks at one parsed statement (benchsmith/language.py) and finds at most a
few facts of its kind, each with the slots its questions are worded from (agents/offline/wording.py):

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

A fact's topic is a noun phrase or an entry, never a verb phrase or a clause fragment; a slot
that would need a referent outside the statement ("it", "this", "they") is filled from the entry
the statement documents, or the fact is not taken.
"""

from __future__ import annotations

import builtins
import functools
import re
from dataclasses import dataclass
from typing import Literal

from benchsmith.entries import Statement, section_heading, short_name, statements
from benchsmith.language import REQUIREMENT, Sentence, Token, is_noun_phrase, parse_all, points_outside
from benchsmith.words import LIGHT_VERBS, UNANCHORED_NOUNS, content_words, stems

FactKind = Literal[
    "procedure",
    "condition",
    "remedy",
    "absence",
    "error",
    "definition",
    "purpose",
    "returns",
    "conditional-return",
    "parameter",
    "comparison",
    "capability",
    "default",
    "behaviour",
    "advice",
    "section",
]

DANGLING = frozenset(
    {
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "they",
        "them",
        "their",
        "he",
        "she",
        "which",
        "such",
        "former",
        "latter",
        "above",
        "below",
        "here",
        "there",
        "following",
        "none",
        "nothing",
        "something",
        "anything",
        "everything",
        "someone",
        "one",
        # comparative reference: "other providers", "another path" (other than what?)
        "other",
        "another",
        "same",
        "else",
    }
)
USER_VOICE = {
    "you": "I",
    "your": "my",
    "yours": "mine",
    "yourself": "myself",
    "we": "I",
    "our": "my",
    "us": "me",
    "ourselves": "myself",
}
CONDITION_MARKS = frozenset({"if", "when", "whenever"})
WANTING_VERBS = frozenset({"want", "need", "wish", "like", "prefer"})
# What a user does to a setting or an object: a passive of one of these states the user's action
# ("if verify is set to False" → "if I set verify to False"); of any other it states a fact.
USER_ACTIONS = frozenset(
    "set pass use call give specify enable disable configure install add remove change provide "
    "define create delete edit open close run start stop send write read load save import "
    "register override replace rename move copy update upgrade omit leave put return raise "
    "select choose apply attach mount deploy build".split()
)
# Head nouns that name nothing on their own: "one key difference", "a common form", "the only time",
# "the function" (which one?). A topic headed by one needs a name beside it ("the timeout parameter").
GENERIC_NOUNS = frozenset(
    "difference form time way thing things part parts kind type types example examples case cases number lot set "
    "list value values result results data information item items object objects function functions method "
    "methods class classes option options argument arguments parameter parameters feature features reason "
    "reasons problem problems issue issues step steps point points detail details section sections page pages "
    "document documentation user users people one ones other others rest end start beginning fact idea use "
    "note notes question questions answer answers change changes version versions default defaults".split()
)
ADVICE_WORDS = frozenset(
    {
        "practice",
        "idea",
        "recommended",
        "advisable",
        "wise",
        "best",
        "important",
        "necessary",
        "essential",
        "preferable",
        "better",
    }
)
MEANS_PREPOSITIONS = frozenset({"with", "by", "using", "via", "through"})
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
    }
)
ENABLING_VERBS = frozenset({"allow", "let", "enable", "help", "permit"})
CONTRAST_PREPOSITIONS = frozenset({"unlike", "versus", "vs"})
# "A rather than B", "A instead of B" state a choice ("raises X rather than RuntimeError"), no comparison.
CONTRAST_PHRASES = (
    ("as", "opposed", "to"),
    ("compared", "to"),
    ("compared", "with"),
    ("in", "contrast", "to"),
    ("in", "contrast", "with"),
)
# What an entry's own description calls it: "This option mirrors ...", "Use this event to ...".
SELF_NOUNS = frozenset(
    "option event setting attribute method function class property value variable command "
    "hook plugin object instance parameter argument key field flag".split()
)
# Adjectives that judge a thing rather than say what it is: "a huge drain", "a great choice".
EVALUATIVE = frozenset(
    "huge big great good bad best worst important major minor serious simple easy hard "
    "difficult nice common rare popular useful powerful".split()
)
# Determiners that quantify a subject ("many commands") rather than name it.
QUANTIFIERS = frozenset("many some most all several few various any each every".split())
# Nouns that name a relation and mean nothing without its other end ("access" to what, "support" of what).
RELATIONAL_NOUNS = frozenset(
    "access support compatibility control permission help information details integration interoperability".split()
)
# Adjectives that place a thing among others rather than say what it is: "the only information that is
# supported" (git's protocol pages, development readings round 4).
RELATIVE = frozenset("only same other first last next previous former latter".split())
# Headings that name a part of the manual, not a thing a user works with.
MANUAL_WORDS = frozenset(
    "guide usage interface introduction overview tutorial api reference change changelog history "
    "faq question documentation content index keeper community support note example release "
    "contributor contributing install installation".split()
)
DEPRECATION = re.compile(r"(?i)^\W*(?:[\w-]*deprecated\b|deprecated since|this (?:\w+ )?is deprecated)")
# Sphinx's version notes ("New in version 6.1.", "Changed in version 3.2: ..."): when, not what
VERSION_NOTE = re.compile(r"(?i)^\W*(?:new|changed|added) in (?:version )?v?\d")
HEADING_PATH = re.compile(r"\s+(?:›|»|>)\s+")
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
INTENT_VERBS = frozenset({"intend", "plan", "decide", "choose", "expect", "hope", "mean", "try", "have"})
BUILTIN_EXCEPTIONS = frozenset(name for name in dir(builtins) if name.endswith(("Error", "Exception", "Warning")))
EXCEPTION_WORDS = ("Error", "Exception", "Warning", "Exit", "Interrupt", "Timeout")
MAX_SLOT_TOKENS = 14
MIN_SLOT_TOKENS = 2


@dataclass(frozen=True)
class Fact:
    kind: FactKind
    topic: str  # what the question is about: a noun phrase or an entry's short name
    slots: tuple[tuple[str, str], ...]  # the words the questions are made of: vp, clause, entry, error, ...
    statement: int  # the position of the statement it comes from
    answer: tuple[int, ...]  # the positions of the statements that answer it, in order
    entry: str | None = None  # the qualified entry the statement documents

    def slot(self, name: str) -> str:
        return dict(self.slots)[name]

    def has(self, name: str) -> bool:
        return any(key == name for key, _ in self.slots)


@functools.lru_cache(maxsize=4096)
def passage_facts(text: str, title: str = "") -> tuple[Fact, ...]:
    """Every fact of the passage's statements, in passage order."""
    found = statements(text, title)
    parsed = parse_all([statement.text for statement in found])
    facts: list[Fact] = []
    for statement, sentence in zip(found, parsed):
        if not statement.whole or points_outside(sentence, SELF_NOUNS if statement.entry else frozenset()):
            continue  # no answer on its own: cut off, or "This flag ...", "However, ...", "as shown above"
        answer = _answer(found, parsed, statement)
        # an option's description says what the option does, in the imperative ("With --batch, follow
        # symlinks ..."): no instruction to the user, however it is worded
        describes = docstring_mood(statement, sentence) or statement.entry_kind == "option"
        for reader in ENTRY_READERS if describes else READERS:
            facts.extend(
                Fact(kind, topic, slots, statement.position, answer, statement.entry)
                for kind, topic, slots in reader(statement, sentence)
            )
    facts.extend(_section(found, title))
    return tuple(facts)


def _section(found: tuple[Statement, ...], title: str) -> list[Fact]:
    """The section the passage opens, when its heading names a thing ("Custom Headers", "Session
    Objects"), not a page of the manual ("Developer Interface", "The User Guide"): how does it work,
    answered by the section's first statements."""
    heading = section_heading(title)
    if (
        not found
        or not heading
        or found[0].text.strip() != heading
        or found[0].entry
        or len(found) < 2
        or len(HEADING_PATH.split(title)) < 2
        or ":" in heading
        or heading.endswith("?")
        or heading.isupper()
    ):
        return []
    parsed = parse_all([heading])[0]
    if parsed.tokens and (
        parsed.tokens[-1].pos not in ("NOUN", "PROPN")
        or any(token.pos not in ("NOUN", "PROPN", "ADJ", "PUNCT") for token in parsed.tokens)
    ):
        return []  # "Great themes available", "Apache as CGI": a title, not a thing's name
    if (
        not is_noun_phrase(parsed)
        or any(token.code or token.pos in ("NUM", "DET") for token in parsed.tokens)
        or len(parsed) > 4
        or any(token.lemma in MANUAL_WORDS or token.text.lower().rstrip("s") in MANUAL_WORDS for token in parsed.tokens)
    ):
        return []
    text = " ".join(statement.text for statement in found[1:])
    topic = " ".join(
        word if not word.istitle() or re.search(rf"(?<![.!?]\s)(?<!^)\b{re.escape(word)}\b", text) else word.lower()
        for word in heading.split()
    )
    plural = parsed.root.tag in ("NNS", "NNPS")
    body = [s.position for s in found[1:3] if s.whole]
    head = stems([parsed.tokens[-1].text.lower()])[0] if parsed.tokens else ""
    if not body or head not in stems(content_words(found[body[0]].text)):
        return []  # the section's first sentence is not about what its heading names
    lead = parse_all([found[body[0]].text])[0]
    if REQUIREMENT.search(lead.text) and not any(
        token.dep in ("nsubj", "nsubjpass") and stems([token.text.lower()])[0] == head for token in lead.tokens
    ):
        # a requirement of something else explains nothing: "Client Side Certificates" opening on "The
        # private key to your local certificate must be unencrypted" (requests, development round 4)
        return []
    pointer = any(token.lemma in ("find", "list", "locate") and token.tag == "VBN" for token in lead.tokens)
    # "A list of third party themes can be found in the wiki" says where, not how they work
    return [
        Fact(
            "section",
            topic,
            (("topic", topic), ("do", "do" if plural else "does"), ("where", "yes" if pointer else "")),
            body[0],
            tuple(body),
        )
    ]


def docstring_mood(statement: Statement, sentence: Sentence) -> bool:
    """A sentence of an API entry whose verb has no subject ("Return a deep copy of self", "If no
    fields exist, returns an empty list", "Cleans up adapter items"): it says what the entry does,
    not what a reader should do."""
    if statement.entry is None or not sentence.tokens:
        return False
    first, root = sentence.tokens[0], sentence.root
    if _subject(sentence, root) is None and (root.tag in ("VB", "VBZ") or root.lemma in DOCSTRING_VERBS):
        return True
    return first.lemma in DOCSTRING_VERBS or (
        first.text.endswith("s") and first.dep == "ROOT" and first.pos in ("NOUN", "PROPN", "VERB")
    )


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
            and not points_outside(parsed[s.position], SELF_NOUNS)
        ]
        return (statement.position, *following)
    return (statement.position,)


# ---------------------------------------------------------------------------------------
# Rendering spans of a parse.


def render(sentence: Sentence, indices: list[int] | range, *, user: bool = True) -> str | None:
    """The tokens' words in order, in the user's voice ("you" → "I"); None when a word needs a
    referent outside the sentence ("it", "this") or the span is no phrase."""
    words: list[str] = []
    tokens, depth = [], 0
    for i in sorted(indices):  # a parenthesis is an aside: left out
        token = sentence.tokens[i]
        depth += token.text == "("
        if not depth:
            tokens.append(token)
        depth -= token.text == ")" and depth > 0
    while tokens and tokens[-1].pos == "PUNCT":
        tokens.pop()
    while tokens and tokens[0].pos in ("PUNCT", "CCONJ"):
        tokens.pop(0)
    if not tokens:
        return None
    for position, token in enumerate(tokens):
        lower = token.text.lower()
        relative = token.tag in ("WDT", "WP") or (
            lower == "that" and token.dep in ("nsubj", "nsubjpass", "dobj", "mark")
        )
        if lower in DANGLING and not token.code and not relative:
            return None
        text = USER_VOICE.get(lower, token.text) if user and not token.code else token.text
        after_you = position and tokens[position - 1].text.lower() in ("you", "we")
        if user and lower in ("are", "were", "'re", "’re") and after_you:
            text = {"are": "am", "were": "was", "'re": "'m", "’re": "’m"}[lower]
        if lower in ("so", "such") and position and tokens[position - 1].lemma == "do":
            return None  # "after doing so": so what?
        # a space where the sentence had one, also across the tokens left out ("core.autocrlf" without)
        spaced = position < len(tokens) - 1 and any(
            sentence.tokens[k].space for k in range(token.index, tokens[position + 1].index)
        )
        words.append(text + (" " if spaced else ""))
    rendered = "".join(words).strip()
    if (
        any(rendered.count(left) != rendered.count(right) for left, right in ("()", "[]", "<>", "{}"))
        or rendered.count('"') % 2
        or len(re.findall(r"(?<!\w)'|'(?!\w)", rendered)) % 2
    ):
        return None  # a quotation or bracket cut in half
    if (
        rendered
        and tokens[0].pos in ("VERB", "AUX", "DET", "ADV", "ADP", "SCONJ", "PART")
        and not tokens[0].code
        and not tokens[0].text.isupper()
    ):
        rendered = rendered[:1].lower() + rendered[1:]  # "Return a copy" read mid-question: "return a copy"
    return rendered or None


def span(sentence: Sentence, index: int, *, without: set[int] = frozenset()) -> list[int]:  # type: ignore[assignment]
    """The indices of a token's subtree, less ``without`` and the subtrees rooted there."""
    start, end = sentence.subtree(index)
    dropped: set[int] = set()
    for removed in without:
        low, high = sentence.subtree(removed)
        dropped |= set(range(low, high))
    return [i for i in range(start, end) if i not in dropped]


def _fits(indices: list[int]) -> bool:
    return MIN_SLOT_TOKENS <= len(indices) <= MAX_SLOT_TOKENS


def noun_phrase(sentence: Sentence, token: Token, *, article: bool = False) -> str | None:
    """The noun phrase a token heads (its base chunk, or the code name), read in its sentence:
    its head a noun and no verb in it; without a leading determiner, or with "the" or "a" when
    ``article`` (a question says "What does the Response object contain?"). None for a pronoun,
    a demonstrative, or a phrase that is no thing."""
    if token.code:
        return token.text
    if token.pos not in ("NOUN", "PROPN") or not specific_noun(sentence, token):
        return None
    chunk = sentence.chunk_at(token.index)
    start, end = chunk if chunk else (token.index, token.index + 1)
    end = min(end, token.index + 1)  # the chunk ends with its head
    children = sentence.children(token.index)
    if any(
        child.dep in ("acl", "relcl") and child.index > token.index and sentence.tokens[child.index - 1].text != ","
        for child in children
    ) and any(child.dep == "det" and child.lemma == "the" for child in children):
        return None  # "the default mechanism [to read a page's source]": the clause says which one
    of_phrase = next(
        (child for child in children if child.dep == "prep" and child.lemma == "of" and child.index == token.index + 1),
        None,
    )
    if of_phrase is not None:  # "the lack [of a central group]", "the use of proxies": the whole, or nothing
        whole = span(sentence, of_phrase.index)
        if not _fits([*range(start, end), *whole]) or any(sentence.tokens[i].pos in ("VERB", "AUX") for i in whole):
            return None
        end = whole[-1] + 1
    tokens = sentence.tokens[start:end]
    if any(t.pos in ("VERB", "AUX", "PRON") and not t.code for t in tokens) or any(
        t.text.lower() in DANGLING for t in tokens
    ):
        return None
    leading = tokens[0].pos == "DET" and tokens[0].lemma in ("the", "a", "an")
    indices = list(range(start + 1 if leading else start, end))
    rendered = render(sentence, indices, user=False)
    if rendered is None:
        return None
    first = sentence.tokens[indices[0]]
    if first.pos in ("DET", "ADJ", "NUM", "ADV") and not first.code and not first.text.isupper():
        rendered = rendered[:1].lower() + rendered[1:]  # "Many commands" read mid-question: "many commands"
    if article and leading and tokens[0].lemma in ("the", "a", "an"):
        return f"{tokens[0].text.lower()} {rendered}"
    return rendered


def _subject(sentence: Sentence, verb: Token) -> Token | None:
    return sentence.child(verb.index, "nsubj", "nsubjpass", "expl")


def _is_imperative(sentence: Sentence, verb: Token) -> bool:
    return (
        verb.tag == "VB"
        and _subject(sentence, verb) is None
        and sentence.child(verb.index, "aux") is None
        and verb.lemma not in META_VERBS
    )


def _entry_name(statement: Statement) -> str | None:
    return short_name(statement.entry) if statement.entry else None


def _refers_to_entry(token: Token | None) -> bool:
    return token is not None and token.text.lower() in ("it", "this", "they") and not token.code


# ---------------------------------------------------------------------------------------
# The readers: (kind, topic, slots) per fact.

Found = list[tuple[FactKind, str, tuple[tuple[str, str], ...]]]


def _procedures(statement: Statement, sentence: Sentence) -> Found:
    found: Found = []
    for token in sentence.tokens:
        if token.pos != "VERB" or token.tag != "VB":
            continue
        marker = sentence.child(token.index, "aux")
        purpose = (
            marker is not None
            and marker.lemma == "to"
            and token.dep in ("advcl", "xcomp", "npadvmod", "ROOT")
            and (marker.index == 0 or sentence.tokens[marker.index - 1].lemma == "order")
        )
        head = sentence.tokens[token.head]
        enabled = (
            token.dep in ("xcomp", "ccomp")
            and head.lemma in ENABLING_VERBS
            and any(
                child.text.lower() in ("you", "users", "one")
                for child in [*sentence.children(head.index), *sentence.children(token.index)]
            )
            and _names_tool(sentence, _subject(sentence, head))
        ) or (token.dep in ("xcomp", "ccomp", "advcl") and head.lemma == "possible" and marker is not None)
        if not (purpose or enabled):
            continue  # "Git can help you perform a merge" and "MkDocs lets you X" say that, not how
        main = sentence.tokens[token.head] if token.dep == "advcl" else sentence.root
        if token.dep == "ROOT":  # "To X, do Y" read with X as the root: the instruction is what follows
            main = next((t for t in sentence.tokens if t.index > token.index and t.pos == "VERB"), token)
        if main.lemma in META_VERBS and _subject(sentence, main) is None:
            continue  # "To enable a translation, see the theme's documentation": a pointer, no answer
        # the purpose is the user's task as a whole ("test a theme with translations"); a clause after
        # it is not part of it
        indices = (
            [i for i in _clause_span(sentence, token) if i != (marker.index if marker else -1)]
            if purpose
            else verb_phrase(sentence, token, complement=True)
        )
        if _light_on_judgement(sentence, token):
            continue
        if _fits(indices) and _names_something(sentence, token) and (vp := render(sentence, indices)):
            found.append(("procedure", _object_topic(sentence, token) or vp, (("vp", vp),)))
    root = sentence.root
    you = _subject(sentence, root)
    means = [
        child
        for child in sentence.children(root.index)
        if (
            child.dep == "prep"
            and child.lemma in MEANS_PREPOSITIONS
            and (child.lemma != "with" or _names_code(sentence, sentence.child(child.index, "pobj"), products=True))
        )
        or (child.dep == "advcl" and any(grand.lemma == "by" for grand in sentence.children(child.index)))
    ]
    # "with" is a means when it names a tool ("with the --force option"), not "replace X with a new one"
    if (
        root.pos == "VERB"
        and means
        and (
            _is_imperative(sentence, root)
            or (you is not None and you.text.lower() == "you" and sentence.child(root.index, "aux"))
        )
        and sentence.child(root.index, "dobj") is not None
    ):  # "start by reading X" names no task
        indices = verb_phrase(sentence, root)
        if _fits(indices) and _names_something(sentence, root) and (vp := render(sentence, indices)) and not found:
            found.append(("procedure", _object_topic(sentence, root) or vp, (("vp", vp),)))
    return found


def _names_code(sentence: Sentence, token: Token | None, *, products: bool = False) -> bool:
    """A phrase that names a code thing ("the --force option", "json.dumps") or, with ``products``,
    a product ("with Gunicorn"). The project a page documents enables everything it documents:
    "MkDocs lets you X" names no how."""
    if token is None:
        return False
    low, high = sentence.subtree(token.index)
    return any(
        t.code or (t.text.startswith("-") and len(t.text) > 2) or (products and t.pos == "PROPN")
        for t in sentence.tokens[low:high]
    )


def _names_tool(sentence: Sentence, subject: Token | None) -> bool:
    """An enabler that says how: a code thing ("the --force option") or a named kind of object
    ("Session objects"); not the product itself ("Git can help you ...", "MkDocs lets you ...")."""
    if subject is None:
        return False
    return _names_code(sentence, subject) or (
        subject.pos == "NOUN"
        and any(
            child.dep == "compound" and (child.pos == "PROPN" or child.text[:1].isupper())
            for child in sentence.children(subject.index)
        )
    )


def _light_on_judgement(sentence: Sentence, verb: Token) -> bool:
    """ "to have better success": a light verb on a judgement (or on nothing) says nothing a user can name."""
    obj = sentence.child(verb.index, "dobj")
    return verb.lemma in ("have", "get", "make", "take", "give") and (
        obj is None
        or any(
            child.dep == "amod" and (child.lemma in EVALUATIVE or child.text.lower() in {"better", "more", "less"})
            for child in sentence.children(obj.index)
        )
    )


def _names_something(sentence: Sentence, verb: Token) -> bool:
    """An action on a thing a user can name: its object (or its complement's object) is no generic
    noun alone ("override the default", "move on to the next step" name nothing)."""
    obj = sentence.child(verb.index, "dobj", "attr", "dative")
    if obj is None:
        complement = next((child for child in sentence.children(verb.index) if child.dep == "prep"), None)
        obj = sentence.child(complement.index, "pobj") if complement is not None else None
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


def verb_phrase(sentence: Sentence, verb: Token, complement: bool = False) -> list[int]:
    """What a user names of an action: the verb, its particle and its object (the object's own
    modifiers kept, a relative clause dropped: "add HTTP headers", "log in"), or, without an object,
    its first complement ("connect to the server"). The rest of the sentence is how, where or
    when: the answer, not the question."""
    keep = [verb.index]
    obj = sentence.child(verb.index, "dobj", "attr", "dative")
    for child in sentence.children(verb.index):
        if child.dep == "prt":
            keep.append(child.index)
        elif child.dep in ("dobj", "attr", "oprd", "dative", "acomp"):
            keep.extend(object_span(sentence, child))
    for child in sentence.children(verb.index):
        if (
            obj is not None
            and ((child.dep == "prep" and child.lemma == "for") or child.dep in ("xcomp", "ccomp"))
            and child.index > obj.index
        ):
            keep.extend(span(sentence, child.index))  # "give a proxy for a specific host", "tell Requests to stop"
            break
    if obj is None or complement:  # what the action is on, or (with ``complement``) where it applies
        after = obj.index if obj is not None else verb.index
        following = next(
            (
                child
                for child in sentence.children(verb.index)
                if child.dep in ("prep", "xcomp", "ccomp")
                and child.index > after
                and child.lemma not in MEANS_PREPOSITIONS
            ),
            None,
        )
        if following is not None and len(range(*sentence.subtree(following.index))) <= 5:
            keep.extend(span(sentence, following.index))
    return sorted(set(keep))


def object_span(sentence: Sentence, head: Token) -> list[int]:
    """A noun's own words and its first "of" phrase ("the use of proxies"), less the rest of what
    hangs on it ("in the presence of environmental proxies", a relative clause)."""
    dropped: set[int] = set()
    first_of = True
    for child in sentence.children(head.index):
        if child.dep == "prep" and child.lemma == "of" and first_of and child.index > head.index:
            first_of = False
            continue
        if child.dep in ("prep", "relcl", "acl", "advcl", "appos", "punct", "cc", "conj"):
            dropped.add(child.index)
    return span(sentence, head.index, without=dropped)


def specific_noun(sentence: Sentence, token: Token) -> bool:
    """A head noun that names something, or a generic one with a name beside it. "the parent",
    "the error", "the path" name nothing a first question can lean on: a definite noun needs a
    modifier or an "of" phrase that says which."""
    children = sentence.children(token.index)
    definite = any(child.dep == "det" and child.lemma in ("the", "this", "that") for child in children)
    described = any(
        child.dep in ("compound", "amod", "nmod", "poss", "nummod") or (child.dep == "prep" and child.lemma == "of")
        for child in children
    )
    if definite and not described and token.text.lower() in UNANCHORED_NOUNS:
        return False  # "the ID", "the default": which one? (the quality gate's rule, benchsmith/words.py)
    if token.code or token.pos == "PROPN":
        return True
    if definite and not described:
        return False
    if token.lemma not in GENERIC_NOUNS:
        return True
    return any(
        child.dep in ("compound", "amod", "nmod")
        and (child.code or child.pos == "PROPN" or (child.lemma not in GENERIC_NOUNS and child.pos == "NOUN"))
        for child in sentence.children(token.index)
    )


def _object_topic(sentence: Sentence, verb: Token) -> str | None:
    obj = sentence.child(verb.index, "dobj", "pobj", "attr")
    return noun_phrase(sentence, obj) if obj else None


def _conditions(statement: Statement, sentence: Sentence) -> Found:
    found: Found = []
    root = sentence.root
    if root.lemma in ("raise", "throw"):
        return found  # an error's condition (_errors)
    for clause in sentence.tokens:
        mark = _condition_mark(sentence, clause)
        if clause.dep != "advcl" or clause.head != root.index or mark is None or mark.lemma not in CONDITION_MARKS:
            continue
        subject = _subject(sentence, clause)
        if subject is None:
            continue
        wanted = sentence.child(clause.index, "xcomp")
        if subject.text.lower() in ("you", "we") and clause.lemma in WANTING_VERBS and wanted is not None:
            # "If you want to add cookies, ..." asks how to add cookies; "see gitrevisions(7) if you want to
            # see more complex cases" only points elsewhere (git's tutorial, development readings round 4)
            if (
                (root.lemma in META_VERBS and _subject(sentence, root) is None)
                or not _names_something(sentence, wanted)
                or _light_on_judgement(sentence, wanted)
            ):  # "if you want to have better success" (mkdocs, round 5)
                continue
            marker = sentence.child(wanted.index, "aux")
            indices = [i for i in _clause_span(sentence, wanted) if not marker or i != marker.index]
            if _fits(indices) and (vp := render(sentence, indices)):
                found.append(("procedure", _object_topic(sentence, wanted) or vp, (("vp", vp),)))
            continue
        if (
            clause.lemma in INTENT_VERBS
            or clause.lemma in WANTING_VERBS | {"require"}
            or (root.lemma in META_VERBS and _subject(sentence, root) is None)
            or any(
                child.dep == "aux"
                and child.lemma in ("have", "would", "can", "could", "may", "might", "should", "must")
                for child in sentence.children(clause.index)
            )
        ):
            continue  # "if you intend to X, ... is required", "if it fails, see ...", "if it had been ..."
        if clause.tag == "VBD":
            continue  # "when you installed MkDocs": a past event, not a condition to ask about
        condition = condition_clause(sentence, clause, mark)
        if condition is None:
            continue
        slots: tuple[tuple[str, str], ...] = (
            ("clause", condition),
            ("mark", "when" if mark.lemma == "whenever" else mark.lemma),
        )
        if docstring_mood(statement, sentence):
            if root.lemma in ("return", "returns", "yield") and statement.entry:
                found.append(
                    (
                        "conditional-return",
                        _entry_name(statement) or condition,
                        (*slots, ("entry", _entry_name(statement) or "")),
                    )
                )
            continue
        if _detail_of_setting(statement, sentence):
            continue
        person = subject.text.lower() in ("you", "we")
        if (person and clause.lemma == "be") or (not person and noun_phrase(sentence, subject) is None):
            continue  # "if you are new to X", "if the function returns": what it is about is unclear
        topic = noun_phrase(sentence, subject) or condition
        modal = sentence.child(root.index, "aux")
        advising = (
            _is_imperative(sentence, root)
            or (
                _subject(sentence, root) is not None
                and _subject(sentence, root).text.lower() == "you"
                and modal is not None
            )
            or (modal is not None and modal.lemma in ("must", "should"))
            or root.lemma in ("need", "require")
            or any(child.lemma == "required" for child in sentence.children(root.index))
        )
        kind: FactKind = "remedy" if advising else "condition"
        if kind == "remedy" and (
            sentence.child(root.index, "neg") or any(child.lemma == "never" for child in sentence.children(root.index))
        ):
            continue  # "If you use gh-deploy, never edit ...": a warning, not what to do
        if kind == "condition" and (affected := _affected(sentence, root, condition)):
            slots = (*slots, ("affected", affected))
        found.append((kind, topic, slots))
    first = sentence.tokens[0] if sentence.tokens else None
    if first is not None and first.lemma == "without" and first.head == root.index and root.pos in ("VERB", "AUX"):
        lacking = sentence.child(first.index, "pobj")
        thing = noun_phrase(sentence, lacking, article=True) if lacking else None
        if thing:
            found.append(("absence", thing, (("thing", thing),)))
    return found


def _detail_of_setting(statement: Statement, sentence: Sentence) -> bool:
    """A condition in an entry's description (a setting, an option, a function) that does not name
    the entry ("[merge.verbosity] ... if conflicts were detected"; "[aifc] ... if the setpos() method
    is not used"): asked alone it leaves out what it is about, and the page's name is no help ("In
    git config, what should I expect if conflicts were detected?": git and stdlib development
    readings, rounds 5-7). The entry's own questions ask about it."""
    if not statement.entry:
        return False
    name = short_name(statement.entry)
    return (
        not any(token.code and (token.text == name or token.text.endswith(name)) for token in sentence.tokens)
        and name not in sentence.text
    )


# The heads of noun phrases that name one setting of something: "the json parameter", "the timeout option".
SETTING_NOUNS = frozenset(
    "parameter argument option flag setting variable header field attribute key hook value keyword".split()
)


def _affected(sentence: Sentence, root: Token, condition: str) -> str | None:
    """What a condition changes, when the sentence names it and the condition does not: "the json
    parameter is ignored if data or files is passed" asks "What happens to the json parameter if
    I pass data or files?", not what happens at all (which reads as if passing data did nothing
    else; readers of the development half call such questions unaskable). A code name, or a
    setting named by a compound ("the json parameter"); None for a person, a pronoun, a quantity
    ("all submodules") or a thing the condition already names."""
    subject = _subject(sentence, root)
    if subject is None or subject.dep == "expl" or root.lemma == "be":
        return None  # "--ff is the default if ...": what it is, not what happens to it
    children = sentence.children(subject.index)
    if any(child.lemma in ("all", "each", "every", "any", "some", "no", "both") for child in children):
        return None
    named = subject.code or (
        subject.lemma in SETTING_NOUNS and any(child.dep == "compound" or child.code for child in children)
    )
    phrase = noun_phrase(sentence, subject, article=True) if named else None
    if not phrase or set(content_words(phrase)) & set(content_words(condition)):
        return None
    return phrase


def _condition_mark(sentence: Sentence, clause: Token) -> Token | None:
    """The word that makes a clause a condition: "if" is a marker; "when" the parser often takes for
    an adverb of the clause's verb ("A crossing is cancelled when the swell exceeds two metres")."""
    mark = sentence.child(clause.index, "mark")
    if mark is not None:
        return mark
    first = sentence.tokens[sentence.subtree(clause.index)[0]]
    return (
        first if first.dep == "advmod" and first.head == clause.index and first.lemma in ("when", "whenever") else None
    )


def condition_clause(sentence: Sentence, verb: Token, mark: Token) -> str | None:
    """A condition as a user states it: its core (subject, verb, objects, first complement; no
    adverbs, asides or relative clauses), a passive without its agent turned into what the user
    does ("verify is set to False" → "I set verify to False")."""
    dropped = {
        child.index
        for child in sentence.children(verb.index)
        if child.dep in ("advmod", "parataxis", "appos") and child.index > mark.index
    }
    # "multiple times" (npadvmod) stays: "if --group is specified multiple times" is another condition
    preps = [child for child in sentence.children(verb.index) if child.dep in ("prep", "agent")]
    dropped |= {child.index for child in preps[1:]}
    indices = [i for i in _clause_span(sentence, verb) if i != mark.index]
    indices = [i for i in indices if not any(i in range(*sentence.subtree(d)) for d in dropped)]
    subject = sentence.child(verb.index, "nsubjpass")
    passive = (
        subject is not None
        and sentence.child(verb.index, "auxpass") is not None
        and verb.tag == "VBN"
        and not sentence.child(verb.index, "agent")
        and not sentence.child(verb.index, "aux")
        and verb.lemma in USER_ACTIONS
        and not any(child.dep in ("conj", "cc", "preconj") for child in sentence.children(verb.index))
    )
    # "if X is either not set or empty" stays as written: "if I don't set X empty" garbles it
    if not passive:
        return render(sentence, indices) if _fits(indices) else None
    auxiliaries = {child.index for child in sentence.children(verb.index) if child.dep in ("auxpass", "aux", "neg")}
    thing = [i for i in indices if i in range(*sentence.subtree(subject.index))]
    rest = [i for i in indices if i > verb.index and i not in thing and i not in auxiliaries]
    object_text, rest_text = render(sentence, thing), render(sentence, rest) if rest else ""
    if object_text is None or rest_text is None or not _fits([*thing, verb.index, *rest]):
        return None
    negated = sentence.child(verb.index, "neg") is not None  # "if X is not set" → "if I don't set X"
    return " ".join(part for part in ("I", "don't" if negated else "", verb.lemma, object_text, rest_text) if part)


def _clause_span(sentence: Sentence, head: Token) -> list[int]:
    """A clause's tokens up to the first comma after its head (what follows is another clause:
    "if the hook existed, False if not")."""
    indices = span(sentence, head.index)
    cut = next((i for i in indices if i > head.index and sentence.tokens[i].text in (",", ";", ":", "–", "—")), None)
    return [i for i in indices if cut is None or i < cut]


def _errors(statement: Statement, sentence: Sentence) -> Found:
    found: Found = []
    for verb in sentence.tokens:
        if verb.lemma not in ("raise", "throw") or verb.pos not in ("VERB",):
            continue
        subject = _subject(sentence, verb)
        obj = sentence.child(verb.index, "dobj")
        if subject is not None and subject.dep == "nsubjpass":
            error = _error_name(sentence, subject)
            raiser = _entry_name(statement)
        else:
            error = _error_name(sentence, obj) if obj else None
            raiser = (
                _entry_name(statement)
                if subject is None or _refers_to_entry(subject)
                else noun_phrase(sentence, subject)
            )
        if not error or (raiser is None and error in BUILTIN_EXCEPTIONS):
            continue  # "Why would I get a ValueError?": every page that raises one answers it
        slots = (("error", error), *((("raiser", raiser),) if raiser else ()))
        found.append(("error", raiser or error, slots))
    return found


def _error_name(sentence: Sentence, token: Token) -> str | None:
    """An exception's name ("ValueError", "a TooManyRedirects exception" → "TooManyRedirects")."""
    if token.code or token.text.endswith(EXCEPTION_WORDS):
        return (
            token.text
            if token.text.endswith(EXCEPTION_WORDS) or token.lemma in ("exception", "error") or token.code
            else None
        )
    if token.lemma in ("exception", "error", "warning"):
        named = next(
            (
                child
                for child in sentence.children(token.index)
                if child.dep == "compound" and (child.code or child.pos == "PROPN")
            ),
            None,
        )
        return named.text if named else None
    return None


def _definitions(statement: Statement, sentence: Sentence) -> Found:
    """ "Blueprints are a way to organize views", "X refers to Y": a present-tense statement of what a
    named thing is. Not one that says how good it is ("a huge drain"), a value ("is None"), a
    subject narrowed by a clause ("Character sequences that match ... are"), or a past ("was new")."""
    root = sentence.root
    subject = _subject(sentence, root)
    if subject is None or subject.dep != "nsubj" or sentence.child(root.index, "neg", "aux"):
        return []
    is_copula = root.lemma == "be" and root.tag in ("VBZ", "VBP") and sentence.child(root.index, "attr") is not None
    defining = root.lemma in ("mean", "refer", "represent", "denote") and root.tag in ("VBZ", "VBP")
    if not (is_copula or defining) or sentence.child(root.index, "mark") or subject.index > root.index:
        return []
    if any(
        child.dep in ("relcl", "acl") or (defining and child.dep == "prep")
        for child in sentence.children(subject.index)
    ):
        return []  # "The lack of a central group means ...": a consequence, not what a term means
    attr = sentence.child(root.index, "attr")
    if is_copula and attr is not None:
        article = sentence.child(attr.index, "det")
        evaluative = any(
            child.dep == "amod" and child.lemma in EVALUATIVE | RELATIVE for child in sentence.children(attr.index)
        )
        if attr.pos != "NOUN" or article is None or article.lemma not in ("a", "an", "the") or evaluative:
            return []
    if _refers_to_entry(subject) and statement.entry:
        topic = _entry_name(statement)
    else:
        topic = noun_phrase(sentence, subject, article=True)
    if not topic:
        return []
    plural = subject.tag in ("NNS", "NNPS") and not subject.code
    return [("definition", _bare(topic), (("thing", topic), ("plural", "yes" if plural else "")))]


def _bare(phrase: str) -> str:
    """A noun phrase without its article ("the connect timeout" → "connect timeout")."""
    first, _, rest = phrase.partition(" ")
    return rest if first.lower() in ("the", "a", "an") and rest else phrase


def _entries(statement: Statement, sentence: Sentence) -> Found:
    name = _entry_name(statement)
    if not name or statement.entry_kind is None:
        return []
    found: Found = []
    slots = (("entry", name), ("entry_kind", statement.entry_kind), ("owner", statement.owner or ""))
    opening = sentence.tokens[0] if sentence.tokens else None
    if (
        statement.role == "first"
        and opening is not None
        and opening.pos not in ("SCONJ", "ADP")
        and opening.lemma not in ("default", "defaults")
        and not DEPRECATION.match(statement.text)
        and not VERSION_NOTE.match(statement.text)
    ):
        # "After receiving the pack, receive-pack may ...", "Defaults to 64", "Soft-deprecated, prefer
        # src_uris", "New in version 6.1.": a circumstance, a default, a deprecation or a version, not what
        # the entry is for
        intent = opening.lemma in ("intend", "useful", "use", "mean", "helpful")  # "Intended to speed up ..."
        found.append(("purpose", name, (*slots, ("why", "yes" if intent else ""))))
    if statement.role == "returns" or (
        sentence.tokens
        and sentence.tokens[0].lemma in ("return", "returns", "yield")
        and statement.entry_kind in ("function", "method", "classmethod", "staticmethod")
    ):
        found.append(("returns", name, slots))
    if statement.role == "parameter" and statement.parameter and statement.parameter not in ("args", "kwargs"):
        found.append(("parameter", statement.parameter, (*slots, ("parameter", statement.parameter))))
    return found


def _comparisons(statement: Statement, sentence: Sentence) -> Found:
    lowered = [token.lemma for token in sentence.tokens]
    marker = next((token for token in sentence.tokens if token.lemma in CONTRAST_PREPOSITIONS), None)
    if marker is None:
        for phrase in CONTRAST_PHRASES:
            for start in range(len(lowered) - len(phrase) + 1):
                if tuple(lowered[start : start + len(phrase)]) == phrase:
                    marker = sentence.tokens[start + len(phrase) - 1]
                    break
            if marker:
                break
    if marker is None:
        return []
    other = next((token for token in sentence.children(marker.index) if token.dep == "pobj"), None)
    if other is None:
        other = next((token for token in sentence.tokens[marker.index + 1 :] if token.pos in ("NOUN", "PROPN")), None)
    root = sentence.root
    first = _subject(sentence, root) or sentence.child(root.index, "dobj")
    if other is None or first is None:
        return []
    if not all(token.code or token.pos == "PROPN" for token in (first, other)):
        return []  # "these instead of socket objects": two things a user names, or no comparison
    a, b = noun_phrase(sentence, first), noun_phrase(sentence, other)
    if not a or not b or a.lower() == b.lower() or a.lower().endswith(b.lower()) or b.lower().endswith(a.lower()):
        return []
    return [("comparison", a, (("a", a), ("b", b)))]


def _capabilities(statement: Statement, sentence: Sentence) -> Found:
    root = sentence.root
    if root.pos != "VERB" or root.tag != "VB":
        return []
    modal = sentence.child(root.index, "aux")
    if modal is None or modal.lemma not in ("can", "could"):
        return []
    subject = _subject(sentence, root)
    if subject is None:
        return []
    indices = verb_phrase(sentence, root, complement=True)
    if any(child.dep == "advmod" and child.lemma in ("also", "even", "too") for child in sentence.children(root.index)):
        # "You can also include your Markdown files in nested directories": what is new is where
        obj = sentence.child(root.index, "dobj")
        heads = [root.index, *([obj.index] if obj is not None else [])]
        indices = sorted(
            {
                *indices,
                *(
                    i
                    for head in heads
                    for child in sentence.children(head)
                    if child.dep == "prep" and child.index > head
                    for i in span(sentence, child.index)
                ),
            }
        )
    if not _fits(indices) or not (vp := render(sentence, indices)):
        return []
    if subject.text.lower() in ("you", "users", "one", "we"):
        return (
            [("capability", _object_topic(sentence, root) or vp, (("vp", vp),))]
            if _names_something(sentence, root)
            else []
        )
    if not _names_something(sentence, root) or any(
        child.dep in ("det", "amod") and child.lemma in QUANTIFIERS for child in sentence.children(subject.index)
    ):
        return []  # "Many commands can output pathnames": no thing a user names (git, development round 5)
    owner = (
        _entry_name(statement)
        if _refers_to_entry(subject) and statement.entry
        else noun_phrase(sentence, subject, article=True)
    )
    plural = subject.tag in ("NNS", "NNPS") and not subject.code
    return (
        [("capability", _bare(owner), (("vp", vp), ("owner", owner), ("is", "are" if plural else "is")))]
        if owner
        else []
    )


def _predicate(sentence: Sentence, verb: Token) -> list[int]:
    """The verb with its objects and complements, less its subject, auxiliaries, negation,
    conjoined and subordinate clauses and sentence adverbs."""
    drop = {
        child.index
        for child in sentence.children(verb.index)
        if child.dep
        in (
            "nsubj",
            "nsubjpass",
            "aux",
            "auxpass",
            "neg",
            "punct",
            "advmod",
            "cc",
            "conj",
            "mark",
            "advcl",
            "parataxis",
            "npadvmod",
            "dep",
            "expl",
        )
    }
    return [i for i in span(sentence, verb.index, without=drop) if i not in drop]


def _behaviours(statement: Statement, sentence: Sentence) -> Found:
    """ "Requests automatically decompresses gzip-encoded responses", "The Response object contains
    all of the information" → what does S V / does S V O."""
    root = sentence.root
    will = sentence.child(root.index, "aux")
    if (
        root.pos != "VERB"
        or (root.tag not in ("VBZ", "VBP") and not (root.tag == "VB" and will is not None and will.lemma == "will"))
        or root.lemma in ("be", "have", "do", "raise", "throw")
        or root.lemma in ENABLING_VERBS
        or root.lemma in META_VERBS
    ):
        return []
    subject = _subject(sentence, root)
    obj = sentence.child(root.index, "dobj")
    if (
        subject is None
        or subject.dep != "nsubj"
        or obj is None
        or subject.index > root.index
        or any(child.lemma == "no" for child in sentence.children(obj.index))
        or not _names_something(sentence, root)
        or sentence.child(subject.index, "conj")
    ):  # "octopus and resolve vivify": not octopus alone
        return []
    if _refers_to_entry(subject) and statement.entry:
        owner, plural = _entry_name(statement), False
    elif (
        subject.code
        or subject.pos == "PROPN"
        or any(child.code or child.pos == "PROPN" for child in sentence.children(subject.index))
        or _described_thing(sentence, subject)
        or _heading_thing(sentence, subject, statement)
    ):
        # the verb agrees with its subject: "Requests decompresses" is one thing, "Blueprints record" several
        owner, plural = noun_phrase(sentence, subject, article=True), root.tag == "VBP"
        if owner is None and _heading_thing(sentence, subject, statement):
            owner = f"the {subject.text}"  # the heading says which: "the audit" under "Audit"
    else:
        return []
    if not owner or sentence.child(root.index, "neg"):
        return []
    purpose = next(
        (
            child
            for child in sentence.children(root.index)
            if child.dep in ("advcl", "xcomp")
            and child.index > obj.index
            and (marker := sentence.child(child.index, "aux")) is not None
            and marker.lemma == "to"
        ),
        None,
    )
    aim = render(sentence, span(sentence, purpose.index)) if purpose and _fits(span(sentence, purpose.index)) else None
    if root.lemma in LIGHT_VERBS and aim is None:
        return []  # "What does MkDocs use?": uses for what? ("... use to render Markdown?" says)
    indices = verb_phrase(sentence, root)
    rest = render(sentence, [i for i in indices if i != root.index]) if _fits(indices) else None
    slots = (("owner", owner), ("verb", root.lemma), ("does", "do" if plural else "does"), ("aim", aim or ""))
    return [("behaviour", _bare(owner), (*slots, *((("rest", rest),) if rest else ())))]


def _heading_thing(sentence: Sentence, noun: Token, statement: Statement) -> bool:
    """ "The audit" in a section headed "Audit": the thing the section is about, named by its heading."""
    heading = statement.heading if hasattr(statement, "heading") else ""
    return (
        bool(heading)
        and noun.pos == "NOUN"
        and noun.lemma not in GENERIC_NOUNS
        and any(child.dep == "det" and child.lemma == "the" for child in sentence.children(noun.index))
        and noun.lemma
        in {word.lower().rstrip("s") for word in heading.split()} | {word.lower() for word in heading.split()}
    )


def _described_thing(sentence: Sentence, noun: Token) -> bool:
    """A definite common noun with a modifier that says which: "the ferry planner", "the tide
    predictor"; not "the maintainer" or "passengers"."""
    children = sentence.children(noun.index)
    return (
        noun.pos == "NOUN"
        and noun.lemma not in GENERIC_NOUNS
        and any(child.dep == "det" and child.lemma == "the" for child in children)
        and any(child.dep in ("compound", "amod") and child.lemma not in EVALUATIVE for child in children)
    )


def _advice(statement: Statement, sentence: Sentence) -> Found:
    """ "It's a good practice to set connect timeouts to ..." → how should I set connect timeouts."""
    root = sentence.root
    if root.lemma != "be" or not sentence.child(root.index, "expl", "nsubj"):
        return []
    judged = sentence.child(root.index, "attr", "acomp", "dobj")
    if judged is None or (
        judged.lemma not in ADVICE_WORDS
        and not any(child.lemma in ADVICE_WORDS for child in sentence.children(judged.index))
    ):
        return []
    action = next(
        (
            token
            for token in sentence.tokens
            if token.dep in ("xcomp", "ccomp", "acl", "relcl") and token.tag == "VB" and token.pos == "VERB"
        ),
        None,
    )
    if action is None:
        return []
    obj = sentence.child(action.index, "dobj")
    indices = [action.index, *([i for i in span(sentence, obj.index)] if obj else [])]
    particle = sentence.child(action.index, "prt")
    indices = sorted({*indices, *([particle.index] if particle else [])})
    vp = render(sentence, indices) if _fits(indices) else None
    return [("advice", _object_topic(sentence, action) or vp, (("vp", vp),))] if vp else []


def _defaults(statement: Statement, sentence: Sentence) -> Found:
    verb = next((token for token in sentence.tokens if token.lemma == "default" and token.pos == "VERB"), None)
    if verb is None:
        return []
    subject = _subject(sentence, verb)
    if subject is None and statement.role == "parameter" and statement.parameter:
        owner = statement.parameter  # "(optional) Defaults to True" under a parameter
    elif subject is None:
        owner = _entry_name(statement)
    else:
        owner = noun_phrase(sentence, subject)  # never "it": which of the entry's things defaults?
    return [("default", owner, (("owner", owner),))] if owner else []


def _named_uses(statement: Statement, sentence: Sentence) -> Found:
    """What a code name is for, where a sentence names it with its use: "Use --llm openai:<model>
    for real conversations", "Use json.loads to read a document" (what is X for?), and
    "--dry-run prints calls and cost first" (what does X do?: the parser often takes the verb after
    a code name for a noun)."""
    tokens = [token for token in sentence.tokens if token.pos != "PUNCT"]
    if len(tokens) < 4 or statement.entry:
        return []
    first, second = tokens[0], tokens[1]
    if (
        first.code
        and first.text.startswith("-")
        and second.text.lower().endswith("s")
        and second.text.isalpha()
        and second.text.islower()
        and second.lemma not in LIGHT_VERBS
        and second.pos in ("VERB", "NOUN")
        and second.tag in ("VBZ", "NNS")
    ):
        return [
            (
                "purpose",
                first.text,
                (("entry", first.text), ("entry_kind", _code_kind(first.text)), ("owner", ""), ("why", "")),
            )
        ]
    if (
        first.text.lower() == "use"
        and second.code
        and any(  # (the tagger may call "Use" a name)
            token.text.lower() in ("for", "to", "when") for token in tokens[2:]
        )
    ):
        return [
            (
                "purpose",
                second.text,
                (("entry", second.text), ("entry_kind", _code_kind(second.text)), ("owner", ""), ("why", "")),
            )
        ]
    return []


def _code_kind(name: str) -> str:
    """An entry kind from a code name's form: an option, a call, else a name."""
    return "option" if name.startswith("-") else "function" if name.endswith(")") else "name"


READERS = (
    _procedures,
    _conditions,
    _errors,
    _definitions,
    _entries,
    _comparisons,
    _capabilities,
    _defaults,
    _behaviours,
    _advice,
    _named_uses,
)
ENTRY_READERS = (_conditions, _errors, _entries, _defaults)  # a docstring's sentence: what the entry does
