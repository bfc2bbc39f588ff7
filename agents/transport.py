"""Posting JSON to an OpenAI-compatible server: the transport of the seam's chat requests.

:class:`JsonClient` is the standard library's ``http.client`` with a pool of kept-alive
connections. The openai SDK's client (httpx) did the same work at about 2.4 ms of CPU per chat
call where this takes 0.6 to 1 ms (64 calls in flight against the loopback server; the SDK's typed
``chat.completions.create`` and langchain-openai's ``ChatOpenAI`` cost more again). That matters
because a process runs Python on one core at a time: the CPU a call costs bounds the calls per
second one process can drive, whatever the server could serve.

Failures are the openai SDK's exceptions, built as its client builds them, so the seam's retry
policy, latch and messages treat them alike. A base URL that the environment sends through a
proxy (``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``, minus ``NO_PROXY``) is posted to with the
SDK's client instead, which knows proxies: :func:`json_client` chooses.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import ssl
import threading
import urllib.request
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx
import openai

# The SDK's error classes by status code, as its client picks them.
_STATUS_ERRORS: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError, 401: openai.AuthenticationError, 403: openai.PermissionDeniedError,
    404: openai.NotFoundError, 409: openai.ConflictError, 422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
}
USER_AGENT = f"benchsmith (OpenAI-compatible; openai/{openai.__version__})"


class JsonPoster(Protocol):
    def post(self, path: str, body: dict[str, Any]) -> Any: ...


def json_client(base_url: str, api_key: str, timeout_s: float) -> JsonPoster:
    """A :class:`JsonClient` for ``base_url``, or the SDK's client where a proxy is configured for it."""
    if uses_proxy(base_url):
        return SdkClient(base_url, api_key, timeout_s)
    return JsonClient(base_url, api_key, timeout_s)


def uses_proxy(url: str) -> bool:
    """Does the environment route requests to ``url`` through a proxy?"""
    proxies = urllib.request.getproxies()
    parts = urlsplit(url)
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(parts.hostname or "")


class JsonClient:
    """POST a JSON body, get the JSON reply; thread-safe, one kept-alive connection per request in flight."""

    def __init__(self, base_url: str, api_key: str, timeout_s: float):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) base URL: {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname, parts.port
        self._prefix = parts.path.rstrip("/")
        self._timeout_s = timeout_s
        self._headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json",
                         "Accept": "application/json", "User-Agent": USER_AGENT}
        self._tls = _tls_context() if self._https else None
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """The decoded JSON reply (a ``ValueError`` when it is not JSON); the SDK's exceptions for an
        error status, a timeout or a lost connection."""
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        connection, reused = self._checkout()
        try:
            try:
                response, payload = self._exchange(connection, path, data)
            except (ConnectionError, http.client.RemoteDisconnected) as error:
                if not reused:
                    raise
                # A kept-alive connection the server closed just as it was taken (its FIN still
                # on the way): the request never reached the server, so it goes once more on a
                # fresh connection, as HTTP clients do for stale connections.
                connection.close()
                connection = self._new_connection()
                response, payload = self._exchange(connection, path, data)
        except TimeoutError:
            connection.close()
            raise openai.APITimeoutError(request=self._request(path)) from None
        except (OSError, http.client.HTTPException) as error:
            connection.close()
            raise openai.APIConnectionError(message=f"Connection error: {type(error).__name__}: {error}",
                                            request=self._request(path)) from None
        if response.will_close:
            connection.close()
        else:
            with self._lock:
                self._idle.append(connection)
        if response.status >= 400:
            raise status_error(httpx.Response(response.status, headers=response.getheaders(), content=payload,
                                              request=self._request(path)))
        return json.loads(payload)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def _exchange(self, connection: http.client.HTTPConnection, path: str,
                  data: bytes) -> tuple[http.client.HTTPResponse, bytes]:
        connection.request("POST", self._prefix + path, body=data, headers=self._headers)
        response = connection.getresponse()
        return response, response.read()

    def _checkout(self) -> tuple[http.client.HTTPConnection, bool]:
        """``(connection, reused)``: the most recently used idle connection the server has not
        closed, else a new one."""
        while True:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            if connection is None:
                return self._new_connection(), False
            if not _dropped(connection):
                return connection, True
            connection.close()

    def _new_connection(self) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(self._host, self._port, timeout=self._timeout_s, context=self._tls)
        return http.client.HTTPConnection(self._host, self._port, timeout=self._timeout_s)

    def _request(self, path: str) -> httpx.Request:
        """The request as the SDK's exceptions describe it (never its headers: they hold the key)."""
        return httpx.Request("POST", self.base_url + path)


class SdkClient:
    """The openai SDK's client posting plain JSON (for proxies, which it knows)."""

    def __init__(self, base_url: str, api_key: str, timeout_s: float):
        self.base_url = base_url.rstrip("/")
        self._client = openai.OpenAI(base_url=self.base_url, api_key=api_key, timeout=timeout_s, max_retries=0)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self._client.post(path, body=body, cast_to=dict)


def status_error(response: httpx.Response) -> openai.APIStatusError:
    """The openai SDK's exception for a 4xx or 5xx response: the class by status, the server's JSON
    ``error`` as the body, its message in the text (as the SDK's client builds it)."""
    text = response.text.strip()
    message = f"Error code: {response.status_code}"
    try:
        body: Any = json.loads(text)
    except ValueError:
        body = text
    data = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(data, dict) and isinstance(data.get("message"), str) and data["message"]:
        message += f" - {data['message']}"
    status = response.status_code
    error_class = _STATUS_ERRORS.get(status) or (openai.InternalServerError if status >= 500 else openai.APIStatusError)
    return error_class(message, response=response, body=data)


def _dropped(connection: http.client.HTTPConnection) -> bool:
    """Has the server closed (or written to) an idle kept-alive connection? Its socket reads then."""
    sock = connection.sock
    if sock is None:
        return True
    try:
        if hasattr(select, "poll"):  # no limit on descriptor numbers, unlike select()
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def _tls_context() -> ssl.SSLContext:
    """Certificates from ``SSL_CERT_FILE``, else certifi's bundle (as httpx), else the system's."""
    cafile = os.environ.get("SSL_CERT_FILE")
    if not cafile:
        try:
            import certifi

            cafile = certifi.where()
        except ImportError:
            cafile = None
    return ssl.create_default_context(cafile=cafile)
