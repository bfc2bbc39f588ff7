"""An in-process cache with a bound: the entries used last are kept, the least recently used dropped.

For what a long-lived process (Studio, a worker, a notebook) reads again and again but must not
keep forever: a module-level dict grows with every collection and chunk the process ever saw.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """A thread-safe least-recently-used cache of at most ``maxsize`` entries."""

    def __init__(self, maxsize: int):
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, not {maxsize}")
        self.maxsize = maxsize
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._entries

    def get(self, key: K, default: V | None = None) -> V | None:
        """The value of ``key`` (now the most recently used), else ``default``."""
        with self._lock:
            if key not in self._entries:
                return default
            self._entries.move_to_end(key)
            return self._entries[key]

    def __getitem__(self, key: K) -> V:
        with self._lock:
            self._entries.move_to_end(key)
            return self._entries[key]

    def __setitem__(self, key: K, value: V) -> None:
        self.put_many({key: value})

    def setdefault(self, key: K, value: V) -> V:
        """The value held for ``key``, else ``value``, kept (one atomic step: two threads get the same)."""
        with self._lock:
            if key not in self._entries:
                self._put(key, value)
            self._entries.move_to_end(key)
            return self._entries[key]

    def get_many(self, keys: Iterable[K]) -> dict[K, V]:
        """``{key: value}`` of the keys held (each now the most recently used); the others are absent."""
        found: dict[K, V] = {}
        with self._lock:
            for key in keys:
                if key in self._entries:
                    self._entries.move_to_end(key)
                    found[key] = self._entries[key]
        return found

    def put_many(self, entries: Mapping[K, V]) -> None:
        with self._lock:
            for key, value in entries.items():
                self._put(key, value)

    def _put(self, key: K, value: V) -> None:  # the lock held
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.maxsize:
            self._entries.popitem(last=False)

    def get_or_fetch(self, keys: Iterable[K], fetch: Callable[[list[K]], Mapping[K, V]]) -> dict[K, V]:
        """``{key: value}`` of ``keys``: those held, and the rest from one ``fetch(missing keys)``
        call (made outside the lock), which are kept. A key ``fetch`` does not return is absent."""
        keys = list(dict.fromkeys(keys))
        found = self.get_many(keys)
        if missing := [key for key in keys if key not in found]:
            fetched = dict(fetch(missing))
            self.put_many(fetched)
            found.update(fetched)
        return found
