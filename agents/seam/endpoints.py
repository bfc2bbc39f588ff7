"""What the seam knows about each OpenAI-compatible endpoint (base URL), shared by every seam
of the process.

* which structured-output method works there (found once by falling back, then reused);
* the fatal error that latched it: after a 401, a 404 or a bad request, every later call to
  the endpoint fails at once without contacting the server, so parallel graph workers stop
  on their next call instead of draining minutes of doomed requests;
* one rate limiter, so seams of several roles on one server share one requests-per-second budget.

It also resolves the base URL and key from the environment: ``OPENAI_API_KEY`` is optional
for a server on this machine or a private network.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import openai

from benchsmith.agents.seam.errors import MissingAPIKeyError, ModelEndpointError
from benchsmith.agents.seam.redaction import redact

logger = logging.getLogger("benchsmith")

OFFICIAL_BASE_URL = "https://api.openai.com/v1"
# OPENAI_API_BASE (langchain-openai's name) wins over the SDK's OPENAI_BASE_URL, as it always did here.
BASE_URL_ENVS = ("OPENAI_API_BASE", "OPENAI_BASE_URL")
API_KEY_ENV = "OPENAI_API_KEY"
# Sent to local servers when no key is set: the client needs some value, most local servers ignore it.
LOCAL_PLACEHOLDER_KEY = "no-key-needed"


def normalize_base_url(base_url: str | None) -> str:
    """The registry key of a base URL: the official one for ``None``, without a trailing slash."""
    return (base_url or OFFICIAL_BASE_URL).strip().rstrip("/")


def resolve_base_url() -> str:
    """The base URL the environment selects (``OPENAI_API_BASE``, ``OPENAI_BASE_URL``, else OpenAI's)."""
    return normalize_base_url(next((os.environ[name] for name in BASE_URL_ENVS if os.environ.get(name)), None))


@functools.lru_cache(maxsize=256)
def is_official(base_url: str | None) -> bool:
    """Is ``base_url`` OpenAI's own endpoint? (Cached: the seam prices every call by it.)"""
    return (urlsplit(normalize_base_url(base_url)).hostname or "") == "api.openai.com"


def display_url(base_url: str) -> str:
    """The base URL fit for a message: no credentials, no query string."""
    parts = urlsplit(base_url)
    return redact(urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")))


def is_local_base_url(base_url: str | None) -> bool:
    """True for ``localhost`` and addresses that are not globally routable (loopback, private,
    link-local, carrier-grade NAT as Tailscale uses): servers the user runs."""
    host = urlsplit(normalize_base_url(base_url)).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False  # a host name: resolving it here would be a network call
    return not address.is_global


def resolve_api_key(base_url: str) -> str:
    """``OPENAI_API_KEY``, or a placeholder for a local server; a clear error otherwise."""
    if key := os.environ.get(API_KEY_ENV):
        return key
    if is_local_base_url(base_url):
        return LOCAL_PLACEHOLDER_KEY
    raise MissingAPIKeyError(
        f"openai: models on {display_url(base_url)} need OPENAI_API_KEY in the environment "
        "(only a server on this machine or a private network, set with OPENAI_BASE_URL, works without one)"
    )


def server_message(error: openai.APIStatusError) -> str:
    """The server's own words (the ``message`` of its JSON error, else the SDK's text without its
    "Error code: 401 - " prefix), redacted."""
    body = getattr(error, "body", None)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        message = body["message"]
    else:
        message = re.sub(r"^Error code: \d+ - ", "", getattr(error, "message", None) or str(error))
    return redact(message.strip())


def is_fatal(error: BaseException) -> bool:
    """Errors no retry fixes: every 4xx but 408 (timeout), 409 (conflict) and 429 (rate limit);
    a 429 that says the quota is used up is fatal too."""
    if not isinstance(error, openai.APIStatusError):
        return False
    if error.status_code == 429:
        return getattr(error, "code", None) == "insufficient_quota"
    return 400 <= error.status_code < 500 and error.status_code not in (408, 409)


def endpoint_error(
    error: openai.APIStatusError,
    base_url: str | None,
    model: str,
    route: str = "chat completions",
    key_variable: str = API_KEY_ENV,
    url_variable: str = "OPENAI_BASE_URL",
) -> ModelEndpointError:
    """Our fatal error for a server's refusal, saying what to fix; ``route`` names the API called
    ("chat completions", "embeddings"), ``key_variable`` and ``url_variable`` the environment variables
    the key and the server came from (the embeddings' may be their own)."""
    where = display_url(normalize_base_url(base_url)) if base_url else "the model server"
    status, said = error.status_code, server_message(error)
    if status == 401:
        advice = f"{where} refused the API key (401: {said}). Check {key_variable}: it must be a valid key for {where}."
    elif status == 403:
        advice = (
            f"{where} denied access to model {model!r} (403: {said}). Check that the key in {key_variable} "
            f"has permission for this model on {where}."
        )
    elif status == 404:
        advice = (
            f"{where} has no model {model!r} or no {route} route (404: {said}). Check the model "
            f"name (openai:<model>) and {url_variable} (it usually ends in /v1)."
        )
    elif status == 429:
        advice = f"{where} says the quota is used up (429: {said}). Check the billing or the key's quota."
    else:
        advice = f"{where} rejected the request for model {model!r} ({status}: {said})."
    return ModelEndpointError(advice, base_url=base_url, status_code=status)


@dataclass
class Endpoint:
    """The shared state of one base URL."""

    base_url: str
    structured_output: str | None = None  # the method that works here, once one was rejected
    latched: ModelEndpointError | None = None
    requests_per_second: float | None = None
    _limiter: object | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def raise_if_latched(self) -> None:
        if (latched := self.latched) is not None:
            raise ModelEndpointError(str(latched), base_url=latched.base_url, status_code=latched.status_code)

    def latch(self, error: ModelEndpointError) -> ModelEndpointError:
        """Make ``error`` the answer to every later call here; the first fatal error stays."""
        with self._lock:
            if self.latched is None:
                self.latched = error
            return self.latched

    def method(self, default: str) -> str:
        with self._lock:
            return self.structured_output or default

    def fall_back(self, rejected: str, replacement: str, reason: str) -> None:
        """Use ``replacement`` from now on, unless another call already moved past ``rejected``."""
        with self._lock:
            if (self.structured_output or rejected) != rejected:
                return
            self.structured_output = replacement
        logger.warning(
            "%s rejected %s structured output (%s); using %s for every call to it from now on",
            display_url(self.base_url),
            rejected,
            reason,
            replacement,
        )

    def share_rate_limit(self, requests_per_second: float | None) -> None:
        """Join the endpoint's budget; the lowest rate any seam asks for holds for all."""
        if not requests_per_second:
            return
        # Deferred: langchain_core is needed only when a rate limit is asked for.
        from langchain_core.rate_limiters import InMemoryRateLimiter

        with self._lock:
            if self._limiter is None:
                self._limiter = InMemoryRateLimiter(
                    requests_per_second=requests_per_second, check_every_n_seconds=0.01, max_bucket_size=1
                )
                self.requests_per_second = requests_per_second
            elif requests_per_second < (self.requests_per_second or float("inf")):
                self._limiter.requests_per_second = requests_per_second  # type: ignore[attr-defined]
                self.requests_per_second = requests_per_second

    def wait_for_turn(self, requests_per_second: float | None = None) -> None:
        """Block until the endpoint's rate budget (joined at ``requests_per_second``) allows one more
        request: the budget every process of the run shares where one is set
        (:func:`share_rate_limits_with`), else this process's."""
        self.share_rate_limit(requests_per_second)
        if self._limiter is None:
            return
        shared = _shared_turns
        if shared is not None and self.requests_per_second and shared(self.base_url, self.requests_per_second):
            return
        self._limiter.acquire(blocking=True)  # type: ignore[attr-defined]


# (base URL, requests per second) -> whether a turn was granted; set where several processes call
# the same endpoints for one run (a Ray run: graphs/runtime/ray_limits.py). None: this process alone.
SharedTurns = Callable[[str, float], bool]
_shared_turns: SharedTurns | None = None


def share_rate_limits_with(turns: SharedTurns | None) -> None:
    """Every endpoint's rate budget from now on taken from ``turns`` (a limiter the processes of a
    run share), falling back to this process's limiter when it grants nothing; None: this process's."""
    global _shared_turns
    _shared_turns = turns


_endpoints: dict[str, Endpoint] = {}
_registry_lock = threading.Lock()


def endpoint(base_url: str | None) -> Endpoint:
    """The process-wide state of ``base_url``."""
    key = normalize_base_url(base_url)
    with _registry_lock:
        if key not in _endpoints:
            _endpoints[key] = Endpoint(key)
        return _endpoints[key]


def forget_endpoints(base_url: str | None = None) -> None:
    """Drop what is known of ``base_url`` (every endpoint when ``None``): its method, latch and
    limiter. For a long-lived process starting afresh (after the key was fixed) and for tests."""
    with _registry_lock:
        if base_url is None:
            _endpoints.clear()
        else:
            _endpoints.pop(normalize_base_url(base_url), None)
