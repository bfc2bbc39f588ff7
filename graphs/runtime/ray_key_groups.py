"""The rows of a stage file that share a key, grouped in this process or across a Ray cluster
(``--ray``): ingestion's near-duplicate candidates (graphs/ingest.py's dedup stage).

``keyed(lines, argument)`` gives a batch of lines their keys, one row of key columns a line (a
chunk's MinHash band keys and its id's key: tools/corpus/dedup.row_keys). Without an address the
batches are keyed here and each column grouped here, every row's keys held for it. With one, the
file's ranges of lines (graphs/runtime/ray_data.py) are keyed on the nodes; each (column, key,
row) goes to one of as many partitions as there are ranges, chosen by its key (a hash-partitioned
shuffle: Ray Data's groupby on the partition), and a node groups each partition. Only the groups
of two or more rows come back, so this process holds the candidate groups, not the keys. Both ways
group with tools/corpus/dedup.rows_sharing_a_key and give the same groups; only their order
differs, which no decision depends on. Ray Data runs a task again when its node is lost: each
reads a file or its inputs and returns a value, so a second run changes nothing.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchsmith.graphs.runtime.ray_data import Argument, line_ranges, mapped_batches, range_lines, ranges_dataset
from benchsmith.graphs.runtime.ray_items import _ray
from benchsmith.stores.progress import ProgressCallback
from benchsmith.tools.corpus.dedup import candidate_groups, rows_sharing_a_key

Keyed = Callable[[list[str], Argument], list[np.ndarray]]  # one (lines, columns) array of keys a batch
Groups = list[tuple[int, np.ndarray]]  # (column, rows sharing a key in it, ascending)


def shared_key_groups(
    path: Path,
    keyed: Keyed[Argument],
    argument: Argument,
    address: str | None,
    lines: int,
    *,
    total: int | None = None,
    on_progress: ProgressCallback | None = None,
) -> Groups:
    """(column, rows) of every key that two or more of the file's rows share in a column of
    ``keyed``'s keys (rows numbered from 0 in file order; ``lines`` keyed at a time): in this
    process, or (``address``) on the Ray cluster there. ``keyed`` is a module-level function (a
    node imports it by name) and ``argument`` travels to the nodes (pickled)."""
    if not address:
        blocks: list[np.ndarray] = []
        for block in mapped_batches(path, keyed, argument, None, lines):
            blocks.append(block)
            if on_progress:
                on_progress(sum(map(len, blocks)), total)
        return candidate_groups(np.concatenate(blocks)) if blocks else []
    ranges = line_ranges(path, lines)
    if not ranges:
        return []
    dataset = ranges_dataset(
        address,
        [{"start": start, "end": end, "first_row": number * lines} for number, (start, end) in enumerate(ranges)],
    )
    keys = dataset.map_batches(
        _keyed_ranges,
        batch_size=1,
        fn_kwargs={"path": str(path), "keyed": keyed, "argument": argument, "partitions": len(ranges)},
    )
    # The sort-based shuffle: the hash shuffle (Ray 2.60's default) took 11 s of every run on a test
    # cluster whatever its size, the sort shuffle under a second once its workers had started.
    keys.context.shuffle_strategy = _ray().data.context.ShuffleStrategy.SORT_SHUFFLE_PULL_BASED  # this dataset's
    grouped = keys.groupby("partition").map_groups(_partition_groups, batch_format="numpy")
    groups: Groups = []
    for row in grouped.iter_rows():
        groups += pickle.loads(row["groups"])
    if on_progress:
        on_progress(total or 0, total)
    return groups


def _keyed_ranges(
    batch: dict[str, Any], path: str, keyed: Keyed[Any], argument: Any, partitions: int
) -> dict[str, np.ndarray]:
    """On a node: each range's lines keyed, as one (partition, column, key, row) row per key."""
    columns, keys, rows = [], [], []
    with open(path, "rb") as handle:
        for start, end, first_row in zip(batch["start"], batch["end"], batch["first_row"]):
            (block,) = keyed(range_lines(handle, int(start), int(end)), argument)
            count, width = block.shape
            keys.append(block.reshape(-1))  # row by row: a row's columns side by side
            columns.append(np.tile(np.arange(width, dtype=np.int64), count))
            rows.append(np.repeat(np.arange(int(first_row), int(first_row) + count, dtype=np.int64), width))
    key = np.concatenate(keys)
    partition = (key % np.uint64(partitions)).astype(np.int64)  # the keys are hashes: evenly spread
    return {"partition": partition, "column": np.concatenate(columns), "key": key, "row": np.concatenate(rows)}


def _partition_groups(batch: dict[str, np.ndarray]) -> dict[str, list[bytes]]:
    """On a node: one partition's (column, rows) groups of two or more rows, pickled as one value."""
    groups: Groups = []
    for column in np.unique(batch["column"]).tolist():
        chosen = batch["column"] == column
        groups += [(column, rows) for rows in rows_sharing_a_key(batch["key"][chosen], batch["row"][chosen])]
    return {"groups": [pickle.dumps(groups, protocol=pickle.HIGHEST_PROTOCOL)]}
