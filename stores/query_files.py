"""Real user queries without labels, for ``benchsmith select``.

Two forms:

* a text file: one query per non-blank line; its id is ``q<line number>``;
* a JSONL file (``.jsonl``): one object per line with the query under ``question``, ``query``
  or ``text``; an id under ``id``, ``_id`` or ``query_id`` (default ``q<line number>``); and,
  for a conversational query, the earlier turns under ``history``, a list of
  ``{"question", "answer"}`` objects (or of earlier questions as strings)::

      {"id": "c7_t2", "question": "and for the other one?",
       "history": [{"question": "How do I sort a dict by value?", "answer": "Use sorted(...)."}]}

Queries become :class:`~stores.formats.beir.BenchmarkQuery` objects, the form every retriever and
judge of benchsmith reads. A malformed line, a duplicate id or an empty file stops with an
:class:`InputError` naming the file and line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import BenchmarkQuery
from benchsmith.stores.persistence.jsonl import open_user_file, read_jsonl, text_lines

ID_KEYS = ("id", "_id", "query_id")
TEXT_KEYS = ("question", "query", "text")


def read_user_queries(path: str | Path) -> list[BenchmarkQuery]:
    path = Path(path)
    open_user_file(path, "rb").close()  # a missing file or a directory stops here, named
    queries = _read_jsonl(path) if path.suffix == ".jsonl" else _read_text(path)
    if not queries:
        raise InputError(f"{path}: no queries")
    return queries


def _read_text(path: Path) -> list[BenchmarkQuery]:
    return [
        BenchmarkQuery(id=f"q{number}", text=line.strip(), question=line.strip())
        for number, line in enumerate(text_lines(path), start=1)
        if line.strip()
    ]


def _read_jsonl(path: Path) -> list[BenchmarkQuery]:
    queries: list[BenchmarkQuery] = []
    seen: dict[str, int] = {}
    for number, record in read_jsonl(path):
        where = f"{path}:{number}"
        question = next((record[key] for key in TEXT_KEYS if key in record), None)
        if not isinstance(question, str) or not question.strip():
            raise InputError(f"{where}: no query text (a non-empty 'question', 'query' or 'text')")
        raw_id = next((record[key] for key in ID_KEYS if key in record), f"q{number}")
        if not isinstance(raw_id, str | int) or isinstance(raw_id, bool) or str(raw_id) == "":
            raise InputError(f"{where}: the id must be a non-empty string or number")
        query_id = str(raw_id)
        if query_id in seen:
            raise InputError(f"{where}: query id {query_id!r} repeats line {seen[query_id]}")
        seen[query_id] = number
        history = _history(record.get("history"), where)
        queries.append(
            BenchmarkQuery(
                id=query_id,
                text=question.strip(),
                question=question.strip(),
                conversation_id=str(record.get("conversation_id") or query_id) if history else None,
                history=history,
            )
        )
    return queries


def _history(raw: Any, where: str) -> list[tuple[str, str]]:
    if raw in (None, []):
        return []
    if not isinstance(raw, list):
        raise InputError(f"{where}: 'history' must be a list of earlier turns")
    turns = []
    for turn in raw:
        if isinstance(turn, str) and turn.strip():
            turns.append((turn.strip(), ""))
        elif isinstance(turn, dict) and isinstance(turn.get("question"), str):
            turns.append((turn["question"], str(turn.get("answer") or turn.get("response") or "")))
        else:
            raise InputError(
                f'{where}: each \'history\' turn is a question string or a {{"question", "answer"}} object'
            )
    return turns
