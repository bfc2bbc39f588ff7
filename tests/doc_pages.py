"""One-chunk documentation pages for synthesis tests, made so that every turn type is real somewhere.

Page ``i`` is about topic ``topics[i % len(topics)]`` and documents one API entry,
``<topic>.<operation>`` with ``OPERATIONS[i // 10]``: each entry on one page only (an unanswerable
turn about a held-out page stays unanswerable), while pages of one ten share the entry's last name
across topics (``chroma.load_ledger`` and ``bm25.load_ledger``: an underspecified turn's two
meanings). A topic's pages of tens ``2k`` and ``2k + 1`` are about one table: the first says what
the entry does, what it raises and what the table is; the second its parameters, a condition and
what a user can do with the table (a multi-passage or partial turn's one subject, from two pages
that complement each other). Other names, drawn at random, keep any two pages apart (no
near-duplicates) and their words rare.
"""

from __future__ import annotations

import random
from pathlib import Path

OPERATIONS = (
    "load_ledger",
    "load_journal",
    "open_spool",
    "open_archive",
    "read_manifest",
    "read_catalog",
    "scan_bundle",
    "scan_index",
    "sync_buffer",
    "sync_queue",
    "merge_cursor",
    "merge_profile",
)
NOUNS = (
    "ledger journal spool archive snapshot manifest registry catalog bundle index buffer queue cursor "
    "profile token lease quota digest shard replica"
).split()
TABLES = ("quartz", "amber", "cobalt", "ember", "garnet", "jasper")


def page(number: int, topic: str, rng: random.Random) -> str:
    """The page's text (see the module docstring)."""

    def name() -> str:
        return f"{rng.choice(NOUNS)}{rng.randrange(400)}"

    ten = number // 10
    entry = f"{topic}.{OPERATIONS[ten % len(OPERATIONS)]}"
    table = f"{TABLES[(ten // 2) % len(TABLES)]} {topic}"  # one table for tens 2k and 2k + 1 of a topic
    thing, extra = name(), name()
    if ten % 2 == 0:
        return (
            f"{entry}(path, timeout=None)\n\n"
            f"Loads the {thing} records of page {number} and returns the {table} table.\n\n"
            f"It raises ValueError if the {extra} file of page {number} is missing.\n\n"
            f"The {table} table is a mapping from {thing} keys to the rows of the {extra} file."
        )
    return (
        f"{entry}(path, timeout=None)\n\n"
        f"Parameters\n\n"
        f"path – The folder that holds the {thing} files of page {number}.\n\n"
        f"timeout – How long to wait for the {extra} lock, in seconds.\n\n"
        f"If the {extra} lock is held by another process, the {topic} store waits for {thing} readers.\n\n"
        f"You can compact the {table} table with the vacuum command of page {number}."
    )


def write_pages(directory: Path, topics: list[str], documents: int, seed: int = 0, prefix: str = "doc") -> Path:
    """``documents`` pages, ``prefix000.txt`` onwards, about ``topics`` in turn."""
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    for number in range(documents):
        (directory / f"{prefix}{number:03}.txt").write_text(
            page(number, topics[number % len(topics)], rng), encoding="utf-8"
        )
    return directory
