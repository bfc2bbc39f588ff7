"""A CLI run killed as a user kills it: started as a subprocess, SIGKILLed once its own log shows
finished items while the user's system holds the next request, then resumed by the same command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WAIT_S = 300  # bound on every wait; never a timing assertion


def complete_lines(path: Path) -> list[dict]:
    """The log's complete lines (a line being written when the process died is not one)."""
    if not path.exists():
        return []
    data = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in data[: data.rfind("\n") + 1].splitlines() if line]


def kill_once_logged(command: list[str], log: Path, hanging: threading.Event) -> list[dict]:
    """Start ``command``; once ``log`` holds a finished item and the user's system is holding the
    next request, SIGKILL it. Returns the log's finished items at the kill."""
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + WAIT_S
        while not (complete_lines(log) and hanging.is_set()):
            assert process.poll() is None, process.stdout.read().decode() if process.stdout else ""
            assert time.monotonic() < deadline, "the run logged nothing in time"
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=WAIT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == -signal.SIGKILL
    return complete_lines(log)


def resume(command: list[str]) -> None:
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    resumed = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=WAIT_S)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
