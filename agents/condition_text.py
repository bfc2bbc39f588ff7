"""Text operations of the offline baseline agents of multi-condition hard negatives
(deterministic, no model): picking condition sentences, the number, date and named-entity
swaps that break a condition, the misleading negation, and the lexical test of whether a
document still states a condition.

The three fit together: a swap always changes a *critical* token of the sentence (a number,
a month, a word with an antonym, a name), and the lexical judge requires every critical
token of a condition in one sentence of the document, with no negation the condition lacks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from benchsmith.agents.text import STOPWORDS

PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
# A sentence ends at . ! or ? followed by space and what can start a sentence; line breaks
# inside a paragraph (wrapped text) do not end one.
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
TOKEN = re.compile(r"\d+(?:[.,:]\d+)*|\w+(?:'\w+)?", re.UNICODE)
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w]|\.\d)")
YEAR = re.compile(r"(?<![\w.])(1[5-9]\d\d|20\d\d)(?![\w]|\.\d)")
CAPITALIZED = re.compile(r"(?<=[\s(\"'])([A-Z][a-z]+(?:[A-Z][a-z]+)*)\b")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
ANTONYMS = {
    "true": "false", "before": "after", "first": "last", "minimum": "maximum", "min": "max",
    "increase": "decrease", "increases": "decreases", "increased": "decreased", "above": "below",
    "larger": "smaller", "largest": "smallest", "higher": "lower", "highest": "lowest", "more": "less",
    "earlier": "later", "earliest": "latest", "always": "never", "enabled": "disabled", "enable": "disable",
    "input": "output", "read": "write", "reads": "writes", "start": "end", "upper": "lower", "left": "right",
    "synchronous": "asynchronous", "absolute": "relative", "local": "remote", "positive": "negative",
    "male": "female", "north": "south", "east": "west", "public": "private", "ascending": "descending",
    "success": "failure", "older": "younger", "oldest": "youngest", "long": "short", "longer": "shorter",
    "win": "lose", "won": "lost", "accepted": "rejected", "allowed": "forbidden", "inside": "outside",
    "internal": "external", "import": "export", "server": "client", "encode": "decode", "encoding": "decoding",
}
ANTONYMS |= {second: first for first, second in list(ANTONYMS.items())}
CONSTANTS = {"None": "False"}  # code constants in prose ("If factory is None, ..."); True and False are antonyms
NEGATIONS = frozenset({"not", "no", "never", "none", "nor", "neither", "without", "cannot", "isn't", "aren't",
                       "wasn't", "weren't", "doesn't", "don't", "didn't", "won't", "can't", "hardly"})
AUXILIARIES = re.compile(r"\b(is|are|was|were|can|could|may|might|will|would|should|must|does|do|did|has|have|had)\b")
# Capitalized words that are not names wherever they stand.
NOT_NAMES = frozenset({"None", "True", "False", "The", "This", "That", "These", "Those", "It", "Its", "If", "When", "For", "See", "Note",
                       "Return", "Returns", "Raise", "Raises", "An", "In", "On", "At", "By", "With", "And", "Or"})
# Stand-ins for a name that has no other name in its document to swap with.
FALLBACK_NAMES = ("Norway", "Lisbon", "Kyoto", "Ontario", "Harrison", "Delgado", "Okafor", "Lindqvist")
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
        found += [piece.strip() for piece in SENTENCE_BREAK.split(paragraph) if piece.strip()]
    return found


def tokens(text: str) -> list[str]:
    """Lower-cased words and numbers (``3.4`` and ``1,000`` stay whole)."""
    return [token.lower() for token in TOKEN.findall(text)]


def content_tokens(text: str) -> set[str]:
    return {token for token in tokens(text) if token not in STOPWORDS and token not in NEGATIONS}


def names(text: str) -> list[str]:
    """Capitalized words that do not open a sentence (names, places, titles), in order."""
    found = []
    for sentence in split_sentences(text):
        found += [name for name in CAPITALIZED.findall(normalize(sentence)) if name not in NOT_NAMES]
    return list(dict.fromkeys(found))


def critical_tokens(text: str) -> set[str]:
    """Tokens a swap may change: numbers, months, words with an antonym, names."""
    critical = {token for token in tokens(text) if token[0].isdigit() or token in ANTONYMS
                or token.capitalize() in CONSTANTS}
    return critical | {name.lower() for name in names(text)}


def negations(text: str) -> set[str]:
    return {token for token in tokens(text) if token in NEGATIONS or token.endswith("n't")}


def looks_like_prose(sentence: str) -> bool:
    """A sentence a searcher could state as a condition: long enough, a capital first, a full
    stop last, mostly letters (not code or a table row)."""
    flat = normalize(sentence)
    letters = sum(char.isalpha() for char in flat)
    visible = sum(not char.isspace() for char in flat)
    return (MIN_SENTENCE_CHARS <= len(flat) <= MAX_SENTENCE_CHARS and len(flat.split()) >= MIN_SENTENCE_WORDS
            and flat[0].isupper() and flat[-1] in ".!?" and letters >= 0.7 * visible
            and not any(marker in flat for marker in (">>>", "{", "}", "==", "::", "://")))


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


def swap_candidates(sentence: str, document: str = "") -> list[Swap]:
    """Every way the baseline can break the sentence's condition, best first: a year moved,
    a month moved, a number changed, a word turned to its antonym, a name replaced by another
    name of the document (or a stand-in). Each changes a critical token."""
    flat = normalize(sentence)
    candidates: list[Swap] = []
    years = {match.group(0) for match in YEAR.finditer(flat)}
    for year in sorted(years):
        candidates.append(Swap("year", year, str(int(year) + 3)))
    for month in (name for name in names(flat) if name in MONTHS):
        candidates.append(Swap("month", month, MONTHS[(MONTHS.index(month) + 4) % 12]))
    for number in dict.fromkeys(match.group(0) for match in NUMBER.finditer(flat)):
        if number not in years:
            candidates.append(Swap("number", number, _shifted_number(number, 1)))
    for word in dict.fromkeys(re.findall(r"\b[A-Za-z]+\b", flat)):
        if word.lower() in ANTONYMS:
            candidates.append(Swap("antonym", word, _case_like(ANTONYMS[word.lower()], word)))
        elif word in CONSTANTS:
            candidates.append(Swap("constant", word, CONSTANTS[word]))
    own = [name for name in names(flat) if name not in MONTHS and name.lower() not in ANTONYMS]
    if own:
        elsewhere = sorted(name for name in names(document)
                           if name not in own and name not in MONTHS and name.lower() not in ANTONYMS)
        pool = elsewhere or [stand_in for stand_in in FALLBACK_NAMES if stand_in not in own]
        for index, name in enumerate(own):
            candidates.append(Swap("name", name, pool[index % len(pool)]))
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
        return sentence[:match.end()] + " not" + sentence[match.end():]
    flat = normalize(sentence)
    return f"Contrary to what is often claimed, it is not true that {flat[0].lower()}{flat[1:]}"


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
