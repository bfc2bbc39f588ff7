"""Objects the Python API is handed by the user (a retriever, an assistant) under names a spec can
give (``--retriever NAME``, ``assistant=NAME``), and the ones built from a URL or ``py:`` spec, each
built once per process. Thread-safe: parallel runs of one process share it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from benchsmith.stores.errors import InputError

T = TypeVar("T")


class NamedObjects(Generic[T]):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._registered: dict[str, T] = {}
        self._given: dict[str, Any] = {}  # {name: the object registered under it}, to find an object passed again
        self._by_spec: dict[str, T] = {}  # http and py: specs, built once per process

    def register(self, name: str, given: Any, built: T) -> str:
        with self._lock:
            self._registered[name], self._given[name] = built, given
        return name

    def spec_of(self, value: Any, register: Callable[[str, Any], str], taken: str) -> str:
        """The spec of what the API was given: a string as it is; an object passed before, its name;
        else the object registered (``register``) under its own name, unless another object has that
        name (an InputError: ``taken``, its ``{name}`` filled in)."""
        if isinstance(value, str):
            return value
        if (registered := self.name_of(value)) is not None:
            return registered
        name = own_name(value)
        if name in self:
            raise InputError(taken.format(name=repr(name)))
        return register(name, value)

    def name_of(self, value: Any) -> str | None:
        """The name ``value`` (the very object) was registered under, if it was."""
        with self._lock:
            return next((name for name, given in self._given.items() if given is value), None)

    def __contains__(self, name: str) -> bool:
        with self._lock:
            return name in self._registered

    def find(self, spec: str) -> T | None:
        """The object registered under ``spec``, or built from it before."""
        with self._lock:
            return self._registered.get(spec) or self._by_spec.get(spec)

    def built_once(self, spec: str, built: T) -> T:
        """``built`` kept for ``spec``, or the one another thread kept first."""
        with self._lock:
            return self._by_spec.setdefault(spec, built)

    def clear(self) -> None:
        with self._lock:
            self._registered.clear()
            self._given.clear()
            self._by_spec.clear()


def own_name(value: Any) -> str:
    """The name an object passed without one is registered under: ``.name``, else its function or class name."""
    return str(getattr(value, "name", None) or getattr(value, "__name__", None) or type(value).__name__)
