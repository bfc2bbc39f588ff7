"""What an underspecified question names, offline: a term two candidate passages really share,
and how a clarifying reply tells the candidates apart (agents/turn_types.py).

A user asks "How does the decompress function work?" when lzma and bz2 both document one; the
assistant asks back "Do you mean decompress in lzma or in bz2?". The term is, in this order of
preference, a code name both candidates' titles carry, one title carries and the other passage
documents, one both passages use (a dotted or snake_case name, a call, a CamelCase class);
else a rare noun both passages open with (their first sentence or title). Never a page's own
name, a builtin or parameter everyone uses (``self``, ``str``, ``path``), or words that merely
occur in both. The candidates are named by their page, or page and heading where one page
holds both ("lzma.LZMAFile.__init__" and "lzma.open"). ``asks_two_meanings`` says whether the
term gives a clarification two meanings to choose from; synthesis pairs only such candidates.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass
from typing import Any

from benchsmith.agents.sentence_questions import (IMPERATIVES, KNOWN_VERBS, PARTICIPLES, USER_VERBS, documented_topic,
                                                  verb_base)
from benchsmith.passages import HEADING_SEPARATOR, sentences
from benchsmith.agents.text import WordStatistics, inverse_document_frequency
from benchsmith.words import content_words

# Dotted names (json.dumps, POP3.rset), snake_case names, calls (rset()), CamelCase classes (LZMAFile).
DOTTED_OR_SNAKE = re.compile(r"(?<![\w./-])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[a-z]+_[a-z_]\w*)")
CALLED = re.compile(r"(?<![\w.])([A-Za-z_]\w{2,})\(")
# An acronym's plural (RFCs, URLs) is no name.
CAMEL_CASE = re.compile(r"(?<![\w.])((?=\w{4})(?:[A-Z][a-z0-9]+[A-Z]\w*|[A-Z]{2,}(?!s\b)[a-z]\w*))(?![\w])")
# Names every page uses: they tell nothing apart, and no user asks how "self" works.
GENERIC_NAMES = frozenset(
    "self cls args kwargs none true false object str int float bytes bool list dict tuple set frozenset type "
    "name value values data file path mode key keys default obj func function method class kind text string "
    "init new call repr len iter next get put main test run print open_file encoding errors newline".split())
NOUN_ENDINGS_NOT = ("ly", "ed", "ing")  # adverbs and participles are no term
MIN_WORD_LENGTH = 4


@dataclass(frozen=True)
class AmbiguousTerm:
    term: str
    kind: str | None  # "function", "method", "class", "constant", "option"; None: a plain word


def page_and_heading(title: str) -> tuple[str, str | None]:
    """``"lzma › LZMAFile.__init__"`` → ("lzma", "LZMAFile.__init__"); a title without a heading → (page, None)."""
    pieces = [piece.strip() for piece in HEADING_SEPARATOR.split(title or "") if piece.strip()]
    page = documented_topic(title or "") or (pieces[0] if pieces else "")
    return page, (pieces[-1] if len(pieces) > 1 else None)


def sense_names(passages: list[dict[str, Any]]) -> list[str] | None:
    """How a clarifying reply names each candidate: its page when the pages differ, else its
    page and heading; None when two candidates would get the same name."""
    parts = [page_and_heading(passage.get("title", "")) for passage in passages]
    pages = [page for page, _ in parts]
    if all(pages) and len(set(pages)) == len(pages):
        return pages
    names = [(heading if heading.startswith(f"{page}.") else f"{page}.{heading}") if heading else page
             for page, heading in parts]
    return names if all(names) and len(set(names)) == len(names) else None


def _page_words(passages: list[dict[str, Any]]) -> set[str]:
    return {word.lower() for passage in passages for word in re.split(r"[.\s_-]+", page_and_heading(
        passage.get("title", ""))[0]) if word}


# Builtin exceptions and warnings (ValueError) are raised everywhere: sharing one tells nothing.
BUILTIN_CLASSES = frozenset(name for name in dir(builtins) if name[:1].isupper())


def _usable_name(name: str, page_words: set[str]) -> bool:
    last = name.rsplit(".", 1)[-1]
    return (len(last) >= 3 and not last.startswith("__") and last.lower() not in GENERIC_NAMES
            and last not in BUILTIN_CLASSES
            and name.lower() not in page_words and last.lower() not in page_words)


def title_names(title: str) -> set[str]:
    """The code names a chunk's heading carries: "LZMAFile.__init__" → LZMAFile.__init__, LZMAFile."""
    _, heading = page_and_heading(title)
    if not heading or " " in heading.strip():
        return set()
    parts = heading.strip("()").split(".")
    return {heading.strip("()"), *parts, *(".".join(parts[i:]) for i in range(1, len(parts)))}


def code_names(text: str) -> set[str]:
    """The code names a passage uses, each also by its last one or two dotted parts
    ("poplib.POP3.rset" → POP3.rset, rset)."""
    names: set[str] = set()
    for match in DOTTED_OR_SNAKE.finditer(text):
        parts = match.group(1).rstrip(".").split(".")
        names.update({parts[-1], ".".join(parts[-2:])} if len(parts) > 1 else {parts[0]})
    names.update(match.group(1) for match in CALLED.finditer(text))
    names.update(match.group(1) for match in CAMEL_CASE.finditer(text))
    return names


def _name_kind(name: str, texts: list[str]) -> str:
    last = re.escape(name.rsplit(".", 1)[-1])
    joined = "\n".join(texts)
    if "." in name and name.rsplit(".", 1)[-1][:1].islower() or re.search(rf"\b[A-Z]\w*\.{last}\(", joined):
        return "method"
    if name[:1].isupper() and not (name.isupper() and not re.search(rf"\b{last}\(", joined)):
        return "class"
    if name.isupper():
        return "constant"
    return "function" if re.search(rf"(?<![\w.]){last}\(|\.{last}\(", joined) else "option"


def _opening_words(passage: dict[str, Any]) -> set[str]:
    """The words a passage opens with: its title's and its first sentence's."""
    first = next(iter(sentences(passage["text"])), "")
    return {word.lower() for word in content_words(f"{passage.get('title', '')} {first}")}


VERB_FORMS = frozenset(KNOWN_VERBS | {verb_base(verb) for verb in KNOWN_VERBS} | set(USER_VERBS) | IMPERATIVES
                       | PARTICIPLES)


def _plain_noun(word: str) -> bool:
    """A word that names a thing: no verb ("return"), participle ("driven") or adverb."""
    return (len(word) >= MIN_WORD_LENGTH and word.isalpha() and not word.endswith(NOUN_ENDINGS_NOT)
            and not (word.endswith("s") and not word.endswith("ss"))  # "how the lists works"
            and word not in VERB_FORMS and verb_base(word) not in VERB_FORMS and word not in GENERIC_NAMES)


def ambiguous_term(passages: list[dict[str, Any]], statistics: WordStatistics) -> AmbiguousTerm | None:
    """The term an ambiguous question about every candidate names (the module's docstring);
    None when they share none, or cannot be told apart by name."""
    if len(passages) < 2 or sense_names(passages) is None:
        return None
    page_words = _page_words(passages)
    titled = [title_names(passage.get("title", "")) for passage in passages]
    used = [code_names(passage["text"]) for passage in passages]
    shared = set.intersection(*(titles | names for titles, names in zip(titled, used)))
    shared = {name for name in shared if _usable_name(name, page_words)}
    if shared:
        def rarity(name: str) -> float:
            return inverse_document_frequency(statistics, name.rsplit(".", 1)[-1].lower())

        # Named in most titles first, then the rarest, then the shorter (rset before POP3.rset).
        best = min(shared, key=lambda name: (-sum(name in titles for titles in titled), -round(rarity(name), 6),
                                             len(name), name))
        return AmbiguousTerm(best, _name_kind(best, [passage["text"] for passage in passages]))
    opening = set.intersection(*(_opening_words(passage) for passage in passages))
    nouns = sorted((word for word in opening if _plain_noun(word) and word not in page_words),
                   key=lambda word: (-round(inverse_document_frequency(statistics, word), 6), word))
    return AmbiguousTerm(nouns[0], None) if nouns else None


NO_SHARED_TERM = 5  # the worst rank of term_rank: the candidates share no term


def term_rank(passages: list[dict[str, Any]], statistics: WordStatistics) -> int:
    """How well an ambiguous question about ``passages`` (the meant one first: its clarification
    asks about it) can name what they share, best first: 0 a code name every title carries (two
    things of one name, or two sections of one thing: the question fits both alike); 1 one the
    meant passage's title carries; 2 one the passages only use; 3 a plain noun; 4 a code name
    only another passage's title carries (the clarification would be about something else);
    ``NO_SHARED_TERM`` none."""
    return _rank(ambiguous_term(passages, statistics), passages)


def _rank(term: AmbiguousTerm | None, passages: list[dict[str, Any]]) -> int:
    if term is None:
        return NO_SHARED_TERM
    if term.kind is None:
        return 3
    titled = [term.term in title_names(passage.get("title", "")) for passage in passages]
    return 0 if all(titled) else 1 if titled[0] else 2 if not any(titled) else 4


def _documents(passage: dict[str, Any], term: str) -> bool:
    """Whether ``passage`` is about ``term``: its heading names it last (``lzma › open``,
    ``tarfile › TarFile.open``) or its first sentence uses it; not merely further down, and not
    as the class a documented method belongs to (``POP3`` of ``POP3.noop``)."""
    _, heading = page_and_heading(passage.get("title", ""))
    last = term.rsplit(".", 1)[-1]
    if heading and " " not in heading.strip() and heading.strip("()").rsplit(".", 1)[-1] == last:
        return True
    first = next(iter(sentences(passage["text"])), "")
    return term in code_names(first)


def asks_two_meanings(passages: list[dict[str, Any]], statistics: WordStatistics) -> bool:
    """Whether the clarifying reply to an ambiguous question about ``passages`` offers two meanings
    of it: their shared term (``ambiguous_term``) is a code name each passage documents
    (``_documents``): "open in lzma or in tarfile", or a plain noun each opens with on pages of
    its own ("transfer" in base64mime and quoprimime). A passage that only mentions the name
    (py_encode_basestring's page naming JSONEncoder), two methods of one class asked about as
    the class ("POP3 in POP3.noop or in POP3.utf8"), or a noun two sections of one page share
    (the "compiler" of CCompiler.add_library and CCompiler.add_link_object: one compiler) are
    not two meanings."""
    return _two_meanings(ambiguous_term(passages, statistics), passages)


def _two_meanings(term: AmbiguousTerm | None, passages: list[dict[str, Any]]) -> bool:
    if term is None:
        return False
    if term.kind is None:  # a plain noun every passage opens with (its title or first sentence)
        pages = [page_and_heading(passage.get("title", ""))[0] for passage in passages]
        return len(set(pages)) == len(pages)
    return all(_documents(passage, term.term) for passage in passages)


def partner_rank(passages: list[dict[str, Any]], statistics: WordStatistics) -> int | None:
    """``term_rank`` of ``passages`` where ``asks_two_meanings`` holds, else None: both from one
    reading of their shared term."""
    term = ambiguous_term(passages, statistics)
    return _rank(term, passages) if _two_meanings(term, passages) else None


def ambiguous_question(term: AmbiguousTerm, question_type: str | None) -> tuple[str, str]:
    """The user's ambiguous question about ``term`` and its question type."""
    if term.kind is None:
        return f"Can you explain how the {term.term} works?", "explanation"
    if question_type == "how-to":
        return f"How do I use the {term.term} {term.kind}?", "how-to"
    return f"How does the {term.term} {term.kind} work?", "explanation"


def options_listed(options: list[str]) -> str:
    """"A or B", "A, B or C"."""
    return ", ".join(options[:-1]) + f" or {options[-1]}" if len(options) > 1 else options[0]
