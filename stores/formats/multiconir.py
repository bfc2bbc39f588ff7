"""Multi-condition hard-negative datasets and score tables in the layout of the MultiConIR
reference (github.com/EIT-NLP/MultiConIR: datasets/ and evaluation/), as CSV files.

Dataset files, one row per source document:

* ``hardneg.csv``: ``Id``, ``Title``, ``Query1..QueryN`` (instruction style),
  ``Natural_Query1..Natural_QueryN`` (descriptive style), ``Positive``, ``HN1..HNN`` (the graded
  ladder: HN_j misses conditions 1..j) and ``Miss1..MissN`` (the single-miss set: Miss_k misses
  condition k, the newest of Query_k). A document the verification dropped is an empty cell.
* ``Task1.csv``: the reference's Task 1 layout: ``HN{k}`` is the single-miss negative of
  ``Query{k}``; only rows whose single-miss set is complete.
* ``Task2_&_3.csv``: the reference's Task 2 and 3 layout: ``HN1..HNN`` is the ladder; only rows
  whose ladder is complete.

Score tables (the reference's ``*_results.csv``), one row per dataset row, keyed by ``Index``:

* Task 1: ``Index``, ``Query{k}_Positive``, ``Query{k}_HN1`` for k = 1..N (``HN1`` is the
  single-miss negative of query k);
* Tasks 2 and 3: ``Index``, ``Query{N}_Positive``, ``Query{N}_HN1..Query{N}_HN{N}`` (Task 2 with
  the instruction-style Query_N, Task 3 with the descriptive-style one).
"""

from __future__ import annotations

import contextlib
import csv
import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.files import atomic_writer
from benchsmith.stores.persistence.jsonl import text_lines

DATASET_FILE, TASK1_FILE, TASK23_FILE = "hardneg.csv", "Task1.csv", "Task2_&_3.csv"
QUERY_COLUMN = re.compile(r"^Query(\d+)$")
TASK1_POSITIVE = re.compile(r"^Query(\d+)_Positive$")

csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # documents are longer than csv's 128 KiB default


@dataclass
class DatasetRow:
    """One source document: its queries (k = 1..N) and documents; None where a document was dropped."""

    id: str
    title: str
    instruction: list[str]
    descriptive: list[str]
    positive: str
    ladder: list[str | None]
    single_miss: list[str | None]
    conditions: list[dict[str, str]] = field(default_factory=list)  # sentence, negative, condition (when known)

    @property
    def count(self) -> int:
        return len(self.instruction)

    @property
    def has_task1(self) -> bool:
        return all(text is not None for text in self.single_miss)

    @property
    def has_ladder(self) -> bool:
        return all(text is not None for text in self.ladder)


def dataset_columns(count: int) -> list[str]:
    numbers = range(1, count + 1)
    return (
        ["Id", "Title"]
        + [f"Query{k}" for k in numbers]
        + [f"Natural_Query{k}" for k in numbers]
        + ["Positive"]
        + [f"HN{j}" for j in numbers]
        + [f"Miss{k}" for k in numbers]
    )


def write_dataset(directory: Path, rows: Sequence[DatasetRow], count: int) -> dict[str, Path]:
    """``hardneg.csv``, ``Task1.csv`` and ``Task2_&_3.csv`` in ``directory``; their paths by task."""
    numbers = range(1, count + 1)

    def queries(row: DatasetRow) -> dict[str, str]:
        return {
            **{f"Query{k}": row.instruction[k - 1] for k in numbers},
            **{f"Natural_Query{k}": row.descriptive[k - 1] for k in numbers},
        }

    combined = [
        {
            "Id": row.id,
            "Title": row.title,
            **queries(row),
            "Positive": row.positive,
            **{f"HN{j}": row.ladder[j - 1] or "" for j in numbers},
            **{f"Miss{k}": row.single_miss[k - 1] or "" for k in numbers},
        }
        for row in rows
    ]
    task1 = [
        {"Id": row.id, **queries(row), "Positive": row.positive, **{f"HN{k}": row.single_miss[k - 1] for k in numbers}}
        for row in rows
        if row.has_task1
    ]
    task23 = [
        {"Id": row.id, **queries(row), "Positive": row.positive, **{f"HN{j}": row.ladder[j - 1] for j in numbers}}
        for row in rows
        if row.has_ladder
    ]
    query_columns = [f"Query{k}" for k in numbers] + [f"Natural_Query{k}" for k in numbers]
    negatives = [f"HN{j}" for j in numbers]
    paths = {"dataset": directory / DATASET_FILE, "task1": directory / TASK1_FILE, "task2_3": directory / TASK23_FILE}
    _write_csv(paths["dataset"], dataset_columns(count), combined)
    _write_csv(paths["task1"], ["Id", *query_columns, "Positive", *negatives], task1)
    _write_csv(paths["task2_3"], ["Id", *query_columns, "Positive", *negatives], task23)
    return paths


def _write_csv(path: Path, columns: list[str], records: Iterable[Mapping[str, object]]) -> None:
    with atomic_writer(path, newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)


def _read_csv(path: Path) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Header and ``(line number, record)`` pairs. An unreadable file, a row with more or fewer
    fields than the header (csv.DictReader would file extra fields under the key None and fill
    missing ones with None, shifting results silently) or an empty file is an InputError."""
    line = 0
    lines = text_lines(path)
    with contextlib.closing(lines):
        reader = csv.DictReader(lines)
        try:
            columns = list(reader.fieldnames or [])
            records = []
            for record in reader:
                line = reader.line_num
                if None in record:
                    raise InputError(
                        f"{path}:{line}: {len(columns) + len(record[None])} fields, the header has "
                        f"{len(columns)} (an unquoted comma?)"
                    )
                missing = [column for column, value in record.items() if value is None]
                if missing:
                    raise InputError(
                        f"{path}:{line}: {len(columns) - len(missing)} fields, the header has "
                        f"{len(columns)} (missing {', '.join(missing[:3])}; is the line cut off?)"
                    )
                records.append((line, record))
        except csv.Error as error:
            raise InputError(f"{path}:{reader.line_num}: not a readable CSV line ({error})") from None
    if not columns:
        raise InputError(f"{path}: empty file (expected a header row)")
    duplicates = [name for name in set(columns) if columns.count(name) > 1]
    if duplicates:
        raise InputError(f"{path}:1: the header repeats the column(s) {', '.join(sorted(duplicates))}")
    return columns, records


def _count_of(path: Path, columns: list[str]) -> int:
    numbers = sorted(int(match[1]) for column in columns if (match := QUERY_COLUMN.match(column)))
    if not numbers or numbers != list(range(1, len(numbers) + 1)):
        raise InputError(
            f"{path}: expected columns Query1..QueryN, found {[c for c in columns if c.startswith('Query')]}"
        )
    return len(numbers)


def read_dataset(path: Path) -> list[DatasetRow]:
    """Rows of a ``hardneg.csv`` (the combined layout above)."""
    columns, records = _read_csv(path)
    count = _count_of(path, columns)
    missing = [column for column in dataset_columns(count) if column not in columns and column not in ("Id", "Title")]
    if missing:
        raise InputError(
            f"{path}: missing columns {missing[:6]}{' …' if len(missing) > 6 else ''} "
            f"(a hardneg.csv has {', '.join(dataset_columns(count)[:3])}, …, Positive, HN1..HN{count}, "
            f"Miss1..Miss{count})"
        )
    rows: list[DatasetRow] = []
    first_line: dict[str, int] = {}
    for line, record in records:
        if (row_id := record.get("Id")) and row_id in first_line:
            raise InputError(f"{path}:{line}: Id {row_id!r} repeats line {first_line[row_id]}")
        first_line[row_id or ""] = line
        for column in (
            "Positive",
            *[f"Query{k}" for k in range(1, count + 1)],
            *[f"Natural_Query{k}" for k in range(1, count + 1)],
        ):
            if not (record.get(column) or "").strip():
                raise InputError(f"{path}:{line}: empty {column}")
        rows.append(
            DatasetRow(
                id=record.get("Id") or str(len(rows)),
                title=record.get("Title") or "",
                instruction=[record[f"Query{k}"] for k in range(1, count + 1)],
                descriptive=[record[f"Natural_Query{k}"] for k in range(1, count + 1)],
                positive=record["Positive"],
                ladder=[record[f"HN{j}"] or None for j in range(1, count + 1)],
                single_miss=[record[f"Miss{k}"] or None for k in range(1, count + 1)],
            )
        )
    if not rows:
        raise InputError(f"{path}: no rows")
    return rows


# ---------------------------------------------------------------------------------------
# Score tables.


@dataclass
class Task1Scores:
    """s(Query_k, Positive) and s(Query_k, its single-miss negative), rows × K."""

    index: list[str]
    positive: np.ndarray
    negative: np.ndarray


@dataclass
class LadderScores:
    """s(Query_N, Positive), s(Query_N, HN_1..HN_N): rows × (N + 1)."""

    index: list[str]
    scores: np.ndarray

    @property
    def count(self) -> int:
        result: int = self.scores.shape[1] - 1
        return result


def task1_columns(count: int) -> list[str]:
    return ["Index"] + [column for k in range(1, count + 1) for column in (f"Query{k}_Positive", f"Query{k}_HN1")]


def ladder_columns(count: int) -> list[str]:
    return ["Index", f"Query{count}_Positive"] + [f"Query{count}_HN{j}" for j in range(1, count + 1)]


def write_task1_scores(path: Path, table: Task1Scores) -> None:
    count = table.positive.shape[1]
    records = [
        {
            "Index": index,
            **{f"Query{k}_Positive": repr(float(table.positive[row, k - 1])) for k in range(1, count + 1)},
            **{f"Query{k}_HN1": repr(float(table.negative[row, k - 1])) for k in range(1, count + 1)},
        }
        for row, index in enumerate(table.index)
    ]
    _write_csv(path, task1_columns(count), records)


def write_ladder_scores(path: Path, table: LadderScores) -> None:
    count = table.count
    columns = ladder_columns(count)
    records = [
        {"Index": index, **{column: repr(float(value)) for column, value in zip(columns[1:], table.scores[row])}}
        for row, index in enumerate(table.index)
    ]
    _write_csv(path, columns, records)


def _number(path: Path, line: int, column: str, text: str | None) -> float:
    try:
        value = float(text) if text is not None else math.nan
    except ValueError:
        raise InputError(f"{path}:{line}: column {column}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(f"{path}:{line}: column {column}: missing or not finite ({text!r})")
    return value


def _index_of(path: Path, columns: list[str], records: list[tuple[int, dict[str, str]]]) -> list[str]:
    if "Index" not in columns:
        raise InputError(f"{path}: no Index column (a score table has Index, then the score columns)")
    index: list[str] = []
    first_line: dict[str, int] = {}
    for line, record in records:
        value = record["Index"]
        if value in first_line:
            raise InputError(f"{path}:{line}: Index {value!r} repeats line {first_line[value]}")
        first_line[value] = line
        index.append(value)
    if not index:
        raise InputError(f"{path}: no rows")
    return index


def read_task1_scores(path: Path) -> Task1Scores:
    """A Task 1 table: ``Index``, ``Query{k}_Positive``, ``Query{k}_HN1`` for k = 1..K (K from the header)."""
    columns, records = _read_csv(path)
    ks = sorted(int(match[1]) for column in columns if (match := TASK1_POSITIVE.match(column)))
    if not ks or ks != list(range(1, len(ks) + 1)):
        raise InputError(
            f"{path}: expected columns Query1_Positive..QueryK_Positive (Task 1), found "
            f"{[c for c in columns if c.endswith('_Positive')] or 'none'}"
        )
    missing = [f"Query{k}_HN1" for k in ks if f"Query{k}_HN1" not in columns]
    if missing:
        raise InputError(f"{path}: missing Task 1 columns {missing}")
    index = _index_of(path, columns, records)
    positive = np.array(
        [
            [_number(path, line, f"Query{k}_Positive", record.get(f"Query{k}_Positive")) for k in ks]
            for line, record in records
        ]
    )
    negative = np.array(
        [[_number(path, line, f"Query{k}_HN1", record.get(f"Query{k}_HN1")) for k in ks] for line, record in records]
    )
    return Task1Scores(index, positive, negative)


def read_ladder_scores(path: Path) -> LadderScores:
    """A Task 2 or 3 table: ``Index``, ``Query{N}_Positive``, ``Query{N}_HN1..HN{N}``."""
    columns, records = _read_csv(path)
    positives = [int(match[1]) for column in columns if (match := TASK1_POSITIVE.match(column))]
    if len(positives) != 1:
        raise InputError(
            f"{path}: expected one Query{{N}}_Positive column (Tasks 2 and 3), found "
            f"{[c for c in columns if c.endswith('_Positive')] or 'none'}"
        )
    count = positives[0]
    wanted = ladder_columns(count)[1:]
    missing = [column for column in wanted if column not in columns]
    if missing:
        raise InputError(f"{path}: missing columns {missing} (Tasks 2 and 3 need Query{count}_HN1..HN{count})")
    index = _index_of(path, columns, records)
    scores = np.array(
        [[_number(path, line, column, record.get(column)) for column in wanted] for line, record in records]
    )
    return LadderScores(index, scores)
