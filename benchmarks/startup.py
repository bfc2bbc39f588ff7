"""Start-up of the CLI (issue 21): seconds of ``benchsmith --help`` against the ``--help`` of a
two-command Typer app, both run as processes in the same run, and their ratio.

Each is a fresh process: the installed ``benchsmith`` script (beside this Python; ``python -m
benchsmith.cli`` if there is none) and ``python -c`` for the baseline, as a user's shell would run
them. The median of ``--runs`` runs is reported, after one unmeasured warm-up run of each (so the file
cache is warm for both). The baseline pays for Python, Typer and Rich: what is above it is
benchsmith's own start-up. Target: ratio ≤ 3 (it was about 18 before the heavy imports were deferred).
The load average is printed beside the numbers: on a busy machine both slow down, the ratio less.

    .venv/bin/python benchmarks/startup.py [--runs 9] [--command select]

``--command NAME`` also times ``benchsmith NAME --help``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = Path(sys.executable).parent / "benchsmith"

TWO_COMMAND_APP = """
import typer

app = typer.Typer(add_completion=False)

@app.command()
def hello(name: str = typer.Option("world", help="Whom to greet.")) -> None:
    '''Say hello.'''

@app.command()
def goodbye(name: str = typer.Option("world", help="Whom to leave.")) -> None:
    '''Say goodbye.'''

app({arguments!r}, prog_name="baseline")
"""


def seconds_of(command: list[str], runs: int) -> float:
    """Median wall-clock seconds of a command over ``runs`` runs, after one warm-up."""
    times = []
    for attempt in range(runs + 1):
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if attempt:
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def benchsmith(arguments: list[str]) -> list[str]:
    if SCRIPT.exists():
        return [str(SCRIPT), *arguments]
    return [sys.executable, "-m", "benchsmith.cli", *arguments]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9, help="Measured runs of each (median reported).")
    parser.add_argument("--command", default=None, help="Also time `benchsmith COMMAND --help`.")
    options = parser.parse_args()

    load_before = os.getloadavg()
    baseline = seconds_of([sys.executable, "-c", TWO_COMMAND_APP.format(arguments=["--help"])], options.runs)
    ours = seconds_of(benchsmith(["--help"]), options.runs)
    command = seconds_of(benchsmith([options.command, "--help"]), options.runs) if options.command else None
    load_after = os.getloadavg()

    print(f"two-command Typer app --help: {baseline:.3f} s (median of {options.runs})")
    print(f"benchsmith --help:            {ours:.3f} s")
    if command is not None:
        print(f"benchsmith {options.command} --help: {command:.3f} s  ({command / baseline:.1f}x)")
    print(f"ratio: {ours / baseline:.2f}x (target <= 3x)")
    print(
        "load average (1, 5, 15 min): before "
        + ", ".join(f"{value:.2f}" for value in load_before)
        + "; after "
        + ", ".join(f"{value:.2f}" for value in load_after)
    )


if __name__ == "__main__":
    main()
