"""Text operations of the offline baseline agents of multi-condition hard negatives
(deterministic, no model): picking condition sentences, the number, date and named-entity
swaps that break a condition, the misleading negation, and the lexical test of whether a
document still states a condition.

The three fit together: a swap always changes a *critical* token of the sentence (a number,
a month, a word with an antonym, a name), and the lexical judge requires every critical
token of a condition in one sentence of the document, with no negation the condition lacks.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from benchsmith.agents.text import lower_first
from benchsmith.words import STOPWORDS

PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
# A sentence ends at . ! or ? followed by space and what can start a sentence; line breaks
# inside a paragraph (wrapped text) do not end one.
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
TOKEN = re.compile(r"\d+(?:[.,:]\d+)*|\w+(?:'\w+)?", re.UNICODE)
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w]|\.\d)")
YEAR = re.compile(r"(?<![\w.])(1[5-9]\d\d|20\d\d)(?![\w]|\.\d)")
CAPITALIZED = re.compile(r"(?<=[\s(\"'])([A-Z][a-z]+(?:[A-Z][a-z]+)*)\b")
# A list marker a sentence split leaves behind: "2." or "3)" opening a sentence, or a lone
# number after the sentence's final stop ("... the mirror. 2").
LEADING_LIST_MARKER = re.compile(r"^(?:\d{1,3}[.)]|[-*+•]|#\.)\s+(?=\S)")
TRAILING_LIST_NUMBER = re.compile(r"(?<=[.!?:;])\s+\d{1,3}[.)]?\s*$")
LONE_LIST_MARKER = re.compile(r"^\s*\d{1,3}[.)]?\s*$")
HEADING_LINE_WORDS = 8
# A list item on its own line ends the sentence before it, full stop or not.
LIST_ITEM_BREAK = re.compile(r"\n(?=[ \t]*(?:[-*+•]|\d{1,3}[.)]|#\.)[ \t]+\S)")
# Sentences that tell the reader what to do state no fact of the document ("See the guide ...").
IMPERATIVE_OPENERS = frozenset(
    "see use set run read call add install note make check pass try click go refer do don't "
    "avoid consider remember ensure replace change create open visit follow type "
    "select enter".split()
)
# A past participle the antonym swap must keep a participle ("is read" → "is written", not "is write").
PARTICIPLE_ANTONYMS = {"read": "written", "written": "read"}
BE_OR_HAVE = frozenset("is are was were be been being has have had".split())
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
ANTONYMS = {
    "true": "false",
    "before": "after",
    "first": "last",
    "minimum": "maximum",
    "min": "max",
    "increase": "decrease",
    "increases": "decreases",
    "increased": "decreased",
    "above": "below",
    "larger": "smaller",
    "largest": "smallest",
    "higher": "lower",
    "highest": "lowest",
    "more": "less",
    "earlier": "later",
    "earliest": "latest",
    "always": "never",
    "enabled": "disabled",
    "enable": "disable",
    "input": "output",
    "read": "write",
    "reads": "writes",
    "start": "end",
    "upper": "lower",
    "left": "right",
    "synchronous": "asynchronous",
    "absolute": "relative",
    "local": "remote",
    "positive": "negative",
    "male": "female",
    "north": "south",
    "east": "west",
    "public": "private",
    "ascending": "descending",
    "success": "failure",
    "older": "younger",
    "oldest": "youngest",
    "long": "short",
    "longer": "shorter",
    "win": "lose",
    "won": "lost",
    "accepted": "rejected",
    "allowed": "forbidden",
    "inside": "outside",
    "internal": "external",
    "import": "export",
    "server": "client",
    "encode": "decode",
    "encoding": "decoding",
}
ANTONYMS |= {second: first for first, second in list(ANTONYMS.items())}
CONSTANTS = {"None": "False"}  # code constants in prose ("If factory is None, ..."); True and False are antonyms
NEGATIONS = frozenset(
    {
        "not",
        "no",
        "never",
        "none",
        "nor",
        "neither",
        "without",
        "cannot",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "doesn't",
        "don't",
        "didn't",
        "won't",
        "can't",
        "hardly",
    }
)
AUXILIARIES = re.compile(r"\b(is|are|was|were|can|could|may|might|will|would|should|must|does|do|did|has|have|had)\b")
# Capitalized words that are not names wherever they stand.
NOT_NAMES = frozenset(
    {
        "None",
        "True",
        "False",
        "The",
        "This",
        "That",
        "These",
        "Those",
        "It",
        "Its",
        "If",
        "When",
        "For",
        "See",
        "Note",
        "Return",
        "Returns",
        "Raise",
        "Raises",
        "An",
        "In",
        "On",
        "At",
        "By",
        "With",
        "And",
        "Or",
    }
)
# Capitalized quantifiers and determiners: they open sentences, they are never names.
CAPITALIZED_FUNCTION_WORDS = frozenset(
    "Most Many Some All Each Every Other Others Both Any Such Several Few Only "
    "Also However Usually Often Here There Then Thus Otherwise Instead".split()
)
# Markers of notes to the authors, not facts of the document.
NOTE_MARKERS = ("TODO", "FIXME", "XXX")
# Name suffixes that make a kind of their own: an exception is swapped only for an exception.
EXCEPTION_SUFFIXES = ("Error", "Exception", "Warning")
MIN_SENTENCE_CHARS, MAX_SENTENCE_CHARS, MIN_SENTENCE_WORDS = 40, 320, 6
MIN_COVERAGE = 0.75  # of a condition's content words in one sentence of the document


def normalize(text: str) -> str:
    """Whitespace runs (line breaks of wrapped text) as single spaces."""
    return " ".join(text.split())


def split_sentences(text: str) -> list[str]:
    """The document's sentences, verbatim (wrapped lines keep their line breaks): paragraphs are
    cut at blank lines, sentences at ``. ! ?`` followed by what can start a sentence."""
    found = []
    for paragraph in PARAGRAPH_BREAK.split(text):
        items = (item for block in _heading_lines_apart(paragraph) for item in LIST_ITEM_BREAK.split(block))
        for piece in (piece for item in items for piece in SENTENCE_BREAK.split(item)):
            piece = strip_list_markers(piece)
            if piece and not LONE_LIST_MARKER.match(piece):
                found.append(piece)
    return found


def _heading_lines_apart(paragraph: str) -> list[str]:
    """The paragraph cut after each heading-like line (a short line with no final punctuation
    followed by a line that starts with a capital): cleaned text keeps a heading on its own line
    right above its first sentence, and "Labels\nStale issues ..." is not one sentence."""
    blocks, current = [], []
    lines = paragraph.split("\n")
    for index, line in enumerate(lines):
        current.append(line)
        following = lines[index + 1].lstrip() if index + 1 < len(lines) else ""
        if (
            following[:1].isupper()
            and line.strip()
            and len(line.split()) <= HEADING_LINE_WORDS
            and line.rstrip()[-1] not in ".!?:;,"
        ):
            blocks.append("\n".join(current))
            current = []
    if current:
        blocks.append("\n".join(current))
    return blocks


def strip_list_markers(sentence: str) -> str:
    """``sentence`` without the list marker that opens it ("2. Install …") or the stray list
    number after its final stop ("… the mirror. 3"): neither is part of what it states, and
    a negative that changes one changes nothing a searcher asks for."""
    return TRAILING_LIST_NUMBER.sub("", LEADING_LIST_MARKER.sub("", sentence.strip())).strip()


def tokens(text: str) -> list[str]:
    """Lower-cased words and numbers (``3.4`` and ``1,000`` stay whole)."""
    return [token.lower() for token in TOKEN.findall(text)]


def content_tokens(text: str) -> set[str]:
    return {token for token in tokens(text) if token not in STOPWORDS and token not in NEGATIONS}


def names(text: str) -> list[str]:
    """Capitalized words that do not open a sentence (names, places, titles), in order; not a
    stopword ("As", "By"), and not a word the text also writes in lower case ("Configuration"
    capitalized by a heading is a common noun)."""
    lowered = set(re.findall(r"\b[a-z][a-z]+\b", text))
    found = []
    for sentence in split_sentences(text):
        found += [
            name
            for name in CAPITALIZED.findall(normalize(sentence))
            if name not in NOT_NAMES
            and name not in CAPITALIZED_FUNCTION_WORDS
            and name.lower() not in STOPWORDS
            and name.lower() not in lowered
            and not re.search(rf"\b{re.escape(name)}-\w", sentence)
        ]  # "File-like" is no name
    return list(dict.fromkeys(found))


def name_kind(name: str, context: str = "") -> str:
    """The kind a swap keeps: ``exception`` ("ValueError"), ``identifier`` (inner capitals,
    "BestCandidateResult", or written as code in ``context``: "Queue.get", "Queue(") or ``word``
    ("Lisbon"): a name is only replaced by a name of the same kind."""
    if name.endswith(EXCEPTION_SUFFIXES):
        return "exception"
    if any(character.isupper() for character in name[1:]) or (
        context and re.search(rf"(?<![\w.]){re.escape(name)}(?:\.\w|\()|`{re.escape(name)}`", context)
    ):
        return "identifier"
    return "word"


def critical_tokens(text: str) -> set[str]:
    """Tokens a swap may change: numbers, months, words with an antonym, names."""
    critical = {
        token for token in tokens(text) if token[0].isdigit() or token in ANTONYMS or token.capitalize() in CONSTANTS
    }
    return critical | {name.lower() for name in names(text)}


def negations(text: str) -> set[str]:
    return {token for token in tokens(text) if token in NEGATIONS or token.endswith("n't")}


def looks_like_prose(sentence: str) -> bool:
    """A sentence a searcher could state as a condition: long enough, a capital first, a full
    stop last, mostly letters (not code or a table row), not an instruction to the reader."""
    flat = normalize(sentence)
    letters = sum(char.isalpha() for char in flat)
    visible = sum(not char.isspace() for char in flat)
    if flat.split(maxsplit=1)[0].lower().strip(",:") in IMPERATIVE_OPENERS or any(
        marker in flat for marker in NOTE_MARKERS
    ):
        return False
    return (
        MIN_SENTENCE_CHARS <= len(flat) <= MAX_SENTENCE_CHARS
        and len(flat.split()) >= MIN_SENTENCE_WORDS
        and flat[0].isupper()
        and flat[-1] in ".!?"
        and letters >= 0.7 * visible
        and not any(marker in flat for marker in (">>>", "{", "}", "==", "::", "://"))
    )


# ---------------------------------------------------------------------------------------
# Swaps.


@dataclass(frozen=True)
class Swap:
    kind: str  # year, month, number, antonym, constant, name
    old: str
    new: str


def _case_like(word: str, model: str) -> str:
    if model.isupper() and len(model) > 1:
        return word.upper()
    return word.capitalize() if model[:1].isupper() else word


def _shifted_number(text: str, step: int) -> str:
    whole, dot, fraction = text.partition(".")
    if dot:
        return f"{whole}.{int(fraction) + step}"
    return str(int(whole) + step)


def _in_title_phrase(name: str, text: str) -> bool:
    """Is ``name`` one word of a capitalized phrase ("Version Specifier", "Release Manager")? Such
    a word is not a name of its own: swapping it alone makes "Version Lisbon". A capitalized
    function word next to it ("The GaugeClient") does not make a phrase."""
    for match in re.finditer(rf"(?:\b(\w+)[ \t]+)?\b{re.escape(name)}\b(?:[ \t]+(\w+))?", text):
        for neighbour in (match[1], match[2]):
            if (
                neighbour
                and neighbour[0].isupper()
                and neighbour not in NOT_NAMES
                and neighbour.lower() not in STOPWORDS
            ):
                return True
    return False


def _swap_kind(name: str, text: str, context: str = "") -> str:
    """:func:`name_kind`, or ``phrase`` for a word of a capitalized phrase ("Harald Olsen",
    "Version Specifier"): only another phrase word replaces it."""
    kind = name_kind(name, context)
    return "phrase" if kind == "word" and _in_title_phrase(name, text) else kind


def _pick(pool: Sequence[str], key: str) -> str:
    """One of ``pool``, chosen by a hash of ``key`` (the sentence and the name): deterministic,
    and spread over the pool, so a corpus's negatives do not all get the same replacement."""
    return pool[int(hashlib.sha256(key.encode("utf-8")).hexdigest(), 16) % len(pool)]


def swap_candidates(sentence: str, document: str = "", related: Sequence[str] = ()) -> list[Swap]:
    """Every way the baseline can break the sentence's condition, best first: a year moved,
    a month moved, a number changed, a word turned to its antonym, a name replaced by another
    name of the same kind (an identifier for an identifier, a word of a capitalized phrase for
    another, an exception for an exception, a proper noun for a proper noun) from the document
    or its ``related`` documents, never a made-up stand-in, picked by a hash of the sentence so
    that a corpus's negatives do not all get the same one. Each changes a critical token."""
    flat = normalize(strip_list_markers(sentence))  # a list number is no fact to change
    candidates: list[Swap] = []
    years = {match.group(0) for match in YEAR.finditer(flat)}
    for year in sorted(years):
        candidates.append(Swap("year", year, str(int(year) + 3)))
    for month in (name for name in names(flat) if name in MONTHS):
        candidates.append(Swap("month", month, MONTHS[(MONTHS.index(month) + 4) % 12]))
    for number in dict.fromkeys(match.group(0) for match in NUMBER.finditer(flat)):
        if number not in years:
            candidates.append(Swap("number", number, _shifted_number(number, 1)))
    words = re.findall(r"\b[A-Za-z]+\b", flat)
    for index, word in enumerate(words):
        if word.lower() in ANTONYMS:
            antonym = ANTONYMS[word.lower()]
            if index and words[index - 1].lower() in BE_OR_HAVE and word.lower() in PARTICIPLE_ANTONYMS:
                antonym = PARTICIPLE_ANTONYMS[word.lower()]
            if antonym in (other.lower() for other in words):
                continue  # "the largest range, the smallest" would then say "smallest" twice
            candidates.append(Swap("antonym", word, _case_like(antonym, word)))
        elif word in CONSTANTS:
            candidates.append(Swap("constant", word, CONSTANTS[word]))
    own = [name for name in names(flat) if name not in MONTHS and name.lower() not in ANTONYMS]
    if own:
        elsewhere = {
            (name, _swap_kind(name, normalize(sentence), text))
            for text in (document, *related)
            for known in [set(names(text))]
            for sentence in split_sentences(text)
            for name in CAPITALIZED.findall(normalize(sentence))
            if name in known and name not in own and name not in MONTHS and name.lower() not in ANTONYMS
        }
        for name in own:
            kind = _swap_kind(name, flat, f"{sentence}\n{document}")
            pool = sorted(other for other, other_kind in elsewhere if other_kind == kind)
            if pool:
                candidates.append(Swap("name", name, _pick(pool, f"{flat}\x00{name}")))
    # Only swaps that take the critical token out of the sentence (``.decode()`` is code, not a word to swap).
    return [swap for swap in candidates if swap.old.lower() not in tokens(apply_swap(flat, swap))]


def apply_swap(sentence: str, swap: Swap) -> str:
    """Every whole-word occurrence of ``swap.old`` in the sentence replaced by ``swap.new``."""
    pattern = re.compile(rf"(?<![\w.]){re.escape(swap.old)}(?![\w]|\.\d)")
    return pattern.sub(swap.new, sentence)


def negated(sentence: str, attempt: int = 1) -> str:
    """The misleading rewrite: every word kept, a negation added. First try: ``not`` after the
    first auxiliary verb; otherwise (or on a second attempt) an opening clause that denies it."""
    match = AUXILIARIES.search(sentence)
    if match and attempt == 1:
        return sentence[: match.end()] + " not" + sentence[match.end() :]
    flat = normalize(sentence)
    return f"Contrary to what is often claimed, it is not true that {lower_first(flat)}"


# ---------------------------------------------------------------------------------------
# The lexical judge.


def states(document: str, condition: str) -> bool:
    """Does ``document`` state ``condition``? One of its sentences must add no negation the
    condition lacks (the misleading rewrite keeps every word and denies them), and either hold
    the condition word for word (up to whitespace) or hold at least 75% of its content words
    and every critical token of it (numbers, months, antonym words, names)."""
    flat = normalize(condition).rstrip(".!?")
    wanted, critical, allowed = content_tokens(condition), critical_tokens(condition), negations(condition)
    for sentence in split_sentences(document):
        if negations(sentence) - allowed:
            continue
        if flat in normalize(sentence):
            return True
        present = set(tokens(sentence))
        coverage = len(wanted & present) / len(wanted) if wanted else 1.0
        if coverage >= MIN_COVERAGE and critical <= present:
            return True
    return False
