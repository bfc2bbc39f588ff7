"""Prompt sections: the one way untrusted text (documents, their titles, user questions, model
replies) enters a prompt, inside tagged sections that nothing in it can close early
(tests/test_prompt_sections.py tries every agent's prompt with hostile texts)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Any


class Section(str):
    """Prompt text made of :func:`delimited` sections: it nests in another section as it is (its
    tags are ours, and the untrusted text inside them is defused already)."""


# What opens a closing tag of any name, case or spacing: "</x>", "</ X >", "</x" then a newline.
CLOSING_TAG_OPENER = re.compile(r"<(?=\s*/)")


def defused(text: str) -> str:
    """Untrusted text that can close no prompt section: each ``<`` that opens a closing tag
    becomes ``&lt;`` (a model reads it as the same character); the rest is left as it was."""
    return CLOSING_TAG_OPENER.sub("&lt;", text)


def attribute(value: Any) -> str:
    """A value for a tag's attribute (a title is document text): one line, HTML-escaped, so no
    quote or bracket in it ends the attribute or the tag."""
    return html.escape(" ".join(str(value).split()), quote=True)


def delimited(tag: str, text: str, **attributes: Any) -> Section:
    """The one way untrusted text (documents, their titles, user questions, model replies) enters a
    prompt: inside a tagged section, its attribute values escaped and every closing tag in it
    defused (:func:`defused`), so nothing in it ends the section early. ``text`` that is already a
    :class:`Section` (sections nested in this one) goes in as it is."""
    attrs = "".join(f' {key}="{attribute(value)}"' for key, value in attributes.items())
    body = text if isinstance(text, Section) else defused(text)
    return Section(f"<{tag}{attrs}>\n{body}\n</{tag}>")


def sections(parts: Iterable[Section], separator: str = "\n") -> Section:
    """Delimited sections one after another, to nest in another section."""
    parts = list(parts)
    if not all(isinstance(part, Section) for part in parts):
        raise TypeError("sections() joins delimited() sections only: delimit untrusted text first")
    return Section(separator.join(parts))


def numbered(tag: str, texts: Iterable[str]) -> Section:
    """``texts`` as delimited sections numbered from 1, one a line: the items a model answers by number."""
    return sections(delimited(tag, text, number=number) for number, text in enumerate(texts, start=1))


def listed(texts: Iterable[str]) -> str:
    """Short texts (earlier questions, nuggets) as ``- text`` lines, for a delimited section."""
    return "\n".join(f"- {text}" for text in texts)


def system_and_user(system: str, *sections: str) -> list[dict[str, str]]:
    """A role's request: its system prompt, then one user message of ``sections`` (delimited
    sections, the task) apart by blank lines."""
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(sections)}]
