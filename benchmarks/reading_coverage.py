"""How many turns of a benchmark's reading sample are broken, counted from every reading made of them.

A change to the generator changes some turns of a benchmark and leaves the rest as they were. The turns it
changed are read again (``benchmarks/reading_sheet.py --not-in`` the earlier readings); the rest keep their
reading. This script draws the sample a sheet would (the same ``draw``: ``--turns`` turns with ``--seed``, runs
pooled) from the runs as they are now and looks each drawn turn up in the readings given. A reading counts
only for the turn it read: the same question, on the same gold, with the same reply (a question asked again
with another reply is unread). Later files win where two readings read one turn::

    .venv/bin/python benchmarks/reading_coverage.py --workspace WS --run bottle-s27a \\
        data/readings/test/bottle-offline-r26.jsonl data/readings/test/bottle-offline-r27.jsonl

It prints the sample's size, how many of its turns were read and broken, and each broken turn with its
reader's class and note; it exits 1 when a drawn turn has no reading (read it before counting).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # reading_sheet, beside this script
from reading_sheet import draw, turn_key

from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.workspace import Workspace

ReadTurn = tuple[str, tuple[str, ...], str]  # question, gold ids, reply


def readings_by_turn(paths: list[Path]) -> dict[ReadTurn, dict[str, Any]]:
    """Each read turn's reading (a verdict given), the last file's where several read it."""
    found: dict[ReadTurn, dict[str, Any]] = {}
    for path in paths:
        for row in load_jsonl(path):
            if row.get("verdict") in ("ok", "broken"):
                found[(row["question"], tuple(row.get("gold_ids") or []), row["reply"])] = row
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("readings", nargs="+", type=Path, help="reading files (JSONL), earliest first")
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--run", action="append", required=True, help="a synthesis run (repeat to pool runs)")
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--seed", type=int, default=325)
    arguments = parser.parse_args(argv)
    workspace = Workspace.resolve(arguments.workspace)
    dialogues = [
        {**dialogue, "run": run}
        for run in dict.fromkeys(arguments.run)
        for dialogue in load_jsonl(workspace.run_dir(run) / "dialogues.jsonl")
    ]
    read = readings_by_turn(arguments.readings)
    drawn = [dialogue["turns"][index] for dialogue, index in draw(dialogues, arguments.turns, arguments.seed)]
    verdicts = [read.get((*turn_key(turn), turn["response"])) for turn in drawn]
    broken = [row for row in verdicts if row and row["verdict"] == "broken"]
    unread = [turn for turn, row in zip(drawn, verdicts) if row is None]
    print(
        f"{' + '.join(arguments.run)}: {len(drawn)} turns drawn, {len(drawn) - len(unread)} read, {len(broken)} broken"
    )
    for row in broken:
        print(f"  broken ({row.get('class')}): {row['question']} | {row.get('note') or ''}")
    for turn in unread:
        print(f"  unread: {turn['question']}")
    return 1 if unread else 0


if __name__ == "__main__":
    sys.exit(main())
