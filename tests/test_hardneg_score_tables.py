"""`benchsmith hardneg score --task1/--task2/--task3 FILE --json OUT`: re-scoring score tables
written here in the MultiConIR reference layout (as its pandas scripts write them), with the
JSON keys the issue specifies; and the messages bad tables get."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchsmith.cli import app

runner = CliRunner(env={"COLUMNS": "200"})
N = 10


def write_csv(path: Path, columns: list[str], rows: list[list[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(rows)
    return path


def task1_table(path: Path) -> Path:
    """4 rows. k ≤ 5: every negative 0.5 below the positive 1.0 (win 1, diff 0.5). k = 6..9: rows 0-1
    tie at 1.0, rows 2-3 have 0.0 (win 0.5: ties lose; diff 0.5). k = 10: every negative 3.0 (win 0, diff -2)."""
    columns = ["Index"] + [c for k in range(1, N + 1) for c in (f"Query{k}_Positive", f"Query{k}_HN1")]
    rows = []
    for row in range(4):
        cells: list[object] = [row]
        for k in range(1, N + 1):
            negative = 0.5 if k <= 5 else (1.0 if row < 2 else 0.0) if k < 10 else 3.0
            cells += [1.0, negative]
        rows.append(cells)
    return write_csv(path, columns, rows)


LADDER_COLUMNS = ["Index", f"Query{N}_Positive"] + [f"Query{N}_HN{j}" for j in range(1, N + 1)]
DECREASING, INCREASING, FLAT = list(range(N + 1, 0, -1)), list(range(1, N + 2)), [1.0] * (N + 1)


def task2_table(path: Path) -> Path:
    """Rows 0-1 strictly decreasing (every pair won), row 2 flat (all tied: lost), row 3 increasing (lost):
    every pair's win rate is 2/4."""
    return write_csv(path, LADDER_COLUMNS, [[0, *DECREASING], [1, *DECREASING], [2, *FLAT], [3, *INCREASING]])


def task3_table(path: Path) -> Path:
    """Same rows in another order (aligned by Index); only row 2 changes (flat → decreasing): its 10
    outcomes flip, so the change rate is 10 / (4 × 10) = 0.25."""
    return write_csv(path, LADDER_COLUMNS, [[3, *INCREASING], [2, *DECREASING], [1, *DECREASING], [0, *DECREASING]])


def rescore(*arguments: str):
    return runner.invoke(app, ["hardneg", "score", *arguments])


def test_score_tables_give_the_specified_json_keys_and_hand_worked_values(tmp_path):
    out = tmp_path / "measures.json"
    result = rescore(
        "--task1",
        str(task1_table(tmp_path / "t1.csv")),
        "--task2",
        str(task2_table(tmp_path / "t2.csv")),
        "--task3",
        str(task3_table(tmp_path / "t3.csv")),
        "--json",
        str(out),
    )
    assert result.exit_code == 0, result.output
    measures = json.loads(out.read_text(encoding="utf-8"))
    assert set(measures) == {"task1", "task2", "task3"}
    assert set(measures["task1"]) == {"win_rate", "avg_diff"}
    assert list(measures["task1"]["win_rate"]) == [str(k) for k in range(1, 11)]
    assert list(measures["task1"]["avg_diff"]) == [str(k) for k in range(1, 11)]
    assert set(measures["task2"]) == {"pairs"} and set(measures["task3"]) == {"change_rate"}
    assert list(measures["task2"]["pairs"]) == ["Positive_vs_HN1"] + [f"HN{j}_vs_HN{j + 1}" for j in range(1, 10)]

    assert [measures["task1"]["win_rate"][str(k)] for k in range(1, 11)] == [1.0] * 5 + [0.5] * 4 + [0.0]
    assert [measures["task1"]["avg_diff"][str(k)] for k in range(1, 11)] == pytest.approx([0.5] * 9 + [-2.0])
    assert set(measures["task2"]["pairs"].values()) == {0.5}
    assert measures["task3"]["change_rate"] == pytest.approx(0.25)
    assert "Task 3" in result.output and "0.250" in result.output


def test_each_table_alone_gives_only_its_task(tmp_path):
    out = tmp_path / "m.json"
    result = rescore("--task2", str(task2_table(tmp_path / "t2.csv")), "--json", str(out))
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text()) == {
        "task2": {"pairs": {name: 0.5 for name in ["Positive_vs_HN1"] + [f"HN{j}_vs_HN{j + 1}" for j in range(1, 10)]}}
    }


def test_task3_needs_the_instruction_table_of_the_same_rows(tmp_path):
    task3 = task3_table(tmp_path / "t3.csv")
    result = rescore("--task3", str(task3))
    assert result.exit_code == 2 and "--task2" in result.output
    other = write_csv(
        tmp_path / "t2.csv", LADDER_COLUMNS, [[0, *DECREASING], [1, *DECREASING], [2, *FLAT], [9, *INCREASING]]
    )
    result = rescore("--task2", str(other), "--task3", str(task3))
    assert result.exit_code == 2 and "same rows" in result.output and "'3'" in result.output


def test_bad_tables_get_a_message_naming_file_line_and_column(tmp_path):
    table = task1_table(tmp_path / "t1.csv")
    lines = table.read_text().splitlines()
    lines[2] = lines[2].replace("0.5", "n/a", 1)
    table.write_text("\n".join(lines) + "\n")
    result = rescore("--task1", str(table))
    assert result.exit_code == 2
    assert f"{table}:3" in result.output and "Query1_HN1" in result.output and "'n/a'" in result.output

    missing = write_csv(tmp_path / "missing.csv", LADDER_COLUMNS[:-1], [[0, *DECREASING[:-1]]])
    result = rescore("--task2", str(missing))
    assert result.exit_code == 2 and "Query10_HN10" in result.output and str(missing) in result.output

    no_index = write_csv(tmp_path / "noindex.csv", LADDER_COLUMNS[1:], [DECREASING])
    assert "no Index column" in rescore("--task2", str(no_index)).output
    assert "file not found" in rescore("--task1", str(tmp_path / "absent.csv")).output
    result = rescore(str(tmp_path), "--task1", str(table))
    assert result.exit_code == 2 and "no DATASET" in result.output


def test_a_row_is_grouped_for_a_task_only_with_every_negative_of_the_task_written():
    from benchsmith.stores.formats.multiconir import DatasetRow
    from benchsmith.tools.retrieval.multicondition_scoring import ladder_groups, task1_groups

    complete = DatasetRow("r1", "t", ["q1", "q2"], ["d1", "d2"], "pos", ["hn1", "hn2"], ["m1", "m2"])
    assert task1_groups([complete]) == [("q1", ["pos", "m1"]), ("q2", ["pos", "m2"])]
    assert ladder_groups([complete], descriptive=True) == [("d2", ["pos", "hn1", "hn2"])]
    dropped = DatasetRow("r2", "t", ["q1", "q2"], ["d1", "d2"], "pos", ["hn1", None], [None, "m2"])
    with pytest.raises(ValueError, match="every negative"):
        ladder_groups([dropped], descriptive=False)  # a dropped document is never scored as an empty text
    with pytest.raises(ValueError, match="every negative"):
        task1_groups([dropped])
