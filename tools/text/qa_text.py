"""Question-answer pairs as plain text: a JSONL file as it is, or a Stack Exchange
``Posts.xml`` dump's questions and accepted answers with their HTML made into text.

HTML becomes readable text with its code kept as code: ``<pre>`` blocks become fenced blocks
with their lines and indentation intact, inline ``<code>`` becomes backticked, paragraphs and
list items become lines; entities are decoded, scripts and styles dropped. A question's text
is its title, a blank line, then its body.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.qa_pairs import QAPair, check_query_id, read_qa_jsonl
from benchsmith.stores.formats.stackexchange import read_posts_xml

HIDDEN = {"script", "style", "head", "template", "svg", "noscript"}
BLOCK = {
    "p",
    "div",
    "section",
    "article",
    "br",
    "ul",
    "ol",
    "table",
    "tr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "dl",
    "dt",
    "dd",
    "hr",
}
BREAK = "\x00"  # a block boundary, resolved to blank lines once the text is assembled


class _TextWithCodeParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden_depth = 0
        self.pre_depth = 0
        self.inline_code = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in HIDDEN:
            self.hidden_depth += 1
        elif tag == "pre":
            self.pre_depth += 1
            if self.pre_depth == 1:
                self.parts.append(f"{BREAK}```\n")
        elif tag == "code" and not self.pre_depth:
            self.inline_code = True
            self.parts.append("`")
        elif tag == "li" and not self.pre_depth:
            self.parts.append("\n- ")
        elif tag in BLOCK and not self.pre_depth:
            self.parts.append(BREAK)

    def handle_endtag(self, tag: str) -> None:
        if tag in HIDDEN:
            self.hidden_depth = max(0, self.hidden_depth - 1)
        elif tag == "pre" and self.pre_depth:
            self.pre_depth -= 1
            if not self.pre_depth:
                self.parts.append(f"\n```{BREAK}")
        elif tag == "code" and self.inline_code:
            self.inline_code = False
            self.parts.append("`")
        elif tag in BLOCK and not self.pre_depth:
            self.parts.append(BREAK)

    def handle_data(self, data: str) -> None:
        if self.hidden_depth:
            return
        if self.pre_depth:
            self.parts.append(data)
        else:
            self.parts.append(re.sub(r"\s+", " ", data))


def html_to_text_with_code(html: str) -> str:
    """Readable text of an HTML post, code blocks fenced with their layout kept."""
    parser = _TextWithCodeParser()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    pieces = [
        _code_block(piece) if piece.startswith("```") else "\n".join(line.strip() for line in piece.split("\n")).strip()
        for piece in text.split(BREAK)
    ]
    return "\n\n".join(piece for piece in pieces if piece)


def _code_block(piece: str) -> str:
    """A fenced block without blank lines just inside its fences; the code's own lines as they are."""
    code = piece.removeprefix("```\n").removesuffix("\n```")
    lines = code.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "```\n" + "\n".join(line.rstrip() for line in lines) + "\n```" if lines else ""


@dataclass
class LoadedPairs:
    pairs: list[QAPair]
    source_format: str  # "jsonl" or "posts-xml"
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (id, why)
    questions_read: int = 0


def load_qa_pairs(path: str | Path, tags: Sequence[str] = ()) -> LoadedPairs:
    """Pairs from ``path``: a Stack Exchange ``Posts.xml`` (by its ``.xml`` suffix) or JSONL.
    ``tags`` keeps the pairs with at least one of them (for JSONL, by their ``tags`` field)."""
    path = Path(path)
    wanted = {tag.lower() for tag in tags}
    if path.suffix.lower() == ".xml":
        imported = read_posts_xml(path, tags)
        pairs = []
        for question in imported.questions:
            check_query_id(question.id, f"{path}:{question.line}")
            title = html_to_text_with_code(question.title)
            body = html_to_text_with_code(question.body_html)
            pairs.append(
                QAPair(
                    question.id,
                    "\n\n".join(part for part in (title, body) if part),
                    html_to_text_with_code(question.answer_html),
                    question.tags,
                )
            )
        empty = [
            (pair.id, "empty question or answer once the HTML is removed")
            for pair in pairs
            if not pair.question or not pair.answer
        ]
        pairs = [pair for pair in pairs if pair.question and pair.answer]
        return LoadedPairs(pairs, "posts-xml", [*imported.skipped, *empty], imported.questions_read)
    pairs = read_qa_jsonl(path)
    kept = [pair for pair in pairs if not wanted or wanted & {tag.lower() for tag in pair.tags}]
    return LoadedPairs(kept, "jsonl", [], len(pairs))


def pairs_to_use(loaded: LoadedPairs, path: str | Path, tags: Sequence[str], limit: int | None) -> list[QAPair]:
    """The pairs a run uses (the first ``limit``); none is an :class:`InputError` naming the file
    (a Posts.xml whose questions have no accepted answer, or none with the tags)."""
    pairs = loaded.pairs[:limit] if limit is not None else loaded.pairs
    if not pairs:
        with_tags = f" with the tags {', '.join(tags)}" if tags else ""
        skipped = f" ({len(loaded.skipped)} skipped: {loaded.skipped[0][1]}, …)" if loaded.skipped else ""
        raise InputError(f"{path}: no question with an accepted answer{with_tags}{skipped}")
    return pairs
