"""A stage file mapped batch by batch, here or as a Ray Data pipeline on a cluster (``--ray``): the
seam between ingestion's stages (graphs/ingest.py) and Ray Data.

Without an address the batches are mapped in this process. With one, the file is cut into ranges of
lines (byte offsets); each range is a row of a Ray dataset that a node maps with the same function,
reading its lines from the run directory (nodes see the workspace at the same path, as for every
``--ray`` run). Results come back in the file's order (Ray Data's ``preserve_order``), so the stage's
own process writes the file one process writes. Ray Data runs a map task again when its node is
lost: the function reads a file and returns a value, so a second run changes nothing.
"""

from __future__ import annotations

import itertools
import os
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from benchsmith.graphs.runtime.ray_items import _ray, connect

Argument = TypeVar("Argument")
Result = TypeVar("Result")
Work = Callable[[list[str], Argument], list[Result]]


def mapped_batches(
    path: Path, work: Work[Argument, Result], argument: Argument, address: str | None, lines: int
) -> Iterator[Result]:
    """``work(batch, argument)``'s results over the file's lines, ``lines`` at a time, in file order:
    in this process, or (``address``) on the Ray cluster there. ``work`` is a module-level function
    (a node imports it by name) and ``argument`` travels to the nodes (pickled)."""
    if not address:
        with path.open("rb") as handle:
            while batch := [line.decode("utf-8") for line in itertools.islice(handle, lines)]:
                yield from work(batch, argument)
        return
    ranges = line_ranges(path, lines)
    if not ranges:
        return
    dataset = ranges_dataset(address, [{"start": start, "end": end} for start, end in ranges])
    mapped = dataset.map_batches(
        _mapped_ranges,
        batch_size=1,
        fn_kwargs={"path": str(path), "work": work, "argument": argument},
    )  # Ray Data runs a task again, without bound, when its node or worker died
    for row in mapped.iter_rows():
        yield from pickle.loads(row["results"])


def ranges_dataset(address: str, ranges: list[dict[str, int]]) -> Any:
    """A Ray dataset of the cluster at ``address``, one row (and one block) per range of lines,
    whose results come back in the ranges' order."""
    connect(address)
    ray = _ray()
    # Ray Data's usage poller asks a Prometheus server every few seconds (none runs here): not collected.
    os.environ.setdefault("RAY_DATA_USAGE_DISABLED", "1")
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True  # the file one process writes
    context.enable_progress_bars = False  # the stage reports its own progress
    context.print_on_execution_start = False
    return ray.data.from_items(ranges, override_num_blocks=len(ranges))


def line_ranges(path: Path, lines: int) -> list[tuple[int, int]]:
    """(start, end) byte offsets of the file's successive runs of ``lines`` lines."""
    ranges: list[tuple[int, int]] = []
    start = offset = 0
    with path.open("rb") as handle:
        while batch := list(itertools.islice(handle, lines)):
            offset += sum(map(len, batch))
            ranges.append((start, offset))
            start = offset
    return ranges


def _mapped_ranges(batch: dict[str, Any], path: str, work: Work[Any, Any], argument: Any) -> dict[str, list[bytes]]:
    """On a node: each range's lines read from the file and mapped, its results pickled (any value
    travels back as one bytes column)."""
    results = []
    with open(path, "rb") as handle:
        for start, end in zip(batch["start"], batch["end"]):
            lines = range_lines(handle, int(start), int(end))
            results.append(pickle.dumps(work(lines, argument), protocol=pickle.HIGHEST_PROTOCOL))
    return {"results": results}


def range_lines(handle: BinaryIO, start: int, end: int) -> list[str]:
    """The lines of a file between two of :func:`line_ranges`' offsets."""
    handle.seek(start)
    # "\n" only, as a file's lines: JSON text keeps U+2028 and the like raw
    pieces = handle.read(end - start).decode("utf-8").split("\n")
    return [piece + "\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
