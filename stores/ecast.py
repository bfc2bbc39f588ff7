"""ECAsT paraphrases (PeerJ Computer Science 2023, e1328): ``ECAsT.csv`` with the columns
``TURN_ID`` (``{topic}_{turn}``, as CAsT names its turns), ``MANUAL PARAPHRASE`` (the
self-contained form) and ``RAW PARAPHRASE`` (the mid-conversation form, with the turn's
coreference and ellipsis). Several rows per turn, each a variant; rows are kept as given.

The published file repeats 37 rows verbatim (turn 5_1 on lines 329 and 331, ...): a repeat adds
no variant, so it is read once and reported (:attr:`EcastFile.repeats`), never refused. A row
carries no id of its own beyond its content: two rows of one turn that share one form and differ
in the other (the published file has 14 sharing the self-contained form, 15 the raw one) are two
variants, as the authors wrote them."""

from __future__ import annotations

import contextlib
import csv
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import text_lines

ECAST_COLUMNS = ("TURN_ID", "MANUAL PARAPHRASE", "RAW PARAPHRASE")
REPEAT_LINES_SHOWN = 5  # repeated lines a summary names before "..."


@dataclass(frozen=True)
class EcastRow:
    line: int  # the row's (last) line in the file, for messages
    turn_id: str
    self_contained: str
    raw: str


@dataclass(frozen=True)
class EcastRepeat:
    line: int  # the repeating row's (last) line
    first_line: int  # the line of the row it repeats, the one read
    turn_id: str


@dataclass(frozen=True)
class EcastFile:
    path: Path
    rows: list[EcastRow]
    repeats: list[EcastRepeat] = field(default_factory=list)  # verbatim repeats, read once

    def repeats_summary(self) -> str | None:
        """One line saying how many rows were repeats and which lines, or None when none was."""
        if not self.repeats:
            return None
        shown = ", ".join(f"{repeat.line} (= {repeat.first_line})" for repeat in self.repeats[:REPEAT_LINES_SHOWN])
        more = f", … {len(self.repeats) - REPEAT_LINES_SHOWN} more" if len(self.repeats) > REPEAT_LINES_SHOWN else ""
        return (
            f"{self.path}: {len(self.repeats)} row(s) repeat an earlier row verbatim and were read once: "
            f"line(s) {shown}{more}"
        )


def read_ecast(path: Path) -> EcastFile:
    """Every distinct row; a missing column, a row of another width or an empty field names the
    file and line. A verbatim repeat of an earlier row is collapsed into it and listed."""
    lines = text_lines(path)  # decoded line by line: bad bytes name their line
    rows: list[EcastRow] = []
    repeats: list[EcastRepeat] = []
    first_line: dict[tuple[str, str, str], int] = {}
    with contextlib.closing(lines):
        reader = csv.reader(lines)
        try:
            header = next(reader, None)
            if header is None or tuple(column.strip() for column in header) != ECAST_COLUMNS:
                raise InputError(
                    f"{path}:1: expected the header {','.join(ECAST_COLUMNS)}, found {','.join(header or [])!r}"
                )
            for fields in reader:
                if not any(field.strip() for field in fields):
                    continue
                if len(fields) != len(ECAST_COLUMNS):
                    raise InputError(
                        f"{path}:{reader.line_num}: expected {len(ECAST_COLUMNS)} comma-separated fields "
                        f"({', '.join(ECAST_COLUMNS)}), found {len(fields)}"
                    )
                turn_id, self_contained, raw = (field.strip() for field in fields)
                for column, value in zip(ECAST_COLUMNS, (turn_id, self_contained, raw)):
                    if not value:
                        raise InputError(f"{path}:{reader.line_num}: empty {column}")
                key = (turn_id, self_contained, raw)
                if key in first_line:
                    repeats.append(EcastRepeat(reader.line_num, first_line[key], turn_id))
                    continue
                first_line[key] = reader.line_num
                rows.append(EcastRow(reader.line_num, turn_id, self_contained, raw))
        except csv.Error as error:
            raise InputError(f"{path}:{reader.line_num}: malformed CSV ({error})") from None
    if not rows:
        raise InputError(f"{path}: no paraphrases")
    return EcastFile(path, rows, repeats)
