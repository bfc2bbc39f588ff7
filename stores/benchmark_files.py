"""Benchmark files: our dialogue JSONL, BEIR and TREC.

``dialogues.jsonl`` has one conversation per line::

    {"conversation_id": "c0007", "cluster_id": 12, "seed": 0,
     "turns": [{"index": 0, "question": "...", "question_unpolished": "...", "rewrite": "...",
                "response": "...", "gold_ids": ["<chunk id>"], "switch": "start",
                "similarity_to_previous": null, "polish_rejected": null, "switch_drawn": "start",
                "lexical_overlap": 0.5, "overlap_rejected": false, "overlap_corrections": 0,
                "overlap_replans": 0, "form_replans": 0}, ...]}

``switch`` is how the turn relates to the one before: ``start`` (turn 0), ``follow-up``
(same gold chunk), ``soft`` (a chunk of the neighbourhood on the cluster's semantic path,
more similar to the previous gold than random pairs of chunks are, by a margin) or ``hard``
(a distant cluster, or a switch whose neighbourhood held no chunk that similar).
``similarity_to_previous`` is the cosine similarity of the turn's gold chunk to the previous
turn's (absent or null on turn 0 and in files written before it existed). ``question`` is the
question as asked (polished from turn 1 on), ``question_unpolished`` the questioner's
original, ``rewrite`` a self-contained form. ``lexical_overlap`` is the share of the
unpolished question's content-word stems found in its gold chunk; a question above
``--max-overlap`` was asked again (``overlap_corrections``) or moved to another chunk
(``overlap_replans``), and one still above it is kept with ``overlap_rejected`` true; an
ill-formed question (evals/question_form.py) moved its turn to another chunk (``form_replans``).

BEIR: ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl`` (``_id``, ``text``
and ``metadata``), ``qrels/<split>.tsv`` (``query-id corpus-id score`` with a header).
TREC files: :mod:`stores.trec`.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from benchsmith.history import exchanges, query_text
from benchsmith.stores.files import atomic_writer
from benchsmith.stores.jsonl import load_jsonl, write_jsonl_atomic
from benchsmith.stores.trec import Qrel



class Turn(BaseModel):
    """One turn of a synthesized conversation (the schema above)."""

    index: int
    question: str
    question_unpolished: str
    rewrite: str
    response: str
    gold_ids: list[str]
    switch: Literal["start", "follow-up", "soft", "hard"]
    similarity_to_previous: float | None = None
    polish_rejected: str | None = None
    switch_drawn: str | None = None  # what the router drew; ``switch`` is what the similarity rule allowed
    lexical_overlap: float | None = None  # the unpolished question's overlap with its gold (evals/lexical_overlap.py)
    overlap_rejected: bool = False  # still above --max-overlap after every correction and re-plan
    overlap_corrections: int = 0  # corrective turns the questioner was given
    overlap_replans: int = 0  # other gold chunks tried for the overlap
    form_replans: int = 0  # other gold chunks tried because the question was ill-formed (a template, a fragment...)


class Dialogue(BaseModel):
    """One line of ``dialogues.jsonl``."""

    conversation_id: str
    cluster_id: int | None = None  # None when the conversation walked a given list of chunks
    seed: int = 0
    turns: list[Turn]


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
    return query_text(exchanges(turns[:index]), turns[index]["question"], window)


def write_beir(directory: Path, corpus: Iterable[dict[str, Any]], queries: Iterable[dict[str, Any]],
               qrels: Iterable[Qrel], split: str = "test") -> None:
    write_jsonl_atomic(directory / "corpus.jsonl", corpus)
    write_jsonl_atomic(directory / "queries.jsonl", queries)
    write_beir_qrels(directory / "qrels" / f"{split}.tsv", qrels)


def write_beir_qrels(path: Path, qrels: Iterable[Qrel]) -> None:
    """``query-id<TAB>corpus-id<TAB>score`` with a header, written atomically."""
    with atomic_writer(path, newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["query-id", "corpus-id", "score"])
        writer.writerows(qrels)
