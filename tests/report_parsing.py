"""The tables of a Markdown report and the tags of an HTML one, read for the report tests."""

import re
from html.parser import HTMLParser


def markdown_tables(markdown: str) -> dict[str, list[list[str]]]:
    """The table of each ``## `` section as rows of cell texts, header first, rule dropped."""
    tables: dict[str, list[list[str]]] = {}
    heading = ""
    for line in markdown.splitlines():
        if line.startswith("## "):
            heading = line.removeprefix("## ")
        elif line.startswith("|") and not re.fullmatch(r"\|(-+:?\|)+", line):
            cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
            tables.setdefault(heading, []).append([cell.strip() for cell in cells])
    return tables


class TagCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {name: value or "" for name, value in attrs}))


def html_tags(text: str) -> list[tuple[str, dict[str, str]]]:
    collector = TagCollector()
    collector.feed(text)
    return collector.tags
