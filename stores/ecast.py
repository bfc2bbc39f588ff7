"""ECAsT paraphrases (PeerJ Computer Science 2023, e1328): ``ECAsT.csv`` with the columns
``TURN_ID`` (``{topic}_{turn}``, as CAsT names its turns), ``MANUAL PARAPHRASE`` (the
self-contained form) and ``RAW PARAPHRASE`` (the mid-conversation form, with the turn's
coreference and ellipsis). Several rows per turn; rows are kept exactly as given."""

from __future__ import annotations

import contextlib
import csv
from dataclasses import dataclass
from pathlib import Path

from benchsmith.stores.errors import InputError
from benchsmith.stores.jsonl import text_lines

ECAST_COLUMNS = ("TURN_ID", "MANUAL PARAPHRASE", "RAW PARAPHRASE")


@dataclass(frozen=True)
class EcastRow:
    line: int  # the row's (last) line in the file, for messages
    turn_id: str
    self_contained: str
    raw: str


def read_ecast(path: Path) -> list[EcastRow]:
    """Every row; a missing column, a row of another width, an empty field or a row repeating
    an earlier one (it would be imported as a second variant) names the file and line."""
    lines = text_lines(path)  # decoded line by line: bad bytes name their line
    rows = []
    first_line: dict[tuple[str, str, str], int] = {}
    with contextlib.closing(lines):
        reader = csv.reader(lines)
        try:
            header = next(reader, None)
            if header is None or tuple(column.strip() for column in header) != ECAST_COLUMNS:
                raise InputError(f"{path}:1: expected the header {','.join(ECAST_COLUMNS)}, found "
                                 f"{','.join(header or [])!r}")
            for fields in reader:
                if not any(field.strip() for field in fields):
                    continue
                if len(fields) != len(ECAST_COLUMNS):
                    raise InputError(f"{path}:{reader.line_num}: expected {len(ECAST_COLUMNS)} comma-separated fields "
                                     f"({', '.join(ECAST_COLUMNS)}), found {len(fields)}")
                turn_id, self_contained, raw = (field.strip() for field in fields)
                for column, value in zip(ECAST_COLUMNS, (turn_id, self_contained, raw)):
                    if not value:
                        raise InputError(f"{path}:{reader.line_num}: empty {column}")
                key = (turn_id, self_contained, raw)
                if key in first_line:
                    raise InputError(f"{path}:{reader.line_num}: turn {turn_id} repeats the paraphrases of line "
                                     f"{first_line[key]}")
                first_line[key] = reader.line_num
                rows.append(EcastRow(reader.line_num, turn_id, self_contained, raw))
        except csv.Error as error:
            raise InputError(f"{path}:{reader.line_num}: malformed CSV ({error})") from None
    if not rows:
        raise InputError(f"{path}: no paraphrases")
    return rows
