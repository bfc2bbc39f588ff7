"""The judgments of a labelling run (`benchsmith label`) and the verdicts of a review run
(`benchsmith review`): append-only JSONL logs in the run's folder, one line per judgment as it is
made (synced, so a killed server loses none), read back with the last line of each key winning
(a grade changed with "back" is a new line, not a rewrite).

A judgment line: ``{"question", "doc_id", "assessor", "grade" (0-3, or null when skipped),
"note", "seconds" (shown to graded), "at" (unix time)}``. A verdict line: ``{"turn", "reviewer",
"verdict" (accept, reject, edit), "rubric_class", "question", "edited_question", "note",
"seconds", "at"}``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchsmith.stores.persistence.jsonl import append_jsonl, read_jsonl

JUDGMENTS_FILE = "judgments.jsonl"
POOLS_FILE = "pools.jsonl"  # {"question", "doc_ids": [... in the order shown]}: each pool built once
VERDICTS_FILE = "verdicts.jsonl"
GRADES = (0, 1, 2, 3)  # TREC's graded scale: not, marginally, fairly, highly relevant


@dataclass(frozen=True)
class Judgment:
    question: str
    doc_id: str
    assessor: str
    grade: int | None  # None: skipped
    note: str = ""
    seconds: float = 0.0
    at: float = 0.0

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.question, self.doc_id, self.assessor)


class JudgmentLog:
    """One run's judgments: appended as made, the latest per (question, document, assessor) kept
    in memory so a page asks nothing of the disk."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._latest: dict[tuple[str, str, str], Judgment] = {}
        if self.path.is_file():
            for _, record in read_jsonl(self.path):
                judgment = Judgment(**record)
                self._latest[judgment.key] = judgment

    def record(self, judgment: Judgment) -> Judgment:
        if judgment.grade is not None and judgment.grade not in GRADES:
            raise ValueError(f"grade {judgment.grade!r} is not on the 0-3 scale")
        stamped = judgment if judgment.at else Judgment(**{**asdict(judgment), "at": time.time()})
        with self._lock:
            append_jsonl(self.path, asdict(stamped))
            self._latest[stamped.key] = stamped
        return stamped

    def get(self, question: str, doc_id: str, assessor: str) -> Judgment | None:
        with self._lock:
            return self._latest.get((question, doc_id, assessor))

    def latest(self) -> list[Judgment]:
        """The judgment in force for each (question, document, assessor), in the order first made."""
        with self._lock:
            return list(self._latest.values())


def read_pools(path: str | Path) -> dict[str, list[str]]:
    """``{question id: doc ids in the order shown}`` of the pools built so far."""
    path = Path(path)
    if not path.is_file():
        return {}
    return {str(record["question"]): [str(doc) for doc in record["doc_ids"]] for _, record in read_jsonl(path)}


def append_pool(path: str | Path, question: str, doc_ids: Iterable[str]) -> None:
    append_jsonl(path, {"question": question, "doc_ids": list(doc_ids)})


@dataclass(frozen=True)
class Verdict:
    turn: str  # the benchmark's query id of the turn
    reviewer: str
    verdict: str  # accept, reject, edit
    rubric_class: str | None = None  # reject: one of data/readings/RUBRIC.md's classes
    question: str = ""  # the turn's question as synthesized
    edited_question: str | None = None  # edit: the reviewer's question (the original kept beside it)
    note: str = ""
    seconds: float = 0.0
    at: float = 0.0


class VerdictLog:
    """A review run's verdicts: appended as made, the latest per turn in force."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._latest: dict[str, Verdict] = {}
        if self.path.is_file():
            for _, record in read_jsonl(self.path):
                verdict = Verdict(**record)
                self._latest[verdict.turn] = verdict

    def record(self, verdict: Verdict) -> Verdict:
        stamped = verdict if verdict.at else Verdict(**{**asdict(verdict), "at": time.time()})
        with self._lock:
            append_jsonl(self.path, asdict(stamped))
            self._latest[stamped.turn] = stamped
        return stamped

    def get(self, turn: str) -> Verdict | None:
        with self._lock:
            return self._latest.get(turn)

    def latest(self) -> dict[str, Verdict]:
        with self._lock:
            return dict(self._latest)


def as_json(item: Any) -> dict[str, Any]:
    return asdict(item)
