"""Documentation passages as a reader sees them: units, sentences, plain text.

A passage is read as *units*: prose paragraphs (wrapped lines joined), list items, headings,
code (fences, doctest and signature lines, literal blocks after ``::`` or a code directive),
tables and markup (directives, roles on their own, lines of punctuation, bare URLs). Only
prose and list items hold *sentences*; they are split at sentence ends that are not
abbreviations ("e.g.", "etc.", initials), never inside inline code or a role.

Like :mod:`benchsmith.words` it sits below every layer (the offline agents read passages with
it, the quality gate of evals/ too) and imports nothing of benchsmith's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from benchsmith.words import content_words

UnitKind = Literal["prose", "item", "heading", "code", "table", "markup"]


@dataclass(frozen=True)
class Unit:
    kind: UnitKind
    text: str
    fenced: bool = False  # code between fences: an example a user runs, never an entry's signature line


# ---------------------------------------------------------------------------------------
# Passage structure.

FENCE = re.compile(r"^\s*(```+|~~~+)\s*(\{([\w-]+)\})?")
# MyST admonitions hold prose; every other fenced directive (toctree, code-block...) does not.
ADMONITIONS = frozenset(
    "note warning tip important hint caution attention danger error seealso admonition "
    "versionadded versionchanged deprecated".split()
)
LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|#\.)\s+(?=\S)")
HEADING = re.compile(r"^\s*#{1,6}\s+\S")
TABLE = re.compile(r"^\s*\|.*\|\s*$|^\s*\+[-=+:]+\+\s*$|\S\s+\|\s+\S.*\s+\|\s+\S")
RST_DIRECTIVE = re.compile(r"^\s*\.\.(\s+[\w:.-]+::|\s+_[^:]+:|\s+\|[^|]+\|\s+\w+::|\s*$)")
FIELD_ONLY = re.compile(r"^\s*:[\w -]+:\s*$")  # :orphan:, :class: ... (no text after)
FIELD = re.compile(r"^\s*:[\w -]+:\s+(?=\S)")  # :param path: ... (the text after is prose)
CODE_DIRECTIVE = re.compile(
    r"(code-block|code|sourcecode|literalinclude|doctest|testcode|testoutput|"
    r"highlight|productionlist|math|raw|csv-table|list-table|toctree)::",
    re.IGNORECASE,
)
CODE_LINE = re.compile(
    r"^\s*(>>>|\.\.\.(\s|$)|\$\s|#!|%\s)"  # prompts
    r"|^\s*(def\s+\w+\s*\(|class\s+\w+\s*[(:]|for\s+[\w, ]+\s+in\s+\S.*:$|(try|else|finally):$|except\b.*:$"
    r"|elif\s.*:$|with\s+\S+\(.*:$)"  # Python block openers
    r"|^\s*(import|from\s+[\w.]+\s+import)\s+[\w.*]+\s*$"
    r"|^\s*[\w.\[\]'\"]+\s*[+\-*/]?=\s*\S"  # assignments
    r"|[{}]\s*$"
)
# Titles join a heading path with one of these: "poplib › POP3.noop".
HEADING_SEPARATOR = re.compile(r"\s+(?:›|»|>)\s+")
SIGNATURE = re.compile(r"^\s*[A-Za-z_]\w*(\.\w+)+(\(.*\))?\s*$|^\s*[A-Za-z_][\w.]*\(.*\)\s*(->.*)?$")
URL_ONLY = re.compile(r"^\s*<?(https?://|www\.)\S+>?\s*$")
HTML_ONLY = re.compile(r"^\s*(<[^>]+>\s*)+$")
MYST_TARGET = re.compile(r"^\s*\([^()]+\)=\s*$")  # (label)=
ROLE = re.compile(r"\{[\w:-]+\}`([^`]*)`|:[\w:-]+:`([^`]*)`")
INLINE_CODE = re.compile(r"``?([^`]+?)``?")
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
# "__init__", a bare name between double underscores, is Python's dunder name as the text shows it,
# not bold: reading it as markup asked about "attrs_post_init", a name no chunk has (test half, attrs).
EMPHASIS = re.compile(
    r"(?<![\w.])(\*\*|__)(?!\w+__(?!\w))(?=\S)(.+?)(?<=\S)\1(?!\w)|(?<!\w)(\*)(?=\w)([^*]+?)(?<=\w)\*(?!\w)"
)
ANGLE_TARGET = re.compile(r"\s*<[^<>`]+>$")


def _line_kind(line: str) -> UnitKind | None:
    """The kind of a line that stands on its own (None: prose, or a prose continuation)."""
    stripped = line.strip()
    if not any(character.isalnum() for character in stripped):
        return "markup"  # rules, underlines, lone fences and brackets
    if (
        RST_DIRECTIVE.match(line)
        or FIELD_ONLY.match(line)
        or URL_ONLY.match(line)
        or HTML_ONLY.match(line)
        or MYST_TARGET.match(line)
    ):
        return "markup"
    if TABLE.search(line):
        return "table"
    if HEADING.match(line):
        return "heading"
    if CODE_LINE.search(line) or SIGNATURE.match(line):
        return "code"
    return None


def units(text: str) -> list[Unit]:
    """The passage's units in order (see the module docstring)."""
    found: list[Unit] = []
    prose: list[str] = []
    prose_kind: UnitKind = "prose"
    code: list[str] = []
    fence: tuple[str, bool] | None = None  # (the fence marker, whether its content is prose)
    literal = "none"  # "pending" after "::" or a code directive, "inside" the literal block that follows

    def flush_prose() -> None:
        nonlocal prose, prose_kind
        if prose:
            found.append(Unit(prose_kind, " ".join(prose)))
        prose, prose_kind = [], "prose"

    def flush_code() -> None:
        nonlocal code
        if code:
            found.append(Unit("code", "\n".join(code), fenced=fence is not None))
        code = []

    if opens_inside_fence(text):
        fence = ("```", False)
    for line in text.split("\n"):
        stripped = line.strip()
        if fence is not None:
            marker, holds_prose = fence
            if stripped.startswith(marker) and not stripped[len(marker) :].strip():
                flush_prose()
                flush_code()  # while ``fence`` still says the code was fenced
                fence = None
            elif holds_prose and not FIELD_ONLY.match(line) and not FIELD.match(line):
                if stripped:
                    prose.append(stripped)
                else:
                    flush_prose()
            else:
                code.append(line)
            continue
        if opening := FENCE.match(line):
            flush_prose()
            flush_code()
            fence = (opening.group(1), (opening.group(3) or "").lower() in ADMONITIONS)
            continue
        if not stripped:
            flush_prose()
            if literal == "inside":
                literal = "none"
            flush_code()
            continue
        if literal != "none":
            literal = "inside"
            code.append(line)
            continue
        kind = _line_kind(line)
        item = LIST_ITEM.match(line) or FIELD.match(line) if kind is None else None
        if item:
            flush_prose()
            flush_code()
            prose, prose_kind = [line[item.end() :].strip()], "item"
        elif kind is None:
            flush_code()
            prose.append(stripped)
        elif kind == "code" and prose and not prose[-1].endswith((".", "!", "?", ":")) and not CODE_LINE.search(line):
            prose.append(stripped)  # a wrapped line that merely looks like a dotted name continues the sentence
        else:
            flush_prose()
            if kind == "code":
                code.append(line)
            else:
                flush_code()
                found.append(Unit(kind, stripped))
        if CODE_DIRECTIVE.search(line) or (kind is None and stripped.endswith("::")):
            flush_prose()
            literal = "pending"
    flush_prose()
    flush_code()
    return found


# A fenced block, or one a chunk or a reply cuts before its closing fence.
FENCED_BLOCK = re.compile(r"```.*?(```|\Z)", re.S)


def without_code(text: str) -> str:
    """``text`` without its fenced code blocks: the prose a reader reads as sentences."""
    return FENCED_BLOCK.sub("\n", text)


def opens_inside_fence(text: str) -> bool:
    """A chunk cut inside a fenced block: its first fence is a bare one after a line of code (indented, or
    code by its look), so it closes the block rather than opening one. Read the other way round, the
    example's comments and docstrings are prose and the page's prose is code ("Retrieve, update or delete a
    code snippet." read as what ``serializer.save()`` does: drf, development round 13)."""
    lines = text.split("\n")
    first = next((i for i, line in enumerate(lines) if FENCE.match(line)), None)
    if first is None or lines[first].strip().strip("`~"):
        return False
    before = [line for line in lines[:first] if line.strip()]
    return bool(before) and (before[-1].startswith(("    ", "\t")) or _line_kind(before[-1]) == "code")


# ---------------------------------------------------------------------------------------
# Sentences.

ABBREVIATIONS = frozenset(
    "e.g i.e etc vs cf fig figs no nos approx ca dr mr mrs ms prof sr jr st inc ltd co al viz resp incl "
    "eq eqs sec ch vol pp ed eds min max esp est dept univ".split()
)
SENTENCE_END = re.compile(r"[.!?]+[\"'”’)\]]*\s+")
STARTS_SENTENCE = re.compile(r"[\"'“‘(\[`\x00]*(?:[A-Z0-9]|--?[a-z])")  # ... or an option ("--dry-run prints ...")
MASK = re.compile(r"\x00(\d+)\x00")


def _mask_inline(text: str) -> tuple[str, list[str]]:
    """Roles and inline code replaced by placeholders, so their dots never end a sentence."""
    kept: list[str] = []

    def keep(match: re.Match[str]) -> str:
        kept.append(match.group(0))
        return f"\x00{len(kept) - 1}\x00"

    return re.sub(r"(\{[\w:-]+\}|:[\w:-]+:)?``?[^`]+?``?", keep, text), kept


def _is_abbreviation(before: str) -> bool:
    token = before.split()[-1] if before.split() else ""
    bare = token.lstrip("(\"'“‘[").rstrip(".")
    if not bare:
        return False
    if bare.lower() in ABBREVIATIONS:
        return True
    if re.fullmatch(r"(\w\.)+\w", bare):  # e.g, i.e, U.S
        return True
    return len(bare) == 1 and bare.isalpha()  # an initial


def split_sentences(text: str) -> list[str]:
    """Sentences of one prose unit (its lines already joined)."""
    masked, kept = _mask_inline(text)
    pieces, start = [], 0
    for match in SENTENCE_END.finditer(masked):
        rest = masked[match.end() :]
        if not STARTS_SENTENCE.match(rest) or _is_abbreviation(masked[start : match.start() + 1]):
            continue
        pieces.append(masked[start : match.end()].strip())
        start = match.end()
    pieces.append(masked[start:].strip())
    restored = [MASK.sub(lambda m: kept[int(m.group(1))], piece) for piece in pieces]
    return [piece for piece in restored if any(character.isalnum() for character in piece)]


def sentences(text: str) -> list[str]:
    """The sentences of a passage's prose and list items, in order (no code, tables or markup)."""
    return [
        sentence for unit in units(text) if unit.kind in ("prose", "item") for sentence in split_sentences(unit.text)
    ]


def last_heading(title: str) -> str:
    """The heading a title's path ends with (``POP3.noop`` of ``poplib › POP3.noop``); "" without one."""
    pieces = HEADING_SEPARATOR.split(title or "")
    return pieces[-1].strip() if len(pieces) > 1 else ""


def documented_sentences(text: str) -> list[tuple[str, str]]:
    """Each sentence of :func:`sentences` with the signature line it documents ("" before any).

    In an API reference the sentences under ``inspect.isgeneratorfunction(obj)`` are about that
    function though few of them name it ("Return true if the object is a user-defined generator
    function."); a chunk often holds several such entries, so what a sentence is about is its
    entry's signature."""
    documented: list[tuple[str, str]] = []
    subject = ""
    for unit in units(text):
        if unit.kind == "code" and "\n" not in unit.text and SIGNATURE.match(unit.text):
            subject = unit.text.strip()
        elif unit.kind in ("prose", "item"):
            documented.extend((sentence, subject) for sentence in split_sentences(unit.text))
    return documented


def join_sentences(chosen: Iterable[str]) -> str:
    """Sentences as one text that splits back into exactly them: a space where the next one
    visibly starts a sentence, a paragraph break where it would not."""
    text = ""
    for sentence in chosen:
        if text and split_sentences(f"{text.rsplit(chr(10), 1)[-1]} {sentence}")[-1:] == [sentence]:
            text = f"{text} {sentence}"
        else:
            text = f"{text}\n\n{sentence}" if text else sentence
    return text


def plain_text(sentence: str) -> str:
    """A sentence as a reader sees it: roles, inline code, links and emphasis reduced to their text."""

    def role_text(match: re.Match[str]) -> str:
        shown = match.group(1) if match.group(1) is not None else match.group(2)
        return ANGLE_TARGET.sub("", shown).lstrip("~!") or shown

    text = ROLE.sub(role_text, sentence)
    text = LINK.sub(lambda match: match.group(1), text)
    text = INLINE_CODE.sub(lambda match: match.group(1), text)
    text = EMPHASIS.sub(lambda match: match.group(2) if match.group(2) is not None else match.group(4), text)
    return re.sub(r"\s+", " ", text).strip()


MARKUP_TRACES = re.compile(r"```|~~~|::|\{[\w-]+\}`|:[\w-]+:`|\|[^|]*\||<[a-z]+[ >/]|\[\[|\]\]|^\s*\.\.\s|={3,}|-{3,}")
META_SENTENCE = re.compile(
    r"\b(this (page|document|section|chapter|file|site) (has|was|is|will|describes|contains|"
    r"covers|explains)|has (been )?moved|see also|click here|table of contents|redirect"
    r"|(is|are) now (covered|documented|described|explained) (in|at|on|by))"
    r"|^(written|contributed|maintained|copyright|authored|created) (by|\(c\)|©)|^copyright\b"
    r"|^see\b",
    re.IGNORECASE,
)
MAX_SENTENCE_WORDS = 60


# Tokens of command lines and paths, not of prose: flags, comments, prompts, paths, assignments, symbols.
COMMAND_TOKEN = re.compile(r"^[-#$>]|[/\\=<>|]|^\W+$")
MAX_COMMAND_TOKEN_SHARE = 0.25


def is_complete(sentence: str) -> bool:
    """A whole sentence, not a piece a chunk boundary cut off: it opens like a sentence
    (a capital, a digit, code or a quote) and ends with one of . ! ?"""
    plain = plain_text(sentence)
    return bool(STARTS_SENTENCE.match(plain) or sentence[:1] in "`*:{") and plain.rstrip("\"'”’)").endswith(
        (".", "!", "?")
    )


def is_informative(
    sentence: str,
    *,
    require_complete: bool = True,
    minimum_content_words: int = 3,
    max_words: int | None = MAX_SENTENCE_WORDS,
) -> bool:
    """Worth a question: a complete sentence (unless ``require_complete`` is false) of at most
    ``max_words`` words, mostly plain words (not a command line, a path or symbols), no markup
    left, enough content words, not about the document itself ("this page has moved"), not a
    lead-in to a list or code."""
    plain = plain_text(sentence)
    if require_complete and not is_complete(sentence):
        return False
    if MARKUP_TRACES.search(sentence) and MARKUP_TRACES.search(plain):
        return False
    tokens = plain.split()
    if not tokens or sum(bool(COMMAND_TOKEN.search(token)) for token in tokens) > MAX_COMMAND_TOKEN_SHARE * len(tokens):
        return False
    visible = [character for character in plain if not character.isspace()]
    if sum(character.isalpha() for character in visible) < 0.5 * len(visible):
        return False
    if plain.endswith(":") or META_SENTENCE.search(plain) or (max_words is not None and len(tokens) > max_words):
        return False
    return len(set(content_words(plain))) >= minimum_content_words
