"""Is a benchmark question well formed? Checks that need no model, for the audit.

A question is ill-formed, noise whatever the judges say about its gold document, when

* it has no content words (``What is this?``, an empty string);
* it holds markup: a code fence, role or directive syntax (``:func:`x```, ``{ref}`x```,
  ``.. note::``, ``:orphan:``), a table row, a run of punctuation, an HTML tag;
* it quotes an empty span or markup (``What does it say about "```"?``);
* it quotes a span found in many documents of the corpus (``many_documents``, 5 by default):
  the question could be about any of them while one is labelled relevant.

Quoted spans are text in straight or curly double quotes, and in single quotes that open after
a space or the start (so apostrophes are not quotes). Content words are words of three or more
characters that are not stopwords or question words; the list is a subset of the baseline
agents' stopwords (agents/text.py), so a question the baseline counts three content words in
has at least three here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

DEFAULT_MANY_DOCUMENTS = 5
WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    "a an and are as at be by can do does did for from has have how if in into is it its of on or that the their "
    "then there these this to was what when where which who why will with you your about also not but than they "
    "them so such may might should would could".split())
MARKUP = re.compile(
    r"```|~~~"  # code fences
    r"|:[A-Za-z][\w-]*:`|\{[A-Za-z][\w-]*\}`"  # roles: :func:`x`, {ref}`x`
    r"|(^|\s)\.\.\s+[\w:-]+::|(^|\s)\.\.\s+_[\w -]+:"  # directives and targets
    r"|(^|\s):[A-Za-z][\w-]*:(?=\s|$|[?\"'])"  # field markers: :orphan:
    r"|\|\s[^|]*\s\||(^|\s)[|+][-=+]{2,}"  # table rows and borders
    r"|(?P<run>[=\-~^*#+_`|])(?P=run){2,}"  # runs of punctuation
    r"|</?[A-Za-z][\w-]*(\s[^>]*)?>"  # HTML tags
)
URL = re.compile(r"^\s*<?(https?://|www\.)\S+>?\s*$")
QUOTED = re.compile(r"\"([^\"]*)\"|“([^”]*)”|(?:(?<=\s)|^)'([^']*)'(?=[\s?.,!:;)]|$)|‘([^’]*)’")


def content_words(text: str) -> list[str]:
    """Lower-cased words of three or more characters that are not stopwords, in order."""
    return [word for word in WORD.findall(text.lower()) if len(word) >= 3 and word not in STOPWORDS]


def markup_in(text: str) -> list[str]:
    """The markup constructs in a text, as written."""
    return [match.group(0).strip() for match in MARKUP.finditer(text)]


def is_markup(span: str) -> bool:
    """Empty, punctuation only, a bare URL, or holding markup."""
    stripped = span.strip()
    return (not any(character.isalnum() for character in stripped) or bool(URL.match(stripped))
            or bool(MARKUP.search(stripped)))


def quoted_spans(question: str) -> list[str]:
    return [next(group for group in match.groups() if group is not None) for match in QUOTED.finditer(question)]


@dataclass(frozen=True)
class QuotedSpan:
    text: str
    content_words: int
    markup: bool  # empty, punctuation or markup
    documents: int | None  # documents of the corpus containing it (None: not counted)


@dataclass(frozen=True)
class QuestionForm:
    question: str
    content_words: int
    markup: tuple[str, ...]
    quoted: tuple[QuotedSpan, ...]

    def problems(self, many_documents: int = DEFAULT_MANY_DOCUMENTS) -> list[str]:
        """Why the question is ill-formed (empty: it is not)."""
        reasons = []
        if not self.content_words:
            reasons.append("no content words")
        if self.markup:
            reasons.append("markup: " + " ".join(dict.fromkeys(self.markup)))
        for span in self.quoted:
            if span.markup:
                reasons.append(f"quotes markup or an empty span: \"{span.text}\"")
            elif span.documents is not None and span.documents >= many_documents:
                reasons.append(f"quotes a span found in {span.documents} documents: \"{span.text}\"")
        return reasons


def question_form(question: str, count_documents: Callable[[str], int] | None = None) -> QuestionForm:
    """The question's content words, markup and quoted spans (with how many documents hold
    each, where ``count_documents`` is given)."""
    spans = quoted_spans(question)
    unquoted = QUOTED.sub(" ", question)
    quoted = tuple(QuotedSpan(span, len(content_words(span)), is_markup(span),
                              count_documents(span) if count_documents and not is_markup(span) else None)
                   for span in spans)
    return QuestionForm(question, len(content_words(question)), tuple(markup_in(unquoted)), quoted)


class DocumentCounter:
    """How many documents contain a span (case-insensitive, whitespace collapsed); each span
    is counted once."""

    def __init__(self, texts: Iterable[str]):
        self._texts = [_normalized(text) for text in texts]
        self._counts: dict[str, int] = {}

    def __call__(self, span: str) -> int:
        key = _normalized(span)
        if key not in self._counts:
            self._counts[key] = sum(1 for text in self._texts if key in text) if key else 0
        return self._counts[key]


def _normalized(text: str) -> str:
    return " ".join(text.lower().split())


def ill_formed_questions(questions: Mapping[str, str], count_documents: Callable[[str], int] | None = None,
                         many_documents: int = DEFAULT_MANY_DOCUMENTS) -> dict[str, list[str]]:
    """``{id: reasons}`` for the questions that are ill-formed."""
    flagged = {}
    for identifier, question in questions.items():
        reasons = question_form(question, count_documents).problems(many_documents)
        if reasons:
            flagged[identifier] = reasons
    return flagged
