"""The seam's retry policy, shared by every client that talks to an OpenAI-compatible server
(chat completions in :mod:`~benchsmith.agents.seam.models`, embeddings in
:mod:`~benchsmith.agents.seam.embeddings`), and what a failure that outlasts it becomes.

Retried: 429 (waiting what ``retry-after-ms`` or ``Retry-After`` says, else exponential backoff
with jitter), 5xx, 408, 409, timeouts, connection errors and invalid output. Not retried: every
other 4xx and a 429 that says the quota is used up (:func:`~benchsmith.agents.seam.endpoints.is_fatal`);
those latch the endpoint. The failures raised are ours, redacted and unchained.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol, TypeVar

import openai
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from benchsmith.agents.seam.endpoints import display_url, endpoint_error, is_fatal, server_message
from benchsmith.agents.seam.errors import InvalidOutput, ModelSeamError, ModelUnavailableError
from benchsmith.agents.seam.redaction import redact

MAX_RETRY_AFTER_S = 60.0
T = TypeVar("T")


class RetrySettings(Protocol):
    @property
    def max_attempts(self) -> int: ...
    @property
    def backoff_initial_s(self) -> float: ...
    @property
    def backoff_max_s(self) -> float: ...


def is_retryable(error: BaseException) -> bool:
    """Transport faults and invalid output are retried; auth, bad requests and a used-up quota are not."""
    if isinstance(error, openai.RateLimitError):
        return not is_fatal(error)
    if isinstance(error, InvalidOutput | openai.APITimeoutError | openai.APIConnectionError):
        return True
    # 408 (request timeout) and 409 (conflict) are transient too, as the openai SDK treats them.
    return isinstance(error, openai.APIStatusError) and (error.status_code >= 500 or error.status_code in (408, 409))


def error_name(error: BaseException | None) -> str:
    """Stable names for the stats: openai's class, not a wrapper's subclass."""
    for cls in type(error).__mro__:
        if cls.__module__.startswith("openai") or cls is InvalidOutput:
            return cls.__name__
    return type(error).__name__


def retry_after_seconds(error: BaseException | None) -> float | None:
    """The server's wait before a retry: ``retry-after-ms``, else ``Retry-After`` (seconds or an
    HTTP date), capped at :data:`MAX_RETRY_AFTER_S`; ``None`` when it gives none."""
    response = getattr(error, "response", None)
    headers = response.headers if response is not None else {}
    seconds: float | None = None
    try:
        if (milliseconds := headers.get("retry-after-ms")) is not None:
            seconds = float(milliseconds) / 1000
        elif (value := headers.get("retry-after")) is not None:
            try:
                seconds = float(value)
            except ValueError:
                moment = email.utils.parsedate_to_datetime(value)
                seconds = moment.timestamp() - time.time()
    except (ValueError, TypeError, OverflowError):
        return None
    if seconds is None or seconds != seconds or seconds < 0:  # NaN or a date in the past
        return None
    return min(MAX_RETRY_AFTER_S, seconds)


class RetryStats(Protocol):
    retries: int
    retried_errors: dict[str, int]


class RetryCounter:
    """The ``on_retry`` of one call (chat completion or embedding batch): counts the call's retries
    (``count``) and adds each to the client's ``stats`` by error name, under the client's ``lock``."""

    def __init__(self, stats: RetryStats, lock: AbstractContextManager[object]):
        self.stats, self.lock, self.count = stats, lock, 0

    def __call__(self, error: BaseException | None) -> None:
        self.count += 1
        name = error_name(error) if error is not None else "unknown"
        with self.lock:
            self.stats.retries += 1
            self.stats.retried_errors[name] = self.stats.retried_errors.get(name, 0) + 1


def retrying(
    settings: RetrySettings,
    on_retry: Callable[[BaseException | None], None],
    sleep: Callable[[float], None] | None = None,
) -> Callable[[Callable[[], T]], T]:
    """The retry loop of one call: ``retrying(...)(attempt)`` calls ``attempt`` until it succeeds, fails
    for good or runs out of attempts (then the last error is raised). ``on_retry`` hears each error
    that is retried, before the wait; ``sleep`` replaces ``time.sleep`` (tests record the waits).

    The first attempt is a plain call; tenacity's ``Retrying`` takes over only after a retryable
    failure: built for every call it cost 17 to 45 microseconds of CPU even when the first attempt
    succeeds (its state objects and action queue), a twentieth of the client's budget per call."""
    pause = sleep or time.sleep

    def run(attempt: Callable[[], T]) -> T:
        try:
            return attempt()
        except Exception as error:
            if settings.max_attempts <= 1 or not is_retryable(error):
                raise
            first_error = error
        on_retry(first_error)
        pause(backoff_seconds(settings, 1, first_error))
        # Attempt numbers inside Retrying start again at 1: this call's are one more.
        return Retrying(
            retry=retry_if_exception(is_retryable),
            wait=lambda state: backoff_seconds(settings, state.attempt_number + 1, _failure(state)),
            stop=stop_after_attempt(settings.max_attempts - 1),
            before_sleep=lambda state: on_retry(_failure(state)),
            sleep=pause,
            reraise=True,
        )(attempt)

    return run


def _failure(state: RetryCallState) -> BaseException:
    """The error of the attempt that failed: tenacity waits and sleeps only after one, and retries only on an
    exception (``retry_if_exception``)."""
    error = state.outcome.exception() if state.outcome is not None else None
    assert error is not None
    return error


def backoff_seconds(settings: RetrySettings, attempt: int, error: BaseException) -> float:
    """The wait after failed attempt number ``attempt`` (from 1): what the server asked for
    (:func:`retry_after_seconds`), else exponential backoff with jitter, as tenacity's
    ``wait_exponential_jitter(initial, max, jitter=initial)``: ``initial × 2^(attempt-1)`` plus up to
    ``initial`` at random, at most ``backoff_max_s``."""
    after = retry_after_seconds(error)
    if after is not None:
        return after
    exponential = settings.backoff_initial_s * 2.0 ** min(attempt - 1, 64)  # a larger power overflows
    return max(0.0, min(exponential + random.uniform(0, settings.backoff_initial_s), settings.backoff_max_s))


def transport_failure(
    error: Exception,
    *,
    model: str,
    base_url: str | None,
    attempts: int,
    route: str = "chat completions",
    variables: dict[str, str] | None = None,
) -> BaseException:
    """The exception to raise for ``error`` once retrying is over: ours, with a redacted message and
    no chain (the openai errors hold the request with its headers, and the server's text). Errors
    that are neither the server's nor ours (a bug) come back unchanged: their traceback matters more."""
    where = f"model {model!r}" + (f" at {display_url(base_url)}" if base_url else "")
    if isinstance(error, ModelSeamError):
        clean: BaseException = error
    elif isinstance(error, openai.APIStatusError) and not is_retryable(error):
        clean = endpoint_error(error, base_url, model, route=route, **(variables or {}))
    elif isinstance(error, openai.APIError):
        name = error_name(error)
        said = server_message(error) if isinstance(error, openai.APIStatusError) else redact(str(error))
        clean = ModelUnavailableError(
            f"{where} still failed after {attempts} attempt(s); the last error was {name}: {said}. Check that "
            "the server is up and reachable, or allow more time (timeout) or more attempts (max attempts).",
            last_error=name,
        )
    elif mentions_secret(error):
        clean = ModelSeamError(redact(f"{type(error).__name__}: {error}"))
    else:
        return error
    clean.__cause__ = clean.__context__ = None
    clean.__suppress_context__ = True
    return clean


def mentions_secret(error: BaseException) -> bool:
    """Does ``error``, or anything chained to it, say something :func:`redact` would mask?"""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if redact(str(current)) != str(current):
            return True
        current = current.__cause__ or current.__context__
    return False
