"""Quality filter: a pluggable scorer maps each chunk to [0, 1]; chunks below the
minimum are dropped.

The default :class:`InformationDensityScorer` is a heuristic that needs no model:

    score = density × form

**density** is the geometric mean of four signals, each capped at 1 (text that is not
text at all):

* letter share: letters among non-space characters, over 0.55. Tables of numbers and
  symbol soup score low; prose scores ~0.8, code ~0.65.
* lexical variety: distinct words over words (over the first 200 words), over 0.35.
  Repeated filler ("foo foo foo", menus) scores low.
* compressibility: zlib-compressed size over raw size, over 0.3. Text that compresses to
  almost nothing repeats itself.
* word shape: mean word length within 2..12 characters; outside it (hashes, base64,
  one-letter noise) the score falls off. CJK characters count as words and are left out
  of the mean.

**form** is the product of five penalties, each 1 for ordinary prose or code (text that
is words, but not something a reader would ask a question about):

* tables: the share of words (code blocks aside) on table rows (``+----+`` / ``| a | b |``
  grids, ``==== ====`` simple tables and the rows under their rules, Markdown pipe
  tables); a row with a sentence in a cell does not count, since a table of
  descriptions reads as prose. Up to 0.3 costs nothing; then linearly down to 0.1 at 0.8.
* option tables: the share of words on lines that are command-line flags (``-v,
  --verbose``) or ``Usage:`` / ``Options:`` headers (so a flag followed by a paragraph
  explaining it is not a table); 0.25 costs nothing, 0.6 or more gives 0.1.
* navigation: the share of words (code included) on lines that are short items (at most
  four words, no sentence punctuation, not a table row: menus, contents lists, link
  lists, "Previous | Next"), when there are at least four prose lines; 0.5 costs
  nothing, 0.9 gives 0.2. (Short labels between code examples are not a menu.)
* boilerplate: the share of words in sentences with a license, site-chrome or redirect
  phrase ("permission is hereby granted", "all rights reserved", "copyright 2024",
  "licensed under", "edit on github", "has been moved to"...), or written in capitals;
  0.2 costs nothing, 0.6 gives 0.1.
* stubs: a chunk without code and with fewer than 12 words (a file name, dotted path or
  CJK character is one word; URLs and paths are none) is 0.15 unless it holds a sentence
  (five words ending in a full stop); one with fewer than 40 words and no sentence (that,
  or seven words) is 0.3. A heading and a link, a list of file names, a lone label.

With the default minimum 0.5 a chunk must fail one signal badly or several mildly.
Code is told from prose by fences, indentation, doctest prompts and signature lines
(``json.loads(s, *, cls=None)``): code is content, never a stub or a menu.

The thresholds were set on a labelled sample (``tests/quality_sample.py``: 26 chunks to
keep — prose, code with explanation, API entries — and 25 to drop — option tables, ASCII
tables, navigation, stubs, licenses, redirect notices), where precision and recall of
"keep" are 1.0, then checked on 36 chunks written afterwards (first scores: precision
0.83 and 0.80, recall 1.0; the gaps found were closed, see the sample). On the
standard-library corpus it drops 3 of 1,811 chunks (an ASCII data-flow diagram, a list
of SSL constants, a license notice) where the density alone dropped 1.
An LLM scorer through the model seam can replace it (``--quality llm``).
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Sequence
from typing import Protocol

DEFAULT_MIN_QUALITY = 0.5
# Words; a CJK character counts as a word of its own (those scripts put no spaces between words).
CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
WORD = re.compile(rf"[{CJK}]|[^\W{CJK}]+")
TOKEN = re.compile(rf"[{CJK}]|[^\s{CJK}]*[^\W\d_{CJK}][^\s{CJK}]*")
URL = re.compile(r"\b(?:https?|ftp)://\S+|\b[\w./-]+\.(?:html?|md|rst|py|ipynb|txt)\b")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")

TABLE_LINE = re.compile(
    r"^\s*(?:\+[-=+:]{2,}\+?"  # grid table rule
    r"|\|.*\|"  # grid or pipe table row
    r"|\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?"  # Markdown table rule
    r"|={2,}(?:\s+={2,})+|-{2,}(?:\s+-{2,})+"  # simple table rule
    r")\s*$"
)
SIMPLE_TABLE_RULE = re.compile(r"^\s*(?:={2,}|-{2,})(?:\s+(?:={2,}|-{2,}))+\s*$")
OPTION_LINE = re.compile(
    r"^\s*(?:\|\s*)?(?:-{1,2}[A-Za-z0-9][\w-]*(?:[ ,=/|]|$)"  # -v, --verbose, -D setting=value
    r"|(?:usage|options|arguments|positional arguments|optional arguments|commands|flags)\s*:?\s*(?:$|\S+\s+\[))",
    re.I,
)
SENTENCE_END = re.compile(r"[.!?。！？:;]\s*$")
FULL_STOP = re.compile(r"[.!?。！？]\s*$")
OPTION_TOKENS = re.compile(r"(?:^|[\s,/|])-{1,2}[A-Za-z0-9][\w-]*(?:[ =][A-Z_]{1,12}\b)?:?|^\s*\|")
# An API entry's first line: a call signature, or a dotted name alone (``tkinter.tix.DirTree``).
SIGNATURE = re.compile(r"^(?:[A-Za-z_][\w.]*\(.*\)\s*(?:->.*)?:?|[A-Za-z_]\w*(?:\.\w+)+)\s*$")
BOILERPLATE = re.compile(
    "|".join(
        [
            r"permission is hereby granted",
            r"without warranty",
            r"warranties of merchantability",
            r"fitness for a particular purpose",
            r"in no event shall",
            r"liable for any claim",
            r"all rights reserved",
            r"apache license",
            r"gnu (?:lesser )?general public license",
            r"provided \"?as is",
            r"redistribution and use in source and binary forms",
            r"above copyright notice",
            r"copyright \(c\)",
            r"©",
            r"this program is free software",
            r"subject to the following conditions",
            r"you may not use this file",
            r"limitations under the license",
            r"we use cookies",
            r"use of cookies",
            r"privacy policy",
            r"terms of service",
            r"skip to main content",
            r"edit on github",
            r"edit this page",
            r"view page source",
            r"show source",
            r"built with sphinx",
            r"theme provided by",
            r"last updated on",
            r"was this page helpful",
            r"back to top",
            r"toggle navigation",
            r"update your bookmarks",
            r"licensed\s+(?:under|to)\b",
            r"distributed\s+under\b",
            r"copyright\s*(?:\(c\)|©)?\s*\d{4}",
            r"(?:\(c\)|©)\s*(?:copyright\s*)?\d{4}",
            r"licen[cs]e\s+(?:file|text)",
            r"licen[cs]e[_ -]?\w*\.(?:txt|md|rst)",
            r"under\s+the\s+(?:terms\s+of\s+the\s+)?[\w.-]+(?:\s+[\w.-]+)?\s+licen[cs]e",
            # redirect notices (talk about redirects, such as HTTP status codes, is not one)
            r"(?:page|document|section|content|site|documentation|docs|tutorial|guide|article)\s+(?:ha(?:s|ve)\s+)?"
            r"(?:been\s+)?(?:moved|relocated|migrated)\b",
            r"ha(?:s|ve)\s+(?:been\s+)?(?:moved|relocated|migrated)\s+to\b",
            r"(?:will\s+be|being)\s+redirected",
            r"redirecting\s+(?:you\s+)?to",
            r"now\s+lives?\s+(?:at|in|on)\b",
            r"can\s+now\s+be\s+found\s+(?:at|in|on)\b",
            r"^\s*moved\s*:",
        ]
    ),
    re.I,
)
SENTENCE_SPLIT = re.compile(r"(?<=[.!?。！？])\s+")


class QualityScorer(Protocol):
    name: str

    def score(self, texts: Sequence[str]) -> list[float]:
        """One score in [0, 1] per text; higher is better."""
        ...


class InformationDensityScorer:
    name = "information-density"

    def score(self, texts: Sequence[str]) -> list[float]:
        return [information_density(text) for text in texts]


def information_density(text: str) -> float:
    """The chunk's score: density × form (see the module docstring)."""
    return round(density(text) * form(text), 4)


def density(text: str) -> float:
    visible = [character for character in text if not character.isspace()]
    words = WORD.findall(text.lower())
    if not visible or not words:
        return 0.0
    letter_share = sum(character.isalpha() for character in visible) / len(visible)
    sample = words[:200]
    variety = len(set(sample)) / len(sample)
    encoded = text.encode("utf-8")
    compressibility = len(zlib.compress(encoded, 6)) / len(encoded)
    spaced = [word for word in words if len(word) > 1 or not re.match(f"[{CJK}]", word)]
    mean_length = sum(map(len, spaced)) / len(spaced) if spaced else 2
    shape = 1.0 if 2 <= mean_length <= 12 else math.exp(-abs(mean_length - (2 if mean_length < 2 else 12)) / 3)
    signals = (
        min(1.0, letter_share / 0.55),
        min(1.0, variety / 0.35),
        min(1.0, compressibility / 0.3),
        shape,
    )
    return math.prod(signals) ** (1 / len(signals))


def _falling(share: float, start: float, end: float, floor: float) -> float:
    """1 up to ``start``, then linearly down to ``floor`` at ``end`` and beyond."""
    if share <= start:
        return 1.0
    return max(floor, 1.0 - (1.0 - floor) * (share - start) / (end - start))


def split_code(text: str) -> tuple[list[str], list[str]]:
    """Prose lines and code lines: fenced blocks, indented code, doctest sessions with
    their output, and signature lines (``json.loads(s, *, cls=None)``). Blank lines stay
    in the prose to mark paragraphs."""
    prose, code, fence, doctest = [], [], "", False
    for line in text.split("\n"):
        if fence:
            if re.match(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$", line):
                fence = ""
            elif line.strip():
                code.append(line)
        elif opening := FENCE.match(line):
            fence = opening.group(1)
        elif not line.strip():
            doctest = False
            prose.append("")
        elif line.startswith((">>> ", "... ")) or line == ">>>":
            doctest = True
            code.append(line)
        elif doctest or line.startswith(("    ", "\t")) or (SIGNATURE.match(line) and not URL.fullmatch(line.strip())):
            code.append(line)
        else:
            prose.append(line)
    return prose, code


def table_lines(lines: list[str]) -> list[bool]:
    """Which lines (blank lines included, as paragraph breaks) are table rows or rules.
    A simple table's rows lost their column spacing in cleaning, so its rule marks its
    header above and its rows below, up to a blank line. Rows whose cells hold a
    sentence do not count: a table of descriptions reads as prose."""
    in_table = [bool(TABLE_LINE.match(line)) for line in lines]
    for index, line in enumerate(lines):
        if SIMPLE_TABLE_RULE.match(line):
            if index and lines[index - 1].strip():
                in_table[index - 1] = True
            following = index + 1
            while following < len(lines) and lines[following].strip():
                in_table[following] = True
                following += 1
    return [row and not any(_sentence_cell(cell) for cell in line.split("|")) for row, line in zip(in_table, lines)]


def _sentence_cell(cell: str) -> bool:
    return len(WORD.findall(cell)) >= 4 and bool(FULL_STOP.search(cell))


def option_lines(lines: list[str]) -> list[bool]:
    """Which lines are bare command-line flags or usage headers (a flag followed by a
    sentence describing it is documentation, not an option table)."""
    return [bool(OPTION_LINE.match(line)) and not _described(OPTION_TOKENS.sub("", line)) for line in lines]


def _described(text: str) -> bool:
    words = WORD.findall(text.replace("|", " "))
    return len(words) >= 6 or (len(words) >= 4 and bool(FULL_STOP.search(text.rstrip(" |"))))


def _word_share(lines: list[str], flags: list[bool]) -> float:
    counts = [len(WORD.findall(line)) for line in lines]
    return sum(count for count, flag in zip(counts, flags) if flag) / max(1, sum(counts))


def tokens(text: str) -> int:
    """Words as a reader counts them: space-separated tokens with a letter (a file name
    or a dotted path is one), each CJK character one; URLs and file paths not counted."""
    return len(TOKEN.findall(URL.sub("", text)))


def is_sentence(segment: str, strict: bool = False) -> bool:
    """Five words or more ending in a full stop, or (unless ``strict``) seven words."""
    count = tokens(segment)
    return (count >= 7 and not strict) or (count >= 5 and bool(FULL_STOP.search(segment)))


def sentences(prose: list[str]) -> list[str]:
    """Sentences of the prose, wrapped lines of a paragraph joined first."""
    paragraphs = " ".join(line.strip() or "\n" for line in prose).split("\n")
    return [sentence for paragraph in paragraphs for sentence in SENTENCE_SPLIT.split(paragraph) if sentence.strip()]


def form(text: str) -> float:
    """How much the chunk reads as content rather than tables, flags, menus, legal
    text or a stub; 1 for ordinary prose and code."""
    prose_with_breaks, code = split_code(text)
    if not any(line.strip() for line in prose_with_breaks):
        return 1.0 if code else 0.0
    table_flags = table_lines(prose_with_breaks)
    prose = [line for line in prose_with_breaks if line.strip()]
    in_table = [flag for line, flag in zip(prose_with_breaks, table_flags) if line.strip()]
    tables = _falling(_word_share(prose, in_table), 0.3, 0.8, 0.1) if any(in_table) else 1.0
    options = _falling(_word_share(prose, option_lines(prose)), 0.25, 0.6, 0.1)
    short_items = [
        tokens(line) <= 4 and not SENTENCE_END.search(line) and not table for line, table in zip(prose, in_table)
    ]
    navigation = (
        _falling(_word_share(prose + code, short_items + [False] * len(code)), 0.5, 0.9, 0.2)
        if len(prose) >= 4
        else 1.0
    )
    segments = sentences(prose_with_breaks)
    words = [len(WORD.findall(segment)) for segment in segments]
    flagged = sum(count for segment, count in zip(segments, words) if BOILERPLATE.search(segment) or _shouting(segment))
    boilerplate = _falling(flagged / max(1, sum(words)), 0.2, 0.6, 0.1)
    content_words = tokens("\n".join(prose))
    stub = 1.0
    if not code and content_words < 12 and not any(is_sentence(segment, strict=True) for segment in segments):
        stub = 0.15
    elif not code and content_words < 40 and not any(is_sentence(segment) for segment in segments):
        stub = 0.3
    return tables * options * navigation * boilerplate * stub


def _shouting(segment: str) -> bool:
    """A sentence in capitals (license disclaimers), not an acronym or a constant name."""
    letters = [character for character in segment if character.isalpha()]
    return len(letters) >= 40 and len(segment.split()) >= 8 and sum(map(str.isupper, letters)) / len(letters) > 0.8
