"""Writes handed to one background thread, which does them in batches: the threads of a model
call never wait on a disk write or a SQLite commit.

Why: a process runs Python on one core at a time (the GIL), and every system call a thread makes
lets another thread take the interpreter, after which the first waits to get it back: two context
switches. With 64 conversations in flight, the response cache's commit (a dozen ``fcntl`` and
``pwrite`` calls) and the usage ledger's open, write and close per model call made 14 to 19
context switches a call (a bare HTTP client makes 3.5), and under a busy neighbour each hand-off
also waits for a core (benchmarks/synthesize.py). Batched here, a commit or an append costs the
process one wake-up per :data:`GATHER_S`, whatever the number of calls.

What is submitted is written within about :data:`GATHER_S` (unless the disk is slower): a process
killed with SIGKILL loses at most the writes of that last moment. :meth:`WriteBehind.drain`
writes what is still queued in the calling thread, so everything submitted before it is written
when it returns (the ledger's ``sync`` per finished item, a run's end, ``close``, the
interpreter's exit), and raises a write that failed in the background. (Waiting for the writer's
thread instead held each conversation's worker about 10 ms longer, more on a busy machine: 6 to 10%
fewer conversations in flight, measured.)
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

Item = TypeVar("Item")
GATHER_S = 0.01  # the writer lets submissions gather this long before a batch: ~100 writes a second at most
IDLE_EXIT_S = 5.0  # a writer's thread ends after this long without work (the next submit starts one)

_writers: weakref.WeakSet[WriteBehind[Any]] = weakref.WeakSet()


class WriteBehind(Generic[Item]):
    """``submit(item)`` from any thread; ``write(batch)`` runs on this object's own daemon thread,
    with the items in the order they were submitted."""

    def __init__(self, write: Callable[[list[Item]], None], name: str, gather_s: float = GATHER_S):
        self._write, self._name, self._gather_s = write, name, gather_s
        self._reset()
        _writers.add(self)

    def _reset(self) -> None:
        self._lock = threading.Lock()  # the queue, and the thread's start and end
        self._queue: collections.deque[Item] = collections.deque()
        # Held while a batch is taken and written: batches are written in the order they were taken.
        self._write_lock = threading.Lock()
        self._wake = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._closing = False

    def submit(self, item: Item) -> None:
        """Hand ``item`` over (no system call, no wait); a failed earlier write is raised here."""
        self._raise_failure()
        with self._lock:
            self._queue.append(item)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"write-behind-{self._name}", daemon=True)
                self._thread.start()
        if not self._wake.is_set():
            self._wake.set()

    def drain(self) -> None:
        """Write, in this thread, what is still queued (after the batch the writer may be writing),
        so that every item submitted before this call is written; raise a write that failed. The
        caller does not wait for the writer's thread to be woken and scheduled (on a busy machine,
        tens of milliseconds)."""
        self._write_queued()
        self._raise_failure()

    def close(self) -> None:
        """Drain, then let the thread end (a later submit starts another)."""
        self.drain()
        with self._lock:
            self._closing = True
        self._wake.set()

    def _raise_failure(self) -> None:
        if (error := self._error) is not None:
            self._error = None
            raise error

    def _write_queued(self) -> None:
        with self._write_lock:
            with self._lock:
                batch, self._queue = list(self._queue), collections.deque()
            if batch:
                try:
                    self._write(batch)
                except BaseException as error:  # raised to the submitting threads
                    self._error = error

    def _run(self) -> None:
        while True:
            woken = self._wake.wait(IDLE_EXIT_S)
            if woken:
                time.sleep(self._gather_s)  # let the other threads' submissions join this batch
            self._wake.clear()
            self._write_queued()
            with self._lock:
                if not self._queue and (self._closing or not woken):  # idle: no thread lingers per object
                    self._thread, self._closing = None, False
                    return


def drain_all() -> None:
    """Write out everything every writer of this process holds (a run's end; the interpreter's exit)."""
    failure: BaseException | None = None
    for writer in list(_writers):
        try:
            writer.drain()
        except BaseException as error:  # the others are written first
            failure = failure or error
    if failure is not None:
        raise failure


def _drain_at_exit() -> None:
    with contextlib.suppress(Exception):  # nothing is left to report it to at exit
        drain_all()


def _forget_threads_in_child() -> None:
    """A forked child has none of its parent's threads: its writers start afresh (empty)."""
    for writer in list(_writers):
        writer._reset()


atexit.register(_drain_at_exit)
os.register_at_fork(after_in_child=_forget_threads_in_child)
