"""reStructuredText with Sphinx extensions to the text a reader of the built page sees.

A line-based converter, tolerant by design: a real documentation tree uses roles and
directives from extensions no parser here knows, so an unknown directive keeps its
content and an unknown role its text, rather than failing as docutils would without the
project's ``conf.py``.

* Section titles (underlined, or over- and underlined) become heading markers
  (``tools.text.headings``); levels follow the order in which adornment styles first appear,
  as in docutils.
* Roles keep their readable text (``tools.text.sphinx_markup.role_text``); hyperlinks
  (```text <url>`_``) their text; inline literals, emphasis, substitutions
  (``.. |name| replace::`` definitions are applied) and footnote references are resolved.
* Directives by kind (``tools.text.sphinx_markup.directive_kind``): code blocks, ``::`` literal
  blocks and doctest blocks keep their code, fenced with its language; admonitions and
  other containers keep their text; toctrees and directives with no reader text go.
* Comments, hyperlink targets (``.. _label:``, ``__ url``), substitution definitions, transitions,
  file-level field lists (``:orphan:``, docinfo) and lists made only of links go.
"""

from __future__ import annotations

import re
import textwrap

from benchsmith.tools.text.headings import heading_marker
from benchsmith.tools.text.protected_spans import ProtectedSpans
from benchsmith.tools.text.sphinx_markup import (
    code_language,
    directive_kind,
    fenced_code,
    link_only_list_end,
    role_text,
    version_line,
)

ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1+\s*$")  # one punctuation character repeated
EXPLICIT = re.compile(r"^(\s*)\.\.(?:\s+(.*))?$")
DIRECTIVE = re.compile(r"^([A-Za-z0-9][\w:.+-]*)::(?:\s+(.*))?$")
SUBSTITUTION_DEFINITION = re.compile(r"^\s*\.\.\s+\|([^|]+)\|\s+([\w:.-]+)::\s*(.*)$")
ANONYMOUS_TARGET = re.compile(r"^\s*__ \S")
FOOTNOTE = re.compile(r"^\[([^\]]+)\]\s*(.*)$")
OPTION = re.compile(r"^:[^:\s`][^:`]*:(\s|$)")
FIELD = re.compile(r"^(\s*):([^:\s`][^:`]*):(?:\s+(.*))?$")
DOCTEST = re.compile(r"^\s*>>>( |$)")
LINE_BLOCK = re.compile(r"^(\s*)\|( +|$)(?!.*\|\s*$)")
# What a navigation list item may be made of: hyperlinks, document and label references, URLs.
LINK = re.compile(
    r"`[^`]*<[^>]+>`__?|`[^`]+`__?|:(?:std:)?(?:doc|ref|any|numref|download|external[\w:+-]*):`[^`]+`"
    r"|<?https?://[^\s>]+>?|(?<![\w`])[A-Za-z][\w.-]*_(?=\W|$)"
)
# Sphinx info fields: how the built page labels them.
FIELD_LABELS = {
    "param": "Parameter",
    "parameter": "Parameter",
    "arg": "Parameter",
    "argument": "Parameter",
    "key": "Parameter",
    "keyword": "Parameter",
    "kwarg": "Parameter",
    "kwparam": "Parameter",
    "type": "Type of",
    "vartype": "Type of",
    "returns": "Returns",
    "return": "Returns",
    "rtype": "Return type",
    "raises": "Raises",
    "raise": "Raises",
    "except": "Raises",
    "exception": "Raises",
    "var": "Variable",
    "ivar": "Variable",
    "cvar": "Variable",
    "yields": "Yields",
    "yield": "Yields",
    "ytype": "Yield type",
}

_LITERAL = re.compile(r"``(.+?)``(?!`)", re.S)
_ROLE = re.compile(r"(?<![\w`]):((?:[\w.+-]+:)*[\w.+-]+):`((?:[^`\\]|\\.)+?)`(?!`)", re.S)
_SUFFIX_ROLE = re.compile(r"`((?:[^`\\]|\\.)+?)`:((?:[\w.+-]+:)*[\w.+-]+):", re.S)
_HYPERLINK = re.compile(r"`((?:[^`\\]|\\.)*?)\s*<([^<>`]+)>`__?", re.S)
_REFERENCE = re.compile(r"`((?:[^`\\]|\\.)+?)`__?", re.S)
_INTERPRETED = re.compile(r"`((?:[^`\\]|\\.)+?)`", re.S)
_SUBSTITUTION = re.compile(r"\|([^|\s](?:[^|]*[^|\s])?)\|(?:__?)?")
_FOOTNOTE_REFERENCE = re.compile(r"\s?\[(?:#[\w-]*|\*|\d+|[A-Za-z][\w.-]*)\]_")
_SIMPLE_REFERENCE = re.compile(r"(?<![\w`/.-])([A-Za-z][\w-]*)_(?=[\s.,;:!?)\]'\"]|$)")
_STRONG = re.compile(r"(?<![\w*])\*\*(?=\S)(.+?)(?<=\S)\*\*(?![\w*])", re.S)
_EMPHASIS = re.compile(r"(?<![\w*\\])\*(?=[^\s*])(.+?)(?<=[^\s*\\])\*(?![\w*])", re.S)
_ESCAPE = re.compile(r"\\([^\sA-Za-z0-9])")


def rst_to_text(source: str) -> str:
    """The reader's text of a reStructuredText document, headings marked."""
    lines = [line.expandtabs(8).rstrip() for line in source.split("\n")]
    return "\n".join(_RstConverter(substitution_definitions(lines)).convert(lines, top=True))


def substitution_definitions(lines: list[str]) -> dict[str, str]:
    """``.. |name| replace:: text`` → text; images and other substitutions show nothing here."""
    definitions = {}
    for line in lines:
        if match := SUBSTITUTION_DEFINITION.match(line):
            name, directive, value = match.groups()
            definitions[name] = rst_inline(value, {}) if directive == "replace" else ""
    return definitions


def rst_inline(text: str, substitutions: dict[str, str]) -> str:
    """Inline markup of a paragraph to plain text (roles, links, literals, emphasis...)."""
    literals = ProtectedSpans()
    protect = literals.protect
    text = _LITERAL.sub(lambda m: protect(" ".join(m.group(1).split()) if "\n" in m.group(1) else m.group(1)), text)
    text = _ROLE.sub(lambda m: protect(role_text(m.group(1), m.group(2))), text)
    text = _SUFFIX_ROLE.sub(lambda m: protect(role_text(m.group(2), m.group(1))), text)
    text = _HYPERLINK.sub(lambda m: protect(_unescape(" ".join((m.group(1) or m.group(2)).split()))), text)
    text = _REFERENCE.sub(lambda m: protect(_unescape(" ".join(m.group(1).split()))), text)
    text = _INTERPRETED.sub(lambda m: protect(_unescape(" ".join(m.group(1).split()))), text)
    text = _SUBSTITUTION.sub(lambda m: substitutions.get(m.group(1), m.group(1)), text)
    text = _FOOTNOTE_REFERENCE.sub("", text)
    text = _SIMPLE_REFERENCE.sub(r"\1", text)
    text = _STRONG.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\1", text)
    text = _unescape(text)
    return literals.restore(text)


def _unescape(text: str) -> str:
    return _ESCAPE.sub(r"\1", text.replace("\\ ", ""))


def _indentation(line: str) -> int:
    return len(line) - len(line.lstrip())


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """End of the block that starts at ``start``: blank lines and lines indented more
    than ``indent``; trailing blank lines are left to the caller."""
    end = start
    while end < len(lines) and (not lines[end].strip() or _indentation(lines[end]) > indent):
        end += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return end


def _dedent(lines: list[str]) -> list[str]:
    return textwrap.dedent("\n".join(lines)).split("\n") if lines else []


def _trim(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


class _RstConverter:
    def __init__(self, substitutions: dict[str, str]):
        self.substitutions = substitutions
        self.styles: list[tuple[str, bool]] = []  # adornment styles in order of appearance = levels
        self.highlight = ""  # the language `.. highlight::` sets for literal blocks
        self.seen_content = False  # file-level field lists come before any content

    def inline(self, text: str) -> str:
        return rst_inline(text, self.substitutions)

    def heading(self, title: str, character: str, overlined: bool) -> list[str]:
        style = (character, overlined)
        if style not in self.styles:
            self.styles.append(style)
        return ["", heading_marker(self.styles.index(style) + 1) + self.inline(title.strip()), ""]

    def convert(self, lines: list[str], top: bool = False) -> list[str]:
        out: list[str] = []
        paragraph: list[str] = []

        def flush() -> None:
            if paragraph:
                out.extend(self.inline("\n".join(paragraph)).split("\n"))
                paragraph.clear()
                self.seen_content = True

        index = 0
        while index < len(lines):
            line = lines[index]
            stripped = line.strip()
            indent = _indentation(line)
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if not stripped:
                flush()
                out.append("")
                index += 1
            elif explicit := EXPLICIT.match(line):
                flush()
                end = _block_end(lines, index + 1, indent)
                out.extend(self.explicit(explicit.group(2) or "", _dedent(lines[index + 1 : end])))
                index = end
            elif (
                ADORNMENT.match(line)
                and index + 2 < len(lines)
                and lines[index + 1].strip()
                and lines[index + 2].strip() == stripped
                and not ADORNMENT.match(lines[index + 1])
            ):
                flush()
                out.extend(self.heading(lines[index + 1], stripped[0], overlined=True))
                index += 3
            elif (
                indent == 0
                and not paragraph
                and ADORNMENT.match(following)
                and not ADORNMENT.match(line)
                and len(following.strip()) >= min(len(stripped), 4)
            ):
                out.extend(self.heading(stripped, following.strip()[0], overlined=False))
                index += 2
            elif ADORNMENT.match(line) and len(stripped) >= 4 and not paragraph:
                index += 1  # a transition
            elif ANONYMOUS_TARGET.match(line) and not paragraph:
                index = _block_end(lines, index + 1, indent)  # "__ https://..." is ".. __: https://..."
            elif FIELD.match(line) and not paragraph and top and not self.seen_content:
                index = _block_end(lines, index + 1, indent)  # :orphan:, :tocdepth:, docinfo
            elif not paragraph and (list_end := link_only_list_end(lines, index, LINK)) is not None:
                index = list_end
            elif DOCTEST.match(line) and not paragraph:
                end = index
                while end < len(lines) and lines[end].strip():
                    end += 1
                out.extend(fenced_code("pycon", _dedent(lines[index:end])))
                index = end
            elif stripped.endswith("::") and self.literal_block_follows(lines, index):
                end = _block_end(lines, index + 1, indent)
                text = line.rstrip()[:-2].rstrip()
                if text.strip():
                    paragraph.append(text if line.rstrip()[-3:-2].isspace() else text + ":")
                flush()
                out.extend(fenced_code(self.highlight, _dedent(lines[index + 1 : end])))
                index = end
            else:
                kept: str | None = line
                if match := FIELD.match(line):
                    kept = self.field_line(match)
                elif match := LINE_BLOCK.match(line):
                    kept = line[match.end() :]
                if kept is not None:
                    paragraph.append(kept)
                index += 1
        flush()
        return out

    def literal_block_follows(self, lines: list[str], index: int) -> bool:
        """A ``::`` paragraph introduces a literal block: blank line, then more indentation."""
        if index + 1 >= len(lines) or lines[index + 1].strip():
            return False
        following = next((line for line in lines[index + 1 :] if line.strip()), None)
        return following is not None and _indentation(following) > _indentation(lines[index])

    def field_line(self, match: re.Match[str]) -> str | None:
        """``:param path: the path`` → ``Parameter path: the path``; ``:meta ...:`` goes."""
        indent, name, body = match.group(1), match.group(2).split(), (match.group(3) or "").strip()
        if name[0] == "meta":
            return None
        label = " ".join([FIELD_LABELS.get(name[0].lower(), name[0]), *name[1:]])
        return f"{indent}{label}: {body}".rstrip() if body else f"{indent}{label}:"

    def explicit(self, text: str, body: list[str]) -> list[str]:
        """An explicit markup block: directive, footnote, or (dropped) comment or target."""
        if not text or text.startswith(("_", "|")):
            return []  # comments, hyperlink targets, substitution definitions
        if directive := DIRECTIVE.match(text):
            return self.directive(directive.group(1), directive.group(2) or "", body)
        if footnote := FOOTNOTE.match(text):
            return ["", *self.convert([footnote.group(2), *body]), ""]
        return []  # a comment

    def directive(self, name: str, argument: str, body: list[str]) -> list[str]:
        kind = directive_kind(name)
        head_end = next((i for i, line in enumerate(body) if not line.strip()), len(body))
        arguments, options_seen = [argument] if argument else [], False
        extra: list[str] = []  # head lines that are neither arguments nor options: content
        for line in body[:head_end]:
            if OPTION.match(line.strip()) and not line[:1].isspace():
                options_seen = True
            elif options_seen and line[:1].isspace():
                continue  # an option's continuation
            elif kind == "signature" and not options_seen:
                arguments.append(line.strip())
            else:
                extra.append(line)
        content = _trim(extra + body[head_end:])
        if name.lower() == "highlight":
            self.highlight = code_language(name, argument)
        if kind in ("navigation", "silent"):
            return []
        if kind == "code":
            return fenced_code(code_language(name.lower(), argument), _dedent(content))
        if kind == "verbatim":
            return ["", *_dedent(content), ""]
        if kind == "signature":
            return ["", *(self.inline(signature) for signature in arguments), "", *self.convert(_dedent(content)), ""]
        if kind == "admonition":
            return ["", *self.convert(_dedent(([argument] if argument else []) + content)), ""]
        if kind == "versioned":
            first = version_line(name.lower(), self.inline(argument))
            return ["", first, *self.convert(_dedent(content)), ""]
        title = [self.inline(argument), ""] if kind == "labelled" and argument.strip() else []
        return ["", *title, *self.convert(_dedent(content)), ""]
