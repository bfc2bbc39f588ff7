"""A stop asked of the running job by a signal: a long node ends at its next progress report.

When the main thread is interrupted, LangGraph still waits for the nodes running in its worker
threads, so a SIGTERM or a Ctrl-C during a long node (ingest's embedding: minutes with the real
model) let that node run to its end before the process could exit. The CLI's signal handlers call
:func:`request_stop`; every progress report (graphs/runtime/progress.py) then raises
:class:`RunStopped` in the node that makes it, so the run stops within one batch and is recorded
as the signal left it (crashed, resumable).
"""

from __future__ import annotations

import threading

_requested = threading.Event()


class RunStopped(Exception):
    """Raised in a node that reports progress after a stop was asked."""


def request_stop() -> None:
    _requested.set()


def clear_stop() -> None:
    """A new run in this process starts unstopped."""
    _requested.clear()


def raise_if_stopped() -> None:
    if _requested.is_set():
        raise RunStopped("the run was asked to stop (a signal)")
