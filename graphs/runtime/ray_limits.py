"""Model endpoints' rate limits shared by every process of a Ray run (``--ray`` with
``--rate-limit``): one named Ray actor per run's driver, asked for a turn before each request to
an endpoint, so the nodes together keep the rate one process keeps alone.

The actor keeps, per endpoint (its normalized base URL), the time its next request may start, and
answers how long the caller waits (a bucket of one request, as the in-process limiter). The
driver creates it (it is owned by the driver's job, and goes with it; Ray restarts it should its
node die); a node finds it by name in the job's namespace. Where it cannot be reached, a process
falls back to its own limiter (agents/seam/endpoints.py). The concurrency needs no actor: the
driver holds a run's ``--concurrency`` slots while its items run on the nodes.
"""

from __future__ import annotations

import threading
import time
from typing import Any

LIMITER_NAME = "benchsmith-endpoint-rates"

_lock = threading.Lock()
_handle: Any = None


class EndpointRates:
    """The actor: when each endpoint's next request may start."""

    def __init__(self) -> None:
        self.next_start: dict[str, float] = {}

    def turn(self, endpoint: str, requests_per_second: float) -> float:
        """Seconds the caller waits before its request: the next free slot, then the one after it taken."""
        now = time.monotonic()
        start = max(now, self.next_start.get(endpoint, now))
        self.next_start[endpoint] = start + 1.0 / requests_per_second
        return start - now


def start_shared_rates(ray: Any) -> None:
    """The run's limiter actor, created by the driver once per job (none on a CPU of its own)."""
    global _handle
    with _lock:
        if _handle is not None:
            return
        _handle = (
            ray.remote(EndpointRates)
            .options(name=LIMITER_NAME, get_if_exists=True, num_cpus=0, max_restarts=-1, max_task_retries=-1)
            .remote()
        )


def forget_shared_rates() -> None:
    """A new connection: the actor of the last one is not this one's."""
    global _handle
    with _lock:
        _handle = None


def shared_turn(endpoint: str, requests_per_second: float) -> bool:
    """Wait for ``endpoint``'s next turn from the run's limiter actor; False when there is none to ask."""
    global _handle
    import ray

    if not ray.is_initialized():  # this process left the cluster: its own limiter holds
        return False
    with _lock:
        if _handle is None:
            try:
                _handle = ray.get_actor(LIMITER_NAME)
            except ValueError:  # not started: this run asked for no rate limit before
                return False
        handle = _handle
    wait = ray.get(handle.turn.remote(endpoint, requests_per_second))
    if wait > 0:
        time.sleep(wait)
    return True
