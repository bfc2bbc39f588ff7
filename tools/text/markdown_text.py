"""Markdown and MyST (Sphinx's Markdown) to the text a reader of the built page sees.

A line-based converter, tolerant of extensions it does not know (see ``rst_text``):

* ATX (``#``) and setext headings become heading markers (``tools.text.headings``).
* Fenced code keeps its code, fenced with its language. MyST directive fences
  (```` ```{name} ```` and ``:::{name}``, which nest) go by the kind ``tools.text.sphinx_markup`` gives
  them: code kept as code, admonitions and containers keep their text, toctrees and
  directives with no reader text go; their ``:option:`` lines and YAML option blocks go;
  ``{eval-rst}`` content is converted as reStructuredText.
* Roles (``{ref}`text <target>``` → text), links and images (their text; a link without
  text, ``[](pypug:target)``, and a reference ``<pypug:Version Specifier>`` show the target
  without its intersphinx prefix), autolinks,
  inline attributes (``[text]{#id .class}``), known HTML tags, emphasis, code-span
  backticks, footnote references and escapes are resolved; code spans are protected
  from every other rule.
* Front matter, comments (HTML and MyST ``%``), MyST targets (``(label)=``), reference
  definitions, rules and lists made only of links go.
"""

from __future__ import annotations

import re
import textwrap

from benchsmith.tools.text.headings import heading_marker
from benchsmith.tools.text.protected_spans import ProtectedSpans
from benchsmith.tools.text.rst_text import rst_to_text
from benchsmith.tools.text.sphinx_markup import (
    code_language,
    directive_kind,
    fenced_code,
    link_only_list_end,
    role_text,
    version_line,
    without_inventory,
)

FRONT_MATTER = re.compile(r"\A(---|\+\+\+)\n.*?\n(?:---|\+\+\+|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})\s*(.*?)\s*$")
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
HEADING_ATTRIBUTES = re.compile(r"\s*\{[#.][^}]*\}\s*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
MYST_TARGET = re.compile(r"^\s*\([^()]+\)=\s*$")  # (label)=, (pypug labels)=
MYST_COMMENT = re.compile(r"^\s*%")
MYST_BLOCK_BREAK = re.compile(r"^\s*\+\+\+")
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*\S+")
RULE = re.compile(r"^ {0,3}([-*_])(\s*\1){2,}\s*$")
MKDOCS_ADMONITION = re.compile(r'^\s*(?:!!!|\?\?\?\+?)\s*[\w-]+(?:\s+"(.*)")?\s*$')
MKDOCS_TAB = re.compile(r'^\s*===[+!]*\s+"(.*)"\s*$')  # pymdownx.tabbed: === "Python 3.10+"
GITHUB_ALERT = re.compile(r"^\s*\[!\w+\]\s*$")
BLOCKQUOTE = re.compile(r"^\s*(?:>\s?)+")
DEFINITION = re.compile(r"^(\s*):\s+")
OPTION = re.compile(r"^:[\w-]+:(\s|$)")
FIELD = re.compile(r"^(\s*):([\w-]+(?: [\w-]+)*):(?=\s|$)")  # a field list item, shown as "name: body"
COMMENT = re.compile(r"<!--.*?-->", re.S)
# Lines with nothing for a reader (a setext underline with no title above is a rule).
DROPPED_LINES = (RULE, SETEXT, MYST_TARGET, MYST_COMMENT, MYST_BLOCK_BREAK, REFERENCE_DEFINITION)
LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\([^)]*\)|\[[^\]]+\]\[[^\]]*\]"
    r"|\{(?:doc|ref|any|numref|download|external[\w:+-]*)\}`[^`]+`|<https?://[^>]+>|https?://\S+"
)

_ROLE = re.compile(r"\{([\w.+:-]+)\}(`+)(.+?)\2", re.S)
_CODE = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
_ATTRIBUTE = r"(?:[#.][\w-]+|[\w-]+=(?:\"[^\"]*\"|[^\s}]+))"
_ATTRIBUTE_LIST = rf"\{{{_ATTRIBUTE}(?:\s+{_ATTRIBUTE})*\}}"
_SPAN = re.compile(r"(?<!!)\[([^\[\]]+)\]" + _ATTRIBUTE_LIST)  # MyST attrs_inline: [text]{#id .class}
_ATTRIBUTES = re.compile(r"(?<=[\])>\ue003])" + _ATTRIBUTE_LIST)
_IMAGE = re.compile(r"!\[((?:[^\[\]]|\[[^\]]*\])*)\](?:\((?:[^()]|\([^)]*\))*\)|\[[^\]]*\])")
_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])+)\](?:\((?:[^()]|\([^)]*\))*\)|\[[^\]]*\])")
_AUTOLINK = re.compile(r"<([A-Za-z][\w+.-]{1,31}:[^<>\s]*)>")
# A reference to another project's or this project's target, shown by its name:
# <pypug:Version Specifier>, <inv:pypug#Version Specifier>, <project:#label>.
_INVENTORY_LINK = re.compile(
    r"(?<![\w<])<(?!(?:https?|ftp|ftps|mailto|file|ssh|git|news|tel|data):)"
    r"([a-z][\w+-]*):(?!//)([^<>\n`]+)>"
)
_EMPTY_LINK = re.compile(r"(?<!!)\[\]\(<?([^()\s<>]+)>?\)")  # [](target): MyST shows the target's title
_HTML_TAG = re.compile(
    r"</?(?:a|abbr|b|big|blockquote|br|center|cite|code|dd|del|details|div|dl|dt|em|figcaption|figure|font|h[1-6]"
    r"|hr|i|iframe|img|input|ins|kbd|li|mark|ol|p|picture|pre|q|s|samp|small|source|span|strike|strong|sub|summary"
    r"|sup|table|tbody|td|tfoot|th|thead|tr|tt|u|ul|var|video|wbr)(?:\s[^<>]*)?/?>",
    re.I,
)
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", re.S)
_EMPHASIS = re.compile(
    r"(?<![\w*\\])\*(?=[^\s*])(.+?)(?<=[^\s*\\])\*(?![\w*])"
    r"|(?<![\w\\])_(?=[^\s_])(.+?)(?<=[^\s_\\])_(?!\w)",
    re.S,
)
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~", re.S)
_FOOTNOTE_REFERENCE = re.compile(r"\[\^[^\]\s]+\]")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def markdown_to_text(source: str) -> str:
    """The reader's text of a Markdown or MyST document, headings marked."""
    source = FRONT_MATTER.sub("", source.replace("\t", "    "), count=1)
    return "\n".join(_convert([line.rstrip() for line in source.split("\n")]))


def markdown_inline(text: str) -> str:
    """Inline markup of a paragraph to plain text; code spans keep their content as is."""
    kept = ProtectedSpans()
    protect = kept.protect
    text = _ROLE.sub(lambda m: protect(role_text(m.group(1), m.group(3).strip())), text)
    text = _CODE.sub(lambda m: protect(m.group(2).strip() if m.group(2).strip() else m.group(2)), text)
    text = _EMPTY_LINK.sub(lambda m: _target_name(m.group(1)), text)
    text = _INVENTORY_LINK.sub(lambda m: _target_name(f"{m.group(1)}:{m.group(2)}"), text)
    text = _SPAN.sub(r"\1", text)
    text = _ATTRIBUTES.sub("", text)
    text = _IMAGE.sub(lambda m: m.group(1), text)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _HTML_TAG.sub("", text)
    text = _FOOTNOTE_REFERENCE.sub("", text)
    text = _STRONG.sub(r"\2", text)
    text = _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), text)
    text = _STRIKE.sub(r"\1", text)
    text = _ESCAPE.sub(r"\1", text)
    return kept.restore(text)


def _target_name(target: str) -> str:
    """What a reader sees for a link with no text of its own: the target without its scheme
    or inventory (``inv:pypug#Version Specifier`` → ``Version Specifier``, ``#label`` → ``label``)."""
    name = without_inventory(target)
    if name.startswith(("inv:", "project:")) or "#" in name:
        name = name.split(":", 1)[-1] if name.startswith(("inv:", "project:")) else name
        name = name.rsplit("#", 1)[-1] or name
    return name.strip() or target


def _closing_fence(lines: list[str], start: int, fence: str) -> int:
    """Index of the line closing ``fence`` (same character, at least as long), or the end.
    Colon fences nest (MyST writes ``:::{note}`` inside ``:::{tip}``); backtick and tilde
    fences do not (CommonMark)."""
    closing = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
    opening = re.compile(rf"^\s*:{{{len(fence)},}}\s*\S") if fence[0] == ":" else None
    depth = 0
    for index in range(start, len(lines)):
        if closing.match(lines[index]):
            if depth == 0:
                return index
            depth -= 1
        elif opening is not None and opening.match(lines[index]):
            depth += 1
    return len(lines)


def _convert(lines: list[str]) -> list[str]:
    out: list[str] = []
    paragraph: list[str] = []
    lines = list(lines)

    def flush() -> None:
        if paragraph:
            out.extend(markdown_inline("\n".join(paragraph)).split("\n"))
            paragraph.clear()

    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        fence = FENCE.match(line)
        if fence and not (fence.group(2)[0] == "`" and "`" in fence.group(3)):
            flush()
            end = _closing_fence(lines, index + 1, fence.group(2))
            body = textwrap.dedent("\n".join(lines[index + 1 : end])).split("\n")
            colon_container = fence.group(2)[0] == ":" and not fence.group(3).startswith("{")
            out.extend(["", *_convert(body), ""] if colon_container else _fence(fence.group(3), body))
            index = end + 1
        elif "<!--" in line:
            start = index
            joined = line
            while "-->" not in joined[joined.index("<!--") :] and index + 1 < len(lines):
                index += 1
                joined += "\n" + lines[index]
            closed = "-->" in joined[joined.index("<!--") :]
            replacement = COMMENT.sub("", joined) if closed else joined[: joined.index("<!--")]
            lines[start : index + 1] = replacement.split("\n")
            index = start
            if not closed:
                del lines[start + 1 :]
        elif not stripped:
            flush()
            out.append("")
            index += 1
        elif heading := ATX.match(line):
            flush()
            title = HEADING_ATTRIBUTES.sub("", heading.group(2) or "")
            if title:
                out.extend(["", heading_marker(len(heading.group(1))) + markdown_inline(title), ""])
            index += 1
        elif SETEXT.match(line) and len(paragraph) == 1:
            title = paragraph.pop()
            out.extend(["", heading_marker(1 if stripped[0] == "=" else 2) + markdown_inline(title.strip()), ""])
            index += 1
        elif any(pattern.match(line) for pattern in DROPPED_LINES) or GITHUB_ALERT.match(BLOCKQUOTE.sub("", line)):
            flush()
            index += 1
        elif not paragraph and (list_end := link_only_list_end(lines, index, LINK)) is not None:
            index = list_end
        elif admonition := MKDOCS_ADMONITION.match(line) or MKDOCS_TAB.match(line):
            # its title (an admonition's, a content tab's) is a label of its own, as a built page shows it, not
            # the first words of its text: "Technical Details You could also use ..." (FastAPI's sources,
            # development)
            flush()
            if admonition.group(1):
                out.extend([markdown_inline(admonition.group(1)), ""])
            index += 1
        else:
            line = FIELD.sub(r"\1\2:", DEFINITION.sub(r"\1", BLOCKQUOTE.sub("", line)))
            if line.strip():
                paragraph.append(line)
            index += 1
    flush()
    return out


def _fence(info: str, body: list[str]) -> list[str]:
    """A fenced block: code stays code; a MyST directive goes by its kind."""
    directive = re.match(r"^\{([\w.+:-]+)\}\s*(.*)$", info)
    if directive is None:
        return fenced_code(info.split()[0] if info.split() else "", body)
    name, argument = directive.group(1), directive.group(2).strip()
    kind = directive_kind(name)
    content = _directive_content(body)
    if kind in ("navigation", "silent"):
        return []
    if kind == "eval-rst":
        return ["", *rst_to_text("\n".join(content)).split("\n"), ""]
    if kind == "code":
        return fenced_code(code_language(name.lower(), argument), content)
    if kind == "verbatim":
        return ["", *content, ""]
    if kind == "signature":
        return ["", *(markdown_inline(line) for line in argument.split("\n") if line), "", *_convert(content), ""]
    if kind == "admonition":
        return ["", *_convert(([argument, ""] if argument else []) + content), ""]
    if kind == "versioned":
        return ["", version_line(name.lower(), markdown_inline(argument)), *_convert(content), ""]
    title = [markdown_inline(argument), ""] if kind == "labelled" and argument else []
    return ["", *title, *_convert(content), ""]


def _directive_content(body: list[str]) -> list[str]:
    """A MyST directive's body without its options (``:key: value`` lines or a YAML block)."""
    index = 0
    if body and body[0].strip() == "---":
        closing = next((i for i in range(1, len(body)) if body[i].strip() == "---"), None)
        index = closing + 1 if closing is not None else 0
    else:
        while index < len(body) and OPTION.match(body[index].strip()):
            index += 1
    return body[index:]
