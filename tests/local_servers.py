"""Start a server program of the test's own on a free loopback port, and stop it after."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def local_server(
    command: Sequence[str],
    health_path: str,
    port: int,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout_s: float = 60,
) -> Iterator[str]:
    """Run ``command`` (which listens on ``port``) until ``health_path`` answers 200; yield its base URL.

    The server runs in a process group of its own, stopped whole afterwards whatever the outcome:
    a server that starts workers of its own leaves none of them running."""
    server = subprocess.Popen(
        list(command), cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if httpx.get(base + health_path, timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{command[0]} did not come up on port {port}")
            time.sleep(0.2)
        yield base
    finally:
        _stop_group(server)


def _stop_group(server: subprocess.Popen) -> None:
    try:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
    except ProcessLookupError:
        server.wait(timeout=30)
    with suppress(ProcessLookupError):  # the group may outlive its leader (workers the server started)
        os.killpg(server.pid, signal.SIGKILL)


def processes_running(*arguments: str) -> list[int]:
    """Pids of this machine's processes whose command line holds every one of ``arguments``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if all(argument in words for argument in arguments):
            found.append(int(entry.name))
    return found
