"""How much of what `duplicates` reports over the product folders is the formatter's layout, at any revision.

    .venv/bin/python benchmarks/duplicate_pairs.py HEAD 48384bd

For each revision, the six product folders (benchsmith, graphs, agents, tools, stores, evals) are copied out
of git and `duplicates` (the developers' tool; not part of the package or CI) counts its pairs three ways:

* as committed;
* formatted with the project's ruff settings (pyproject.toml: 120 columns), which is how the tree is kept
  since the formatting-only commit 12bb5e4;
* with the layout neutralized: formatted at 1000 columns with ``skip-magic-trailing-comma``, so that a
  statement is one line wherever ruff can make it one, and a run of six lines is six statements.

ruff's layout puts each item of a long signature, call or literal on a line of its own, and `duplicates`
pairs two runs of six lines alike in shape (other names and values), so any two keyword lists of six or
more items pair: the layout-neutral count is the one that moves with the code. At 48384bd, main before
issue 32's restructuring, it printed 44 / 194 / 33; in the nineteenth session, 140 / 140 / 27.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT_FOLDERS = ("benchsmith", "graphs", "agents", "tools", "stores", "evals")
RUFF = Path(sys.executable).with_name("ruff")
PAIRS = re.compile(r"^(\d+) pairs of places|^no duplicates")


def pair_count(folder: Path) -> int:
    """The number of pairs `duplicates` reports over ``folder`` (0 where it reports none)."""
    report = subprocess.run(
        ["duplicates", "--repo", str(folder), "--seconds", "300", "--most", "1"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    first = report.splitlines()[0] if report else ""
    if (match := PAIRS.match(first)) is None:
        raise SystemExit(f"duplicates said {first!r}: no count of pairs")
    if any(line.startswith("incomplete:") for line in report.splitlines()):
        raise SystemExit(f"duplicates did not read all of {folder}: {report}")
    return int(match.group(1) or 0)


def formatted(folder: Path, name: str, settings: str) -> Path:
    """A copy of ``folder``, beside it under ``name``, formatted by ruff with ``settings`` (a ruff.toml's text)."""
    copy = folder.with_name(name)
    shutil.copytree(folder, copy)
    config = copy / "ruff.toml"
    config.write_text(settings, encoding="utf-8")
    subprocess.run([str(RUFF), "format", "--config", str(config), str(copy)], capture_output=True, check=True)
    config.unlink()
    return copy


def product_folders(revision: str, into: Path) -> Path:
    """The product folders as committed at ``revision``, extracted under ``into``."""
    folder = into / "committed"
    folder.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, *PRODUCT_FOLDERS], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("revisions", nargs="+", help="git revisions, e.g. HEAD 48384bd")
    args = parser.parse_args()
    if shutil.which("duplicates") is None:
        print("duplicates is not on PATH: this script measures with the developers' tool", file=sys.stderr)
        return 2
    print("| revision | pairs as committed | ruff-formatted (120 columns) | layout neutralized |")
    print("|---|---:|---:|---:|")
    for revision in args.revisions:
        with tempfile.TemporaryDirectory() as scratch:
            committed = product_folders(revision, Path(scratch))
            as_kept = formatted(committed, "formatted", "line-length = 120\n")
            neutral = formatted(
                committed, "neutral", "line-length = 1000\n[format]\nskip-magic-trailing-comma = true\n"
            )
            counts = [pair_count(folder) for folder in (committed, as_kept, neutral)]
        print(f"| {revision} | {counts[0]} | {counts[1]} | {counts[2]} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
