"""Spans of a paragraph kept out of the inline rules that follow (code, a role's text), shared by the
reStructuredText and Markdown converters: each is replaced by a numbered placeholder of private-use
characters, and put back once every rule has run."""

from __future__ import annotations

import re

PLACEHOLDER = "\ue002{}\ue003"
PLACEHOLDER_PATTERN = re.compile("\ue002(\\d+)\ue003")


class ProtectedSpans:
    def __init__(self) -> None:
        self.kept: list[str] = []

    def protect(self, value: str) -> str:
        """The placeholder that stands for ``value`` until :meth:`restore`."""
        self.kept.append(value)
        return PLACEHOLDER.format(len(self.kept) - 1)

    def restore(self, text: str) -> str:
        while PLACEHOLDER_PATTERN.search(text):  # placeholders may hold placeholders
            text = PLACEHOLDER_PATTERN.sub(lambda m: self.kept[int(m.group(1))], text)
        return text
