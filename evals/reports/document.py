"""A report as a small document model, its two renderers and its atomic writer.

A report is first built as a ``Document`` (sections of paragraphs, tables, lists, quotes and
plots); Markdown and HTML are two renderers of that one model, so both always show the same
numbers. The HTML page is self-contained: inline CSS, plots as PNG data URIs. Every text is
taken literally and escaped, since much of it (names, queries, judges' rationales) comes from
data, not from this code. Plots are drawn lazily, by the HTML renderer only. A cell or a subheading may
link to a relative address or a turn on the local review page: a link in HTML, the address as text in Markdown.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from benchsmith.printable import printable

MISSING = "–"  # shown for a value the results do not have

# ---------------------------------------------------------------------------------------
# Document model.


LOCAL_PAGES = ("http://127.0.0.1:", "http://localhost:")  # benchsmith's own pages (label, review)


def checked_link(link: str | None) -> str | None:
    """``link`` when it is a relative address (``#notes``) or one of benchsmith's own pages on this
    machine (``http://127.0.0.1:8766/?turn=c0003_t2``), else ValueError: a report never links to
    another site nor to a ``javascript:`` URL."""
    if link is not None and (
        not (link.startswith(("/", "?", "#")) or link.startswith(LOCAL_PAGES)) or link.startswith("//")
    ):
        raise ValueError(f"a report links within itself or to benchsmith's own pages, not {link!r}")
    return link


@dataclass(frozen=True)
class Cell:
    text: str
    bold: bool = False
    numeric: bool = False  # right-aligned
    link: str | None = None  # a relative address the text links to: an <a> in HTML, the address beside it in Markdown

    def __post_init__(self) -> None:
        checked_link(self.link)


@dataclass(frozen=True)
class Table:
    columns: list[str]
    rows: list[list[Cell]]


@dataclass(frozen=True)
class BulletList:
    items: list[str]


@dataclass(frozen=True)
class Plot:
    alt: str
    draw: Callable[[], bytes]  # PNG bytes


@dataclass(frozen=True)
class Callout:
    """A conclusion the reader should see first: a bold heading line and its explanation."""

    heading: str
    text: str


@dataclass(frozen=True)
class Subheading:
    text: str
    link: str | None = None  # as a Cell's: the heading links there

    def __post_init__(self) -> None:
        checked_link(self.link)


@dataclass(frozen=True)
class Quote:
    """Quoted text whose line breaks matter, such as a conversation of several turns."""

    text: str


@dataclass(frozen=True)
class Code:
    """Text to copy as it is (a configuration file, a command): monospaced, never reflowed or escaped."""

    text: str


Block = str | Table | BulletList | Plot | Callout | Subheading | Quote | Code  # a str is a paragraph of plain text


@dataclass
class Section:
    heading: str
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Document:
    title: str
    sections: list[Section]


# ---------------------------------------------------------------------------------------
# Writing.


@dataclass(frozen=True)
class ReportFileNames:
    results: str  # the results as JSON
    markdown: str
    html: str


def render_report(results: Mapping[str, Any], document: Document, names: ReportFileNames) -> dict[str, tuple[str, str]]:
    """``results`` as JSON and ``document`` as Markdown and HTML: ``{kind: (file name, text)}``
    for the kinds ``results``, ``markdown`` and ``html`` (the caller writes them)."""
    return {
        "results": (names.results, json.dumps(results, indent=2, ensure_ascii=False) + "\n"),
        "markdown": (names.markdown, render_markdown(document, html_name=names.html)),
        "html": (names.html, render_html(document)),
    }


# ---------------------------------------------------------------------------------------
# Markdown.

# Escaped everywhere: emphasis, code, links and table cell delimiters. "<" only where it could
# open raw HTML or an autolink, and block markers only at the start of a line, where they could
# open a heading, a quote, a list, a fence or underline the line above into a heading; so that
# ordinary text such as "p < 0.05" or "a - b" stays readable in the raw file.
MARKDOWN_INLINE = re.compile(r"([\\`*_\[\]|]|<(?=[A-Za-z/!?]))")
MARKDOWN_BLOCK_START = re.compile(r"^(\s*)([#>+=~-])")
MARKDOWN_ORDERED_ITEM = re.compile(r"^(\s*\d+)([.)])")


def render_markdown(document: Document, html_name: str = "report.html") -> str:
    """The document as Markdown; plots are left to the HTML page ``html_name``, which is named instead."""
    lines = [f"# {_markdown_text(document.title)}", ""]
    for section in document.sections:
        lines += [f"## {_markdown_text(section.heading)}", ""]
        for block in section.blocks:
            if isinstance(block, Plot):
                continue  # images live in the HTML page only, so the Markdown stays one file
            lines += [*_markdown_block(block), ""]
    if any(isinstance(block, Plot) for section in document.sections for block in section.blocks):
        lines.append(f"The plots are in {_markdown_text(html_name)}.")
    return "\n".join(lines).rstrip("\n") + "\n"


def _markdown_block(block: Block) -> list[str]:
    if isinstance(block, str):
        return [_markdown_text(block, block_start=True)]
    if isinstance(block, BulletList):
        return [f"- {_markdown_text(item, block_start=True)}" for item in block.items]
    if isinstance(block, Callout):
        return [f"> **{_markdown_text(block.heading)}**", ">", f"> {_markdown_text(block.text, block_start=True)}"]
    if isinstance(block, Subheading):
        return [f"### {_markdown_linked(block.text, block.link)}"]
    if isinstance(block, Quote):
        return _markdown_quote(block.text)
    if isinstance(block, Code):
        return _markdown_code(block.text)
    if isinstance(block, Table):
        return _markdown_table(block)
    raise TypeError(f"not a block of a report: {block!r}")


def _markdown_quote(text: str) -> list[str]:
    """A block quote that keeps the line breaks of ``text``, each line escaped as a line of its own."""
    lines = [
        _markdown_text(line, block_start=True).rstrip() for line in printable(text, keep_line_breaks=True).split("\n")
    ] or [""]
    # A backslash ending a line is a hard line break: without one, a renderer joins the lines
    # of a paragraph, and the turns of a conversation would run together.
    return [
        f"> {line}\\" if line and following else f"> {line}".rstrip()
        for line, following in zip(lines, [*lines[1:], ""])
    ]


def _markdown_code(text: str) -> list[str]:
    """A fenced block, its fence longer than any run of backticks inside, so the text cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *printable(text, keep_line_breaks=True).splitlines(), fence]


def _markdown_table(table: Table) -> list[str]:
    numeric = _numeric_columns(table)
    header = "| " + " | ".join(_markdown_text(column) for column in table.columns) + " |"
    rule = "|" + "|".join("---:" if is_numeric else "---" for is_numeric in numeric) + "|"
    rows = ["| " + " | ".join(_markdown_cell(cell) for cell in row) + " |" for row in table.rows]
    return [header, rule, *rows]


def _markdown_cell(cell: Cell) -> str:
    text = _markdown_linked(cell.text, cell.link)
    return f"**{text}**" if cell.bold else text


def _markdown_linked(text: str, link: str | None) -> str:
    """``text``, and its relative address in parentheses: plain text, since a Markdown link to a
    relative address would point into wherever the file is read from."""
    return _markdown_text(text) + (f" ({_markdown_text(link)})" if link else "")


def _markdown_text(text: str, block_start: bool = False) -> str:
    """``text`` shown literally, on one line: names and notes may hold Markdown or HTML, and control
    characters (shown as escapes, benchsmith/printable.py)."""
    one_line = str(text).replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    escaped = MARKDOWN_INLINE.sub(r"\\\1", printable(one_line))
    if not block_start:
        return escaped
    return MARKDOWN_ORDERED_ITEM.sub(r"\1\\\2", MARKDOWN_BLOCK_START.sub(r"\1\\\2", escaped))


# ---------------------------------------------------------------------------------------
# HTML.

STYLE = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; margin: 0;
       background: #f6f8fa; }
main { max-width: 1200px; margin: 0 auto; padding: 24px 32px 48px; background: #fff; }
h1 { font-size: 1.7em; border-bottom: 1px solid #d0d7de; padding-bottom: 8px; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #eaeef2; padding-bottom: 4px; }
h3 { font-size: 1.05em; margin-top: 1.6em; }
.table-scroll { overflow-x: auto; margin: 12px 0; }
table { border-collapse: collapse; font-size: 0.9em; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; border: 1px solid #d0d7de; }
th, td:not(.num) { overflow-wrap: anywhere; min-width: 6em; }
td.num { white-space: nowrap; }
th { background: #f6f8fa; text-align: left; }
th[scope="row"] { background: none; font-weight: normal; }
td.num, th.num { text-align: right; }
tbody tr:nth-child(even) { background: #fafbfc; }
td strong { color: #0b5394; }
figure { margin: 16px 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eaeef2; }
figcaption { font-size: 0.85em; color: #57606a; }
.callout { border-left: 6px solid #0b5394; background: #eef4fb; padding: 12px 18px; margin: 12px 0; }
.callout-heading { font-size: 1.25em; font-weight: 600; margin: 0 0 4px; }
.callout p:last-child { margin-bottom: 0; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; padding: 10px 14px; overflow-x: auto; font-size: 0.9em; }
blockquote { margin: 8px 0; padding: 6px 14px; border-left: 4px solid #d0d7de; background: #f6f8fa;
             white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.92em; }
"""


def _html(text: str) -> str:
    """``text`` as HTML text: its markup escaped, its control characters shown as escapes (benchsmith/printable.py)."""
    return html.escape(printable(str(text), keep_line_breaks=True))


def render_html(document: Document) -> str:
    body = [f"<h1>{_html(document.title)}</h1>"]
    for section in document.sections:
        body.append(f"<section>\n<h2>{_html(section.heading)}</h2>")
        body += [_html_block(block) for block in section.blocks]
        body.append("</section>")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_html(document.title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(body)
        + "\n</main>\n</body>\n</html>\n"
    )


def _html_block(block: Block) -> str:
    if isinstance(block, str):
        return f"<p>{_html(block)}</p>"
    if isinstance(block, BulletList):
        return "<ul>\n" + "\n".join(f"<li>{_html(item)}</li>" for item in block.items) + "\n</ul>"
    if isinstance(block, Plot):
        source = "data:image/png;base64," + base64.b64encode(block.draw()).decode("ascii")
        return (
            f'<figure><img src="{source}" alt="{_html(block.alt)}"><figcaption>{_html(block.alt)}</figcaption></figure>'
        )
    if isinstance(block, Callout):
        return (
            f'<div class="callout"><p class="callout-heading">{_html(block.heading)}</p>'
            f"<p>{_html(block.text)}</p></div>"
        )
    if isinstance(block, Subheading):
        return f"<h3>{_html_linked(block.text, block.link)}</h3>"
    if isinstance(block, Quote):
        return f"<blockquote>{_html(block.text)}</blockquote>"
    if isinstance(block, Code):
        return f"<pre><code>{_html(block.text)}</code></pre>"  # pre-wrap (STYLE) keeps its line breaks
    if isinstance(block, Table):
        return _html_table(block)
    raise TypeError(f"not a block of a report: {block!r}")


def _html_table(table: Table) -> str:
    numeric = _numeric_columns(table)
    header = "".join(
        f'<th scope="col"{_num_class(is_numeric)}>{_html(column)}</th>'
        for column, is_numeric in zip(table.columns, numeric)
    )
    # The first cell names the row (a configuration, a pair): a row header for screen readers.
    rows = "\n".join(
        f'<tr><th scope="row">{_html_linked(row[0].text, row[0].link)}</th>'
        + "".join(_html_cell(cell) for cell in row[1:])
        + "</tr>"
        for row in table.rows
    )
    return (
        f'<div class="table-scroll"><table>\n<thead><tr>{header}</tr></thead>\n<tbody>\n{rows}\n</tbody>\n'
        "</table></div>"
    )


def _html_cell(cell: Cell) -> str:
    text = _html_linked(cell.text, cell.link)
    if cell.bold:
        text = f"<strong>{text}</strong>"
    return f"<td{_num_class(cell.numeric)}>{text}</td>"


def _html_linked(text: str, link: str | None) -> str:
    """``text`` as HTML text, inside a link to ``link`` when there is one (the address escaped as an attribute)."""
    return f'<a href="{html.escape(link, quote=True)}">{_html(text)}</a>' if link else _html(text)


def _num_class(numeric: bool) -> str:
    return ' class="num"' if numeric else ""


def _numeric_columns(table: Table) -> list[bool]:
    """A column is right-aligned when every one of its cells is a number."""
    return [bool(table.rows) and all(row[index].numeric for row in table.rows) for index in range(len(table.columns))]
