"""A page's run (``label``, ``review``): the run record opened under the workspace's claim, the page
served until the user stops it, the export written, the record finished, or crashed with the reason."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from typing import Any, Protocol

from benchsmith.pages.server import Address, Listener, PageApp, serve
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.run_claims import workspace_claim
from benchsmith.stores.persistence.runs import RunDirectory


class ExportingPage(PageApp, Protocol):
    def export(self) -> dict[str, Any]:
        """Write the run's exports and return its summary (what the run record keeps)."""
        ...


def recorded_config(run_dir: RunDirectory, job: str) -> dict[str, Any] | None:
    """The settings ``run_dir`` recorded as a run of ``job`` (None: a new run); a run of another
    job under the id stops here."""
    if not run_dir.exists():
        return None
    record = run_dir.load()
    if record.job != job:
        raise InputError(f"run {run_dir.run_id!r} is a {record.job} run, not {job}; choose another --run-id")
    return record.config


def run_page(
    run_dir: RunDirectory,
    job: str,
    recorded: dict[str, Any],
    open_session: Callable[[], ExportingPage],
    listener: Listener | None,
    on_ready: Callable[[Address], None] | None,
    resume: str | None = None,
) -> dict[str, Any]:
    """Serve ``open_session()`` on ``listener`` (none: only export) as run ``run_dir`` of ``job``
    and return the summary its export wrote; the listener is closed whatever happens."""
    try:
        with workspace_claim(run_dir.path, run_dir.run_id):
            run_dir.start(job, recorded, resume=resume)
            try:
                session = open_session()
                if listener is not None:
                    serve(session, on_ready=on_ready, listener=listener)
                summary = session.export()
            except BaseException as error:
                with suppress(Exception):
                    run_dir.crash(f"{type(error).__name__}: {error}")
                raise
            run_dir.finish(summary)
    finally:
        if listener is not None:
            listener.close()
    return summary
