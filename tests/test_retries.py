"""The retry loop every model client shares (agents/seam/retries.py): what it retries, how often, how long
it waits between attempts, and the error it leaves."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import openai
import pytest

from benchsmith.agents.seam.retries import backoff_seconds, retrying


@dataclass
class Settings:
    max_attempts: int = 4
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 3.0


def server_error(status: int, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    response = httpx.Response(status, headers=headers, request=httpx.Request("POST", "http://127.0.0.1/v1"))
    return (
        openai.InternalServerError("down", response=response, body=None)
        if status >= 500
        else openai.RateLimitError("slow down", response=response, body=None)
    )


class Attempts:
    """Raises the given errors in turn, then answers "done"."""

    def __init__(self, *errors: Exception):
        self.errors, self.calls = list(errors), 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "done"


def test_transient_errors_are_retried_with_the_waits_in_between():
    retried, waits = [], []
    attempt = Attempts(server_error(500), server_error(429, {"retry-after": "2"}))
    assert retrying(Settings(), retried.append, waits.append)(attempt) == "done"
    assert attempt.calls == 3 and [type(error) for error in retried] == [
        openai.InternalServerError,
        openai.RateLimitError,
    ]
    assert 0.5 <= waits[0] <= 1.0 and waits[1] == 2.0  # backoff, then what the server asked for


def test_the_last_error_is_raised_after_the_last_attempt_and_a_fatal_one_at_once():
    retried: list[BaseException] = []
    last = server_error(503)
    attempt = Attempts(server_error(500), server_error(502), server_error(500), last)
    with pytest.raises(openai.InternalServerError) as raised:
        retrying(Settings(), retried.append, lambda _: None)(attempt)
    assert raised.value is last and attempt.calls == 4 and len(retried) == 3

    fatal = ValueError("a bug, not a transport fault")
    attempt = Attempts(fatal)
    with pytest.raises(ValueError):
        retrying(Settings(), retried.append, lambda _: None)(attempt)
    assert attempt.calls == 1 and len(retried) == 3


def test_backoff_doubles_with_jitter_up_to_the_cap():
    settings, error = Settings(max_attempts=20), server_error(500)
    for attempt, floor in [(1, 0.5), (2, 1.0), (3, 2.0)]:
        waits = [backoff_seconds(settings, attempt, error) for _ in range(50)]
        assert all(floor <= wait <= min(floor + 0.5, 3.0) for wait in waits) and len(set(waits)) > 1
    assert backoff_seconds(settings, 4, error) == backoff_seconds(settings, 2000, error) == 3.0
