"""The labels of a conversational turn, and ``turn_labels.tsv``, the file that lists them.

Every turn carries three labels (issue 22; MTRAG and MTRAG-UN report results per label):

* ``answerability``: ``answerable`` (its gold chunks answer it), ``partial`` (they answer part
  of it), ``unanswerable`` (nothing in the corpus answers it: no qrels) or ``underspecified``
  (ambiguous between several chunks; the right reply is a clarifying question: no qrels);
* ``question_type``: factoid, explanation, comparison, how-to, yes/no, summary or keyword
  (None: unlabelled);
* ``standalone``: whether the question can be understood without the history (None: unknown).

Benchmarks read from elsewhere may carry other values (MTRAG's ``conversational`` turns, its
``opinion`` questions): readers keep them as given, lower-cased, so breakdowns show them.

``turn_labels.tsv`` sits in a BEIR export beside ``qrels/`` and names every turn, those with no
qrels included: ``query-id<TAB>answerability<TAB>question_type<TAB>standalone`` with a header;
an unknown label is an empty field, standalone is ``true`` or ``false``.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.files import atomic_writer
from benchsmith.stores.persistence.jsonl import text_lines

ANSWERABILITY = ("answerable", "partial", "unanswerable", "underspecified")
NO_GOLD = ("unanswerable", "underspecified")  # turns without qrels
QUESTION_TYPES = ("factoid", "explanation", "comparison", "how-to", "yes/no", "summary", "keyword")
TURN_LABELS_FILE = "turn_labels.tsv"
HEADER = ["query-id", "answerability", "question_type", "standalone"]


@dataclass(frozen=True)
class TurnLabels:
    answerability: str | None = None
    question_type: str | None = None
    standalone: bool | None = None


def standalone_group(standalone: bool | None) -> str | None:
    """How a breakdown names a turn's standalone label."""
    return None if standalone is None else "standalone" if standalone else "non-standalone"


def write_turn_labels(path: Path, labels: Iterable[tuple[str, TurnLabels]]) -> None:
    with atomic_writer(path, newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(HEADER)
        for query_id, label in labels:
            standalone = "" if label.standalone is None else str(label.standalone).lower()
            writer.writerow([query_id, label.answerability or "", label.question_type or "", standalone])


def read_turn_labels(path: Path) -> dict[str, TurnLabels]:
    """``{query id: labels}``; a malformed line stops with an InputError naming its line."""
    labels: dict[str, TurnLabels] = {}
    for line_number, line in enumerate(text_lines(path), start=1):
        fields = line.rstrip("\r\n").split("\t")
        if (line_number == 1 and fields == HEADER) or not line.strip():
            continue
        if len(fields) != len(HEADER):
            raise InputError(
                f"{path}:{line_number}: expected {len(HEADER)} tab-separated fields "
                f"({', '.join(HEADER)}), found {len(fields)}"
            )
        query_id, answerability, question_type, standalone = fields
        if standalone not in ("", "true", "false"):
            raise InputError(f"{path}:{line_number}: standalone must be true, false or empty, not {standalone!r}")
        if query_id in labels:
            raise InputError(f"{path}:{line_number}: query id {query_id!r} is listed twice")
        labels[query_id] = TurnLabels(
            answerability or None, question_type or None, None if not standalone else standalone == "true"
        )
    return labels
