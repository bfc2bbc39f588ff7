"""The nuggets of a benchmark's questions, as text: ``nuggets.jsonl`` in FreshStack's form (what a
`benchsmith nuggets` run writes beside its ``beir/`` folder)::

    {"query_id": "q1", "question": "...", "answer": "...",
     "nuggets": [{"_id": "q1-n1", "text": "...", "relevant_corpus_ids": [...], ...}, ...]}

Only ``query_id`` and each nugget's ``text`` are read. Reading is strict: a malformed line stops
with an :class:`~stores.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import text_lines

NUGGETS_FILE = "nuggets.jsonl"


def nuggets_beside(benchmark_directory: Path) -> Path | None:
    """The benchmark's nuggets.jsonl: in its BEIR folder, else beside it (a nuggets run's layout)."""
    for candidate in (benchmark_directory / NUGGETS_FILE, benchmark_directory.parent / NUGGETS_FILE):
        if candidate.is_file():
            return candidate
    return None


def read_nugget_texts(path: str | Path) -> dict[str, list[str]]:
    """``{query id: [nugget text, ...]}`` in the file's order."""
    path = Path(path)
    nuggets: dict[str, list[str]] = {}
    for line_number, line in enumerate(text_lines(path), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            texts = [str(nugget["text"]) for nugget in record["nuggets"]]
            query_id = str(record["query_id"])
        except (ValueError, KeyError, TypeError) as error:
            raise InputError(
                f'{path}:{line_number}: not a nuggets line ({{"query_id": ..., "nuggets": [{{"text": ...}}]}}): '
                f"{type(error).__name__}: {error}"
            ) from None
        if query_id in nuggets:
            raise InputError(f"{path}:{line_number}: query {query_id!r} is listed twice")
        nuggets[query_id] = [text for text in texts if text.strip()]
    return nuggets
