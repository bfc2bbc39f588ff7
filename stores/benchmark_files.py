"""Benchmark files: our dialogue JSONL, BEIR and TREC.

``dialogues.jsonl`` has one conversation per line::

    {"conversation_id": "c0007", "cluster_id": 12, "seed": 0,
     "turns": [{"index": 0, "question": "...", "question_unpolished": "...", "rewrite": "...",
                "response": "...", "gold_ids": ["<chunk id>"], "switch": "start",
                "polish_rejected": null}, ...]}

``switch`` is how the turn relates to the one before: ``start`` (turn 0), ``follow-up``
(same gold chunk), ``soft`` (next chunk on the cluster's semantic path) or ``hard`` (a
distant cluster). ``question`` is the question as asked (polished from turn 1 on),
``question_unpolished`` the questioner's original, ``rewrite`` a self-contained form.

BEIR: ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl`` (``_id``, ``text``
and ``metadata``), ``qrels/<split>.tsv`` (``query-id corpus-id score`` with a header).
TREC files: :mod:`stores.trec`.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchsmith.stores.jsonl import append_jsonl, load_jsonl, write_jsonl_atomic
from benchsmith.stores.trec import Qrel



def recorded_ids(path: Path, key: str = "conversation_id") -> set[str]:
    return {record[key] for record in load_jsonl(path)} if path.exists() else set()


def append_once(path: Path, record: dict[str, Any], key: str = "conversation_id") -> bool:
    """Append a finished item unless one with its id is there already (a re-run after a kill)."""
    if record[key] in recorded_ids(path, key):
        return False
    append_jsonl(path, record)
    return True


def canonicalize(path: Path, key: str = "conversation_id") -> list[dict[str, Any]]:
    """Rewrite the file sorted by id, first occurrence of each id kept: a stable final form
    whatever order concurrent workers finished in."""
    unique: dict[str, dict[str, Any]] = {}
    for record in load_jsonl(path) if path.exists() else []:
        unique.setdefault(record[key], record)
    records = [unique[identifier] for identifier in sorted(unique)]
    write_jsonl_atomic(path, records)
    return records


def serialize_history(turns: list[dict[str, Any]], index: int, window: int | None = None) -> str:
    """The query text of turn ``index``: earlier turns as ``User:``/``Agent:`` lines (the last
    ``window`` of them, all if None), then the current question."""
    earlier = turns[:index] if window is None else turns[max(0, index - window) : index]
    lines = [line for turn in earlier for line in (f"User: {turn['question']}", f"Agent: {turn['response']}")]
    return "\n".join([*lines, f"User: {turns[index]['question']}"])


def write_beir(directory: Path, corpus: Iterable[dict[str, Any]], queries: Iterable[dict[str, Any]],
               qrels: Iterable[Qrel], split: str = "test") -> None:
    write_jsonl_atomic(directory / "corpus.jsonl", corpus)
    write_jsonl_atomic(directory / "queries.jsonl", queries)
    write_beir_qrels(directory / "qrels" / f"{split}.tsv", qrels)


def write_beir_qrels(path: Path, qrels: Iterable[Qrel]) -> None:
    """``query-id<TAB>corpus-id<TAB>score`` with a header, written atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["query-id", "corpus-id", "score"])
        writer.writerows(qrels)
    os.replace(temporary, path)
