"""Questions with an accepted answer, the input of a nugget benchmark, read from JSON Lines.

One pair per line::

    {"id": "q17", "question": "<title and body>", "answer": "<the accepted answer>",
     "tags": ["json"]}                                    # tags optional

Ids become TREC query ids, so they must be unique and hold no whitespace. Every line is
checked; a bad one stops with an :class:`~stores.errors.InputError` naming the file and line.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import read_jsonl


@dataclass(frozen=True)
class QAPair:
    id: str
    question: str  # title and body
    answer: str  # the accepted answer
    tags: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def check_query_id(query_id: str, where: str) -> None:
    """A TREC query id: non-empty, no whitespace (TREC files split on it)."""
    if not query_id or any(character.isspace() for character in query_id):
        raise InputError(
            f"{where}: id {query_id!r} must be non-empty and hold no whitespace (it becomes a TREC query id)"
        )


def read_qa_jsonl(path: str | Path) -> list[QAPair]:
    """Every pair of a JSONL file, in file order."""
    pairs: list[QAPair] = []
    seen: dict[str, int] = {}
    for line_number, record in read_jsonl(path):
        where = f"{path}:{line_number}"
        pair_id = record.get("id")
        if not isinstance(pair_id, str | int) or isinstance(pair_id, bool):
            raise InputError(f"{where}: missing 'id'")
        pair_id = str(pair_id)
        check_query_id(pair_id, where)
        if pair_id in seen:
            raise InputError(f"{where}: id {pair_id!r} repeats line {seen[pair_id]}")
        seen[pair_id] = line_number
        for name in ("question", "answer"):
            value = record.get(name)
            if not isinstance(value, str) or not value.strip():
                raise InputError(f"{where}: missing or empty '{name}' for id {pair_id!r}")
        tags = record.get("tags") or []
        if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
            raise InputError(f"{where}: 'tags' must be a list of strings for id {pair_id!r}")
        pairs.append(QAPair(pair_id, record["question"].strip(), record["answer"].strip(), list(tags)))
    if not pairs:
        raise InputError(f"{path}: no question-answer pairs")
    return pairs
