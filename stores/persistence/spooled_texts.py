"""Texts written once to an unnamed temporary file and read back by position.

A stage that needs a million chunks' texts in an order it learns only later (the clustering's
near-identical check reads them along its path) keeps them here instead of in Python objects or
asking the vector store for each window of ids: Chroma answers a read by ids in about 0.25 ms an
id at a million chunks, and that read alone took minutes."""

from __future__ import annotations

import tempfile
from array import array
from collections.abc import Iterable, Sequence


class SpooledTexts:
    """``append`` texts in turn; ``texts(positions)`` reads them back. The file goes when closed."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 (open for the object's life: close() closes it)
        self._offsets = array("q", [0])  # text i spans offsets[i]:offsets[i + 1]

    def extend(self, texts: Iterable[str]) -> None:
        self._file.seek(0, 2)
        for text in texts:
            data = text.encode("utf-8")
            self._file.write(data)
            self._offsets.append(self._offsets[-1] + len(data))

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def texts(self, positions: Sequence[int]) -> list[str]:
        found = []
        for position in positions:
            start, end = self._offsets[position], self._offsets[position + 1]
            self._file.seek(start)
            found.append(self._file.read(end - start).decode("utf-8"))
        return found

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> SpooledTexts:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
