"""A real PostgreSQL server for the tests, in a temporary directory on a loopback port.

Debian's ``postgresql`` package provides ``initdb`` and ``pg_ctl`` (``make test`` installs it
when it is missing and the user is root). ``initdb`` refuses to run as root, so as root the
cluster belongs to the ``postgres`` user. Where no server can be started the tests that need
one are skipped with the reason.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.local_servers import free_port


def postgres_bin() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: on PATH, else Debian's versioned folder."""
    if initdb := shutil.which("initdb"):
        return Path(initdb).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _as_owner(command: list[str], owner: str | None) -> list[str]:
    return ["su", owner, "-c", " ".join(command)] if owner else command


class PostgresUnavailable(RuntimeError):
    """No server could be started here; the message says why."""


@contextmanager
def running_postgres() -> Iterator[str]:
    """``postgresql://…`` of a fresh server in a temporary directory, stopped and removed after."""
    binaries = postgres_bin()
    if binaries is None:
        raise PostgresUnavailable(
            "PostgreSQL is not installed (Debian: apt-get install postgresql; `make test` does it as root)"
        )
    owner = "postgres" if os.geteuid() == 0 else None
    directory = Path(tempfile.mkdtemp(prefix="benchsmith-pg-"))
    if owner:
        shutil.chown(directory, owner)
    data, port = directory / "data", free_port()
    try:
        initialized = subprocess.run(
            _as_owner([str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"], owner),
            capture_output=True,
            text=True,
        )
        if initialized.returncode != 0:
            raise PostgresUnavailable(f"initdb failed: {initialized.stderr.strip()[-300:]}")
        options = f"-p {port} -k {directory} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        started = subprocess.run(
            _as_owner(
                [
                    str(binaries / "pg_ctl"),
                    "-D",
                    str(data),
                    "-o",
                    f"'{options}'",
                    "-l",
                    str(directory / "log"),
                    "-w",
                    "start",
                ],
                owner,
            ),
            capture_output=True,
            text=True,
        )
        if started.returncode != 0:
            raise PostgresUnavailable(f"PostgreSQL did not start: {started.stderr.strip()[-300:]}")
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(
                _as_owner([str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], owner),
                capture_output=True,
            )
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """``postgresql://…`` of a fresh server for the session; each test makes its own database."""
    try:
        server = running_postgres()
        url = server.__enter__()
    except PostgresUnavailable as reason:
        pytest.skip(str(reason))
    try:
        yield url
    finally:
        server.__exit__(None, None, None)


@pytest.fixture
def database(postgres_url: str, request) -> str:
    """A new, empty database for one test."""
    import psycopg

    name = "t_" + "".join(c if c.isalnum() else "_" for c in request.node.name.lower())[:50]
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')
    return postgres_url.rsplit("/", 1)[0] + "/" + name
