"""Is a benchmark question well formed? Checks that need no model, for the audit.

A question is ill-formed, noise whatever the judges say about its gold document, when

* it has no content words (``What is this?``, an empty string);
* it holds markup: a code fence, role or directive syntax (``:func:`x```, ``{ref}`x```,
  ``.. note::``, ``:orphan:``), a table row, a run of punctuation, an HTML tag;
* it quotes an empty span or markup (``What does it say about "```"?``);
* it quotes a span found in many documents of the corpus (``many_documents``, 5 by default):
  the question could be about any of them while one is labelled relevant;
* it is a heading path: any ``›``, or `` > `` before a capitalised word
  (``In Issue Triage › Triage Issues › Reaching resolution, how may a user be having?``);
* it fills a keyword template instead of asking: ``What does the … documentation say about
  X and Y?``, ``What should I know about X?``, ``Tell me about X``, or asks about a page as a
  whole, which any page answers (``What does the encodings.cp424 documentation cover?``,
  ``What else does X explain?``, ``What other details does X give?``, ``What more can I learn
  from X?``);
* it holds a leftover of markup or cleaning: an intersphinx target in angle brackets
  (``version specifiers <pypug:Version Specifier>``), an intersphinx prefix glued to a word
  (``pypug:Version``), a MyST label (``(name)=``), a redirect stub's ``now covered``;
* it is a fragment. A standalone question (one without conversational history) needs at
  least three content words (``MIN_CONTENT_WORDS``): ``Is command on CLI?`` has two; one naming a
  code entry needs two (``What does json.dumps do?``: the name says what it is about). A yes/no
  question must have a verb phrase: a copula, one or two words without a determiner, then
  straight a preposition and at most two words (``Is command on CLI?``), or an auxiliary with
  at most two words after it (``Does the flag?``), has none. A follow-up turn (``And its timeout?``) leans on its history, so for it
  only the no-content-words rule applies.

Quoted spans are text in straight or curly double quotes, and in single quotes that open after
a space or the start (so apostrophes are not quotes). Content words are words of three or more
characters that are not stopwords or question words (``MEASURE_STOPWORDS``, benchsmith/words.py,
a subset of the baseline agents' stopwords, so a question the baseline counts three content
words in has at least three here).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

from benchsmith.words import MEASURE_STOPWORDS, content_words

DEFAULT_MANY_DOCUMENTS = 5
MIN_CONTENT_WORDS = 3  # of a standalone question; one less when it names a code entry
CODE_NAME = re.compile(
    r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|\w\(\)|(?<![\w.])[a-z]+_[a-z_]\w*"
    r"|(?<![\w.])--?[a-z][\w-]+|(?<![\w.])[A-Z][a-z]+[A-Z]\w*"
)
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
HEADING_PATH = re.compile(r"›|\s>\s+(?=[A-Z])")
KEYWORD_TEMPLATE = re.compile(
    r"^\s*(what\s+does\s+the\s+.{0,80}?\s*documentation\s+say\s+about\b"
    r"|what\s+(should|do|does|must)\s+(i|we|you|one)\s+(need\s+to\s+)?know\s+about\b"
    r"|tell\s+me\s+(more\s+)?about\b"
    # a page as a whole: any page answers these
    r"|what\s+(else\s+)?does\s+.{1,80}?\s+(cover|explain)\s*\??\s*$"
    r"|what\s+(other|further)\s+details\s+does\b"
    r"|what\s+more\s+can\s+(i|we|you|one)\s+learn\s+from\b"
    r"|which\s+further\s+points\s+does\b)",
    re.IGNORECASE,
)
LEFTOVER = re.compile(
    r"<[\w.-]+:[^<>]*>"  # an intersphinx target: <pypug:Version Specifier>
    r"|(?<![\w:/.])[a-z][\w-]*:(?=[A-Za-z])(?!//)"  # an intersphinx prefix glued to its word: pypug:Version
    r"|\([\w.:-]+\)="  # a MyST label: (name)=
    r"|\bnow\s+covered\b",
    re.IGNORECASE,
)  # a redirect stub: "... is now covered in ..."
COPULA_FRAGMENT = re.compile(
    r"^\s*(is|are|was|were)\s+(?!(the|a|an|this|that|these|those|it|its|my|your|our|their|there)\s)"
    r"(\S+\s+){1,2}(on|in|at|for|with|under|from|by|of|to)\s+\S+(\s+\S+)?\s*\?\s*$",
    re.IGNORECASE,
)
AUXILIARY_FRAGMENT = re.compile(
    r"^\s*(do|does|did|can|could|will|would|should|must)(\s+[^\s?]+){0,2}\s*\?\s*$", re.IGNORECASE
)
QUOTED = re.compile(r"\"([^\"]*)\"|“([^”]*)”|(?:(?<=\s)|^)'([^']*)'(?=[\s?.,!:;)]|$)|‘([^’]*)’")


def measured_content_words(text: str) -> list[str]:
    """The content words the measures count: :data:`MEASURE_STOPWORDS` dropped."""
    return content_words(text, MEASURE_STOPWORDS)


def markup_in(text: str) -> list[str]:
    """The markup constructs in a text, as written."""
    return [match.group(0).strip() for match in MARKUP.finditer(text)]


def is_markup(span: str) -> bool:
    """Empty, punctuation only, a bare URL, or holding markup."""
    stripped = span.strip()
    return (
        not any(character.isalnum() for character in stripped)
        or bool(URL.match(stripped))
        or bool(MARKUP.search(stripped))
    )


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
    heading_path: bool = False
    template: bool = False
    leftovers: tuple[str, ...] = ()
    yes_no_fragment: bool = False
    follow_up: bool = False  # a conversational turn with history: short is fine
    names_code: bool = False  # it names a code entry ("What does json.dumps do?"): the name says what it is about

    @property
    def needed_content_words(self) -> int:
        return MIN_CONTENT_WORDS - 1 if self.names_code else MIN_CONTENT_WORDS

    def problems(self, many_documents: int = DEFAULT_MANY_DOCUMENTS) -> list[str]:
        """Why the question is ill-formed (empty: it is not)."""
        reasons = []
        if not self.content_words:
            reasons.append("no content words")
        elif self.content_words < self.needed_content_words and not self.follow_up:
            reasons.append(
                f"fragment: {self.content_words} content word{'s' * (self.content_words != 1)} "
                f"(a standalone question needs {self.needed_content_words})"
            )
        if self.yes_no_fragment:
            reasons.append("fragment: a yes/no question with no verb phrase")
        if self.heading_path:
            reasons.append("heading path")
        if self.template:
            reasons.append("keyword template")
        if self.leftovers:
            reasons.append("markup leftover: " + " ".join(dict.fromkeys(self.leftovers)))
        if self.markup:
            reasons.append("markup: " + " ".join(dict.fromkeys(self.markup)))
        for span in self.quoted:
            if span.markup:
                reasons.append(f'quotes markup or an empty span: "{span.text}"')
            elif span.documents is not None and span.documents >= many_documents:
                reasons.append(f'quotes a span found in {span.documents} documents: "{span.text}"')
        return reasons


def question_form(
    question: str, count_documents: Callable[[str], int] | None = None, follow_up: bool = False
) -> QuestionForm:
    """The question's content words, markup, quoted spans (with how many documents hold each,
    where ``count_documents`` is given) and template forms; ``follow_up``: the turn has history."""
    spans = quoted_spans(question)
    unquoted = QUOTED.sub(" ", question)
    quoted = tuple(
        QuotedSpan(
            span,
            len(measured_content_words(span)),
            is_markup(span),
            count_documents(span) if count_documents and not is_markup(span) else None,
        )
        for span in spans
    )
    markup = tuple(markup_in(unquoted))
    # Leftovers inside an HTML-like tag or a role are already markup: report them once.
    leftovers = tuple(
        match.group(0).strip()
        for match in LEFTOVER.finditer(unquoted)
        if not any(match.group(0) in construct for construct in markup)
    )
    return QuestionForm(
        question,
        len(measured_content_words(question)),
        markup,
        quoted,
        heading_path=bool(HEADING_PATH.search(unquoted)),
        template=bool(KEYWORD_TEMPLATE.search(question)),
        leftovers=leftovers,
        yes_no_fragment=bool(COPULA_FRAGMENT.match(question) or AUXILIARY_FRAGMENT.match(question)),
        follow_up=follow_up,
        names_code=bool(CODE_NAME.search(unquoted)),
    )


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


def ill_formed_questions(
    questions: Mapping[str, str],
    count_documents: Callable[[str], int] | None = None,
    many_documents: int = DEFAULT_MANY_DOCUMENTS,
    follow_ups: Collection[str] = (),
) -> dict[str, list[str]]:
    """``{id: reasons}`` for the questions that are ill-formed; ``follow_ups``: the ids of
    turns with history (short questions are fine there)."""
    flagged = {}
    for identifier, question in questions.items():
        reasons = question_form(question, count_documents, identifier in follow_ups).problems(many_documents)
        if reasons:
            flagged[identifier] = reasons
    return flagged
