"""Words: the one tokenizer, stopword lists, Snowball stemmer and content words of every layer.

It sits below graphs, agents, tools, stores and evals (all of them import it) and imports
nothing of benchsmith's, so the import rules between the layers hold.

* A *word* is a lower-cased ``\\w+`` run (Unicode letters, digits, underscore): the
  tokenization of the collection's word statistics, the clustering's keywords and the
  benchmark statistics.
* A *content word* is a word of three or more characters that is not a stopword, in order.
* A *stem* is the Snowball English stem of a word (PyStemmer), as BM25 stems it
  (tools/retrieval/bm25.py tokenizes with bm25s, whose regex and stopwords are its own, and stems with
  :func:`english_stemmer`).

Two stopword lists, one per use: :data:`STOPWORDS` for the baseline agents, which also
drops pronouns and "must", "shall", and :data:`MEASURE_STOPWORDS` for the evaluation's
measures (lexical overlap, question form), whose thresholds were calibrated with it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Collection, Iterable, Sequence

import Stemmer

WORD = re.compile(r"\w+")

# The evaluation's measures (evals/measures/lexical_overlap.py, evals/measures/question_form.py): their calibrated
# thresholds and reported values rest on this list; a subset of STOPWORDS, so a question the
# baseline agents count three content words in has at least three here.
MEASURE_STOPWORDS = frozenset(
    "a an and are as at be by can do does did for from has have how if in into is it its of on or that the their "
    "then there these this to was what when where which who why will with you your about also not but than they "
    "them so such may might should would could".split()
)

# The baseline agents' list: the measures' and pronouns, "whom", "whose", "must", "shall".
STOPWORDS = MEASURE_STOPWORDS | frozenset("whom whose he she his her we our us i me my must shall".split())

# Words a user frames a request with, whatever it is about ("Explain ...", "Give a summary of ...",
# "Compare X with Y", "Is it true that ...", "X usage example"): they say what kind of answer is wanted,
# not what it is about. The offline judges add the offline questioner's own frames to them
# (agents/question_types.py FRAME_STEMS).
REQUEST_WORDS = frozenset(
    "explain explanation describe description summary summarize summarise overview outline compare comparison "
    "difference differ versus between tell give show example usage true way possible please work "
    "actually really exactly basically good useful".split()
)


ARTICLES = frozenset({"a", "an", "the"})

# A name no English word is: "items_t", "CustomORJSONResponse", "user2", "inline_args". A name that is also a
# word ("title", "name") is the plain noun in most sentences that write it.
CODE_SHAPED = re.compile(r"_|\d|[a-z][A-Z]")

# Verbs whose object says little without what it is for: "MkDocs uses Python-Markdown" (to do what?). The
# offline questioner asks "What does X use?" only with the purpose; the quality gate flags a question
# that ends on one ("What does MkDocs use?").
LIGHT_VERBS = frozenset({"use", "have", "take", "get", "make", "give", "keep", "put"})

# Common nouns that say nothing of which one is meant: "the default", "the error", "the path", "the file".
# A documentation's own subject ("the repository" in Git's, "the browser" in a web framework's) is not among
# them: readers take it as understood. The offline questioner asks about none of them alone, and the
# quality gate flags a question that does (evals/quality_gate/question_rules.py).
UNANCHORED_NOUNS = frozenset(
    "default parent error path file minimum maximum id value variable argument parameter option workflow result "
    "output input string list name key field object item data method function command line pattern entry step "
    "case change problem issue setting example section page chunk directory folder version format type mode flag "
    "message number text content thing part source target event handler callback instance return".split()
)


def words(text: str) -> list[str]:
    """Lower-cased ``\\w+`` tokens, in order."""
    return WORD.findall(text.lower())


def content_words(text: str, stopwords: Collection[str] = STOPWORDS) -> list[str]:
    """Lower-cased words of three or more characters that are not ``stopwords``, in order."""
    return [word for word in words(text) if len(word) >= 3 and word not in stopwords]


_stemmers = threading.local()  # a PyStemmer object is not safe to share between threads: one per thread


def english_stemmer() -> Stemmer.Stemmer:
    """This thread's Snowball English stemmer."""
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = Stemmer.Stemmer("english")
    return stemmer


def stems(tokens: Iterable[str]) -> list[str]:
    """Snowball English stems ("returns" and "return" are both "return"), in order."""
    stemmed: list[str] = english_stemmer().stemWords(list(tokens))  # PyStemmer has no type information
    return stemmed


# A question that repeats this many consecutive words of its passage copies it (the reading rubric's
# "about seven or more in a row"): the offline questioner never asks one, the quality gate flags one.
COPIED_RUN = 7
# The user's voice back to the page's: "localize a theme to my favorite language" copies "to your ...".
PAGE_VOICE = {"i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself"}


def copy_words(text: str) -> list[str]:
    """The words a copy is measured on: stemmed ("support" of "supports") and in the page's voice,
    so a question that copies a sentence with its verb or pronoun changed still copies it (mkdocs,
    development readings round 5)."""
    return stems(PAGE_VOICE.get(word, word) for word in words(text))


def longest_shared_run(first: Sequence[str], second: Sequence[str]) -> int:
    """The length of the longest run of consecutive words that both word sequences hold."""
    if not first or not second:
        return 0
    positions: dict[str, list[int]] = {}
    for index, word in enumerate(second):
        positions.setdefault(word, []).append(index)
    best = 0
    previous: dict[int, int] = {}
    for word in first:
        current = {index: previous.get(index - 1, 0) + 1 for index in positions.get(word, ())}
        if current:
            best = max(best, max(current.values()))
        previous = current
    return best
