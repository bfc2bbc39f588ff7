"""Progress events a node streams to whoever runs the graph (``stream_mode="custom"``).

Three shapes, one per kind of work, read by the CLI's progress bars (benchsmith/cli/console.py)
and by any app that streams a graph:

* ``{"stage": S, "done": D, "total": T}``: stage S has done D of T items (T may be None);
* ``{"stage": S, "advance": 1}``: one more item of S finished (fan-out workers, which do not
  know how many siblings finished before them);
* ``{"stage": S, "reused": True}``: S was finished before a crash and is reused as it is;
* ``{"warning": MESSAGE}``: something in the input the user should know (e.g. ids a file
  names that the benchmark lacks); the job goes on.

Outside a streamed run the writer does nothing, so nodes report unconditionally. A report is
also where a node notices a stop asked by a signal (graphs/runtime/stopping.py).
"""

from __future__ import annotations

from langgraph.config import get_stream_writer

from benchsmith.graphs.runtime.stopping import raise_if_stopped
from benchsmith.stores.progress import ProgressCallback  # the one callback type, shared with tools/


def progress_reporter(stage: str) -> ProgressCallback:
    """A ``(done, total)`` callback that streams progress events for ``stage``; outside a graph's run
    (a Ray task on a node: the run's own process reports its items) it reports nothing."""
    try:
        writer = get_stream_writer()
    except RuntimeError:  # langgraph's "outside of a runnable context"

        def unreported(done: int, total: int | None = None) -> None:
            raise_if_stopped()

        return unreported

    def report(done: int, total: int | None = None) -> None:
        raise_if_stopped()
        writer({"stage": stage, "done": done, "total": total})

    return report


def report_advance(stage: str) -> None:
    """One more item of ``stage`` finished."""
    raise_if_stopped()
    get_stream_writer()({"stage": stage, "advance": 1})


def report_reused(stage: str) -> None:
    """``stage`` was finished before and is reused, not recomputed."""
    get_stream_writer()({"stage": stage, "reused": True})


def report_warning(message: str) -> None:
    """Something in the input the user should know; the job goes on."""
    get_stream_writer()({"warning": message})
