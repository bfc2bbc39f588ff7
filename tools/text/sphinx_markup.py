"""What Sphinx shows for roles and directives, shared by the reStructuredText and MyST
converters (``rst_text``, ``markdown_text``).

Roles render as their readable text: ``{ref}`text <target>``` and ``:doc:`Title <path>```
show the title (``:term:`` too), ``:func:`os.path.join``` its target, ``:py:meth:`~a.b.c``` the last part
(Sphinx's ``~``), ``:pep:`8``` "PEP 8"; an intersphinx prefix goes (``{ref}`pypug:Version Specifier``` →
"Version Specifier"). Directives fall into kinds: code (content kept as
a fenced block), navigation (toctree and friends: dropped), silent (no reader text:
images, metadata, module context, autodoc: dropped), signature (API entries: the
signature line and the description kept), labelled (admonition, tab, card: title and
content kept), versioned ("Added in version 3.2: ..."), and by default content kept.
"""

from __future__ import annotations

import re

CODE_DIRECTIVES = {
    "code",
    "code-block",
    "sourcecode",
    "code-cell",
    "code-tab",
    "ipython",
    "jupyter-execute",
    "doctest",
    "testcode",
    "testoutput",
    "prompt",
    "parsed-literal",
}
NAVIGATION_DIRECTIVES = {"toctree", "contents", "autosummary", "sectnum", "section-numbering", "tableofcontents"}
# ("class" is not here: in Sphinx it documents a Python class, a signature directive.)
SILENT_DIRECTIVES = {
    "image",
    "meta",
    "highlight",
    "currentmodule",
    "module",
    "default-domain",
    "default-role",
    "role",
    "include",
    "literalinclude",
    "raw",
    "tabularcolumns",
    "rst-class",
    "cssclass",
    "title",
    "footer",
    "header",
    "target-notes",
    "sectionauthor",
    "moduleauthor",
    "codeauthor",
    "index",
    "program",
    "testsetup",
    "testcleanup",
    "graphviz",
    "graph",
    "digraph",
    "inheritance-diagram",
    "mermaid",
    "plot",
    "youtube",
    "video",
    "iframe",
    "tags",
    "bibliography",
    "todolist",
    "thumbnail",
}
SIGNATURE_OBJECTS = {
    "function",
    "class",
    "method",
    "attribute",
    "data",
    "exception",
    "decorator",
    "decoratormethod",
    "staticmethod",
    "classmethod",
    "property",
    "describe",
    "object",
    "option",
    "cmdoption",
    "envvar",
    "confval",
    "type",
    "member",
    "macro",
    "struct",
    "union",
    "enum",
    "enumerator",
    "var",
    "namespace",
    "concept",
    "setting",
    "event",
    "directive",
    "role",
    "fixture",
    "abstractmethod",
    "coroutinefunction",
    "coroutinemethod",
}
LABELLED_DIRECTIVES = {
    "admonition",
    "topic",
    "sidebar",
    "rubric",
    "tab",
    "group-tab",
    "tab-item",
    "dropdown",
    "card",
    "grid-item-card",
    "table",
    "list-table",
    "csv-table",
    "figure-md",
    "div",
    "margin",
    "exercise",
    "solution",
    "prf:definition",
    "prf:theorem",
    "centered",
}
# Admonitions whose first line is already content ("`.. note:: Read this.`").
ADMONITIONS = {
    "note",
    "warning",
    "tip",
    "hint",
    "important",
    "caution",
    "attention",
    "danger",
    "error",
    "seealso",
    "todo",
    "see-also",
}
VERSIONED = {
    "versionadded": "Added in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
    "versionremoved": "Removed in version",
}
VERBATIM_DIRECTIVES = {"math", "productionlist"}
# Domain directives that set the scope of what follows and show nothing (py:module, cpp:namespace).
SCOPE_DIRECTIVES = {"module", "currentmodule", "namespace", "namespace-push", "namespace-pop"}
EVAL_RST = {"eval-rst", "eval-restructuredtext"}
# Languages of code directives whose argument names no language.
NO_LANGUAGE = {"", "default", "none"}


def directive_kind(name: str) -> str:
    """One of code, navigation, silent, signature, labelled, admonition, versioned,
    verbatim, eval-rst, content (the default: content kept, arguments dropped)."""
    name = name.lower()
    bare = name.rsplit(":", 1)[-1]
    if name in EVAL_RST:
        return "eval-rst"
    if name in CODE_DIRECTIVES or bare in CODE_DIRECTIVES:
        return "code"
    if name in NAVIGATION_DIRECTIVES or bare in NAVIGATION_DIRECTIVES:
        return "navigation"
    if name.startswith("auto") or bare.startswith("auto") or name in SILENT_DIRECTIVES or bare in SCOPE_DIRECTIVES:
        return "silent"
    if ":" in name and bare in SIGNATURE_OBJECTS:  # py:function, rst:role, c:macro
        return "signature"
    if bare in SILENT_DIRECTIVES:
        return "silent"
    if name in VERSIONED:
        return "versioned"
    if name in ADMONITIONS:
        return "admonition"
    if name in LABELLED_DIRECTIVES or bare in LABELLED_DIRECTIVES:
        return "labelled"
    if name in VERBATIM_DIRECTIVES:
        return "verbatim"
    if bare in SIGNATURE_OBJECTS and bare not in {"type", "member", "event"}:
        return "signature"
    return "content"


def code_language(name: str, argument: str) -> str:
    """The fence language of a code directive: its argument, else one its name implies."""
    words = argument.split()
    language = words[0] if words else ""
    if language.lower() in NO_LANGUAGE:
        language = ""
    if not language and name in {"doctest", "ipython"}:
        return "pycon" if name == "doctest" else "ipython"
    if not language and name in {"testcode", "jupyter-execute", "code-cell"}:
        return "python"
    return language


def version_line(name: str, argument: str) -> str:
    """``versionadded:: 3.2 The spam parameter.`` → ``Added in version 3.2: The spam parameter.``"""
    version, _, explanation = argument.strip().partition(" ")
    line = f"{VERSIONED[name]} {version}" if version else VERSIONED[name]
    return f"{line}: {explanation.strip()}" if explanation.strip() else f"{line}."


_EXPLICIT_TITLE = re.compile(r"^(.*?)\s*(?<!\\)<([^<>]*)>$", re.S)
# An intersphinx inventory prefix ("pypug:Version Specifier"): a lower-case name and a colon
# before the target itself. Sphinx shows the target's title, never the inventory's name.
INTERSPHINX_PREFIX = re.compile(r"^[a-z][\w+-]*:(?!//|:)(?=\S)")
# Roles whose content is shown literally (no "title <target>", no cross-reference).
LITERAL_ROLES = {
    "abbr",
    "math",
    "kbd",
    "menuselection",
    "guilabel",
    "samp",
    "file",
    "code",
    "command",
    "sup",
    "sub",
    "dfn",
    "regexp",
    "makevar",
    "mailheader",
    "mimetype",
    "newsgroup",
    "program",
}


def without_inventory(target: str) -> str:
    """A cross-reference target without its intersphinx prefix: ``pypug:Version Specifier`` →
    ``Version Specifier`` (``std:label`` and ``py:class`` domains included: a reader never sees them)."""
    return INTERSPHINX_PREFIX.sub("", target.strip(), count=1)


def role_text(name: str, content: str) -> str:
    """What Sphinx shows for a role (``name`` without colons or braces, e.g. ``py:meth``)."""
    bare = name.lower().rsplit(":", 1)[-1]
    content = " ".join(content.split())
    if bare in {"pep", "rfc"}:
        number = content.split("#")[0].strip()
        return f"{bare.upper()} {number}" if number[:1].isdigit() else content
    if bare not in LITERAL_ROLES:  # a cross-reference (``:term:`` takes "title <target>" too)
        if match := _EXPLICIT_TITLE.match(content):
            title, target = match.group(1).strip(), match.group(2).strip()
            content = title or without_inventory(target)
        else:
            content = without_inventory(content)
            if content.startswith("~"):  # Sphinx shows only the last dotted part
                content = content[1:].rsplit(".", 1)[-1]
            elif content.startswith("!"):  # "!" suppresses the link, not the text
                content = content[1:]
    if bare == "menuselection":
        content = content.replace("-->", "→")
    return content.replace("\\<", "<").replace("\\>", ">").replace("\\`", "`")


def fenced_code(language: str, code: list[str]) -> list[str]:
    """A code block as a Markdown fence (longer than any backtick run inside), set apart
    by blank lines; nothing for an empty block."""
    start, end = 0, len(code)
    while start < end and not code[start].strip():
        start += 1
    while end > start and not code[end - 1].strip():
        end -= 1
    if start == end:
        return []
    runs = [len(run) for line in code[start:end] for run in re.findall(r"`{3,}", line)]
    fence = "`" * max([3] + [run + 1 for run in runs])
    return ["", f"{fence}{language}", *code[start:end], fence, ""]


_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+•]|#\.|\d+[.)]|[a-zA-Z][.)])\s+(.*)$")


def list_item(line: str) -> tuple[int, str] | None:
    """``(indentation, text)`` when the line starts a bullet or enumerated list item."""
    match = _LIST_ITEM.match(line)
    return (len(match.group(1)), match.group(2)) if match else None


def link_only_list_end(lines: list[str], start: int, is_link: re.Pattern[str]) -> int | None:
    """If a list starts at ``start`` whose every item is only links or references (a
    navigation list), the index after it; else None. Items may wrap onto indented lines
    and be separated by blank lines; the list ends at the first line that is neither."""
    first = list_item(lines[start])
    if first is None:
        return None
    indent, items, index = first[0], [], start
    while index < len(lines):
        line = lines[index]
        item = list_item(line)
        if item is not None and item[0] == indent:
            items.append(item[1])
        elif line.strip() and len(line) - len(line.lstrip()) > indent and items:
            items[-1] += " " + line.strip()
        elif not line.strip():
            following = next((text for text in lines[index + 1 :] if text.strip()), "")
            next_item = list_item(following)
            if not (next_item and next_item[0] == indent):
                break
        else:
            break
        index += 1
    if not items or any(is_link.sub("", item).strip(" \t,;:.|/·•-–—") for item in items):
        return None
    if not all(is_link.search(item) for item in items):
        return None
    return index
