"""Strip markup and boilerplate so chunks hold the words a reader would see.

Per kind: HTML keeps visible text (no script, style, navigation, header, footer);
Markdown and reStructuredText lose link targets, images, directives and roles; Python
files lose license headers. Across a corpus, lines repeated in many documents (site
footers, navigation) are removed. Code keeps its indentation.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from html.parser import HTMLParser

from benchsmith.tools.documents import Document

CODE_KINDS = {"python"}
# A line repeated in at least this share of documents (and this many) is boilerplate.
BOILERPLATE_MIN_SHARE = 0.5
BOILERPLATE_MIN_DOCUMENTS = 5
BOILERPLATE_MIN_LINE_CHARS = 12


def clean_documents(documents: list[Document]) -> list[Document]:
    """Clean each document, then drop corpus-level boilerplate lines; empty results go."""
    cleaned = [Document(d.id, d.source, d.title, d.kind, clean_text(d.text, d.kind)) for d in documents]
    cleaned = remove_repeated_lines(cleaned)
    return [document for document in cleaned if document.text.strip()]


def clean_text(text: str, kind: str) -> str:
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))
    if kind == "html":
        text = html_to_text(text)
    elif kind in ("markdown", "notebook"):
        text = strip_markdown(text)
    elif kind == "rst":
        text = strip_rst(text)
    elif kind == "python":
        text = strip_license_header(text)
    return normalize_whitespace(text, keep_indentation=kind in CODE_KINDS)


def normalize_whitespace(text: str, keep_indentation: bool = False) -> str:
    lines = [line.rstrip() for line in text.split("\n")]
    if not keep_indentation:
        lines = [re.sub(r"[ \t\u00a0]+", " ", line).strip() for line in lines]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


class _VisibleTextParser(HTMLParser):
    HIDDEN = {"script", "style", "nav", "header", "footer", "aside", "noscript", "form", "template", "svg", "head"}
    BLOCK = {"p", "div", "section", "article", "main", "br", "li", "ul", "ol", "table", "tr", "h1", "h2", "h3",
             "h4", "h5", "h6", "pre", "blockquote", "dt", "dd", "hr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden_depth = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.HIDDEN:
            self.hidden_depth += 1
        elif tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN:
            self.hidden_depth = max(0, self.hidden_depth - 1)
        elif tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self.hidden_depth:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    parser = _VisibleTextParser()
    parser.feed(html)
    parser.close()
    paragraphs = ("".join(parser.parts)).split("\n\n")
    return "\n\n".join(" ".join(paragraph.split()) for paragraph in paragraphs if paragraph.strip())


MARKDOWN_RULES = [
    (re.compile(r"\A---\n.*?\n---\n", re.S), ""),  # YAML front matter
    (re.compile(r"<!--.*?-->", re.S), ""),  # comments
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # images keep their alt text
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),  # links keep their text
    (re.compile(r"^\s*\[[^\]]+\]:\s*\S+.*$", re.M), ""),  # reference definitions
    (re.compile(r"</?[A-Za-z][^>\n]*>"), ""),  # inline HTML tags
    (re.compile(r"^#{1,6}\s+", re.M), ""),  # heading markers
    (re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$", re.M), ""),  # horizontal rules
]

RST_RULES = [
    (re.compile(r"^\.\. (?!\w+::).*$", re.M), ""),  # comments and targets
    (re.compile(r"^\.\. [\w:-]+::.*\n((?:[ \t]+:.*\n)*)", re.M), ""),  # directive line and its options
    (re.compile(r":[\w:+-]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`"), r"\1"),  # roles keep their text
    (re.compile(r"`([^`<]+?)\s*<[^>]+>`__?"), r"\1"),  # hyperlinks keep their text
    (re.compile(r"``([^`]+)``"), r"\1"),  # inline literals
    (re.compile(r"^([=\-~^\"'`#*+<>:.]{3,})\s*$", re.M), ""),  # section adornments
    (re.compile(r"\|(\w[\w -]*)\|"), r"\1"),  # substitutions
]


def _apply(rules: list[tuple[re.Pattern[str], str]], text: str) -> str:
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


def strip_markdown(text: str) -> str:
    return _apply(MARKDOWN_RULES, text)


def strip_rst(text: str) -> str:
    return _apply(RST_RULES, text)


def strip_license_header(code: str) -> str:
    """Drop a leading comment block that is a license or copyright notice (and a shebang)."""
    lines = code.split("\n")
    end = 0
    while end < len(lines) and (lines[end].startswith("#") or not lines[end].strip()):
        end += 1
    header = "\n".join(lines[:end]).lower()
    if "license" in header or "copyright" in header:
        return "\n".join(lines[end:])
    return code


def remove_repeated_lines(documents: list[Document]) -> list[Document]:
    """Drop prose lines that recur across many documents: navigation, footers, banners."""
    if len(documents) < BOILERPLATE_MIN_DOCUMENTS:
        return documents
    line_documents: Counter[str] = Counter()
    for document in documents:
        if document.kind not in CODE_KINDS:
            line_documents.update({line for line in document.text.split("\n") if len(line) >= BOILERPLATE_MIN_LINE_CHARS})
    limit = max(BOILERPLATE_MIN_DOCUMENTS, BOILERPLATE_MIN_SHARE * len(documents))
    boilerplate = {line for line, count in line_documents.items() if count >= limit}
    if not boilerplate:
        return documents
    return [
        document if document.kind in CODE_KINDS else Document(
            document.id, document.source, document.title, document.kind,
            normalize_whitespace("\n".join(line for line in document.text.split("\n") if line not in boilerplate)),
        )
        for document in documents
    ]
