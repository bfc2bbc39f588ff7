"""Posting JSON to an OpenAI-compatible server: the transport of the seam's chat requests.

:class:`JsonClient` speaks just the HTTP/1.1 a JSON POST needs over a pool of kept-alive
connections: the request's head is built once per path, sent with its body in one write, and the
reply's head is read with one split per line. That matters because a process runs Python on one
core at a time: the CPU a call costs bounds the calls per second one process can drive, whatever
the server could serve. Client CPU per chat call against the loopback server (system time
included): the openai SDK's client (httpx) about 2.4 ms at 64 calls in flight; one thread posting
in a loop, the standard library's ``http.client`` 0.25 ms (much of it parsing the reply's headers
as an e-mail message), this 0.11 ms.

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
import socket
import ssl
import struct
import threading
import time
import urllib.request
from typing import Any, NamedTuple, Protocol
from urllib.parse import urlsplit

import httpx
import openai

# The SDK's error classes by status code, as its client picks them.
_STATUS_ERRORS: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    409: openai.ConflictError,
    422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
}
USER_AGENT = f"benchsmith (OpenAI-compatible; openai/{openai.__version__})"
# Built once: json.dumps builds an encoder at every call that passes an option.
_JSON = json.JSONEncoder(ensure_ascii=False)
RECEIVE_BYTES = 262144  # read at most this much per system call
FRESH_S = 1.0  # an idle connection younger than this is taken without asking whether the server closed it
MAX_HEAD_BYTES = 65536  # a reply head longer than this is refused (it is no model server's)


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
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path.rstrip("/")
        self._timeout_s = timeout_s
        # As http.client writes it: the port only when it is not the scheme's, an IPv6 address in brackets.
        host = f"[{self._host}]" if ":" in self._host else self._host
        self._host_header = host if self._port == (443 if self._https else 80) else f"{host}:{self._port}"
        self._headers = {
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
            "Accept-Encoding": "identity",
        }
        self._heads: dict[str, bytes] = {}  # per path: the request's head up to the Content-Length value
        self._tls = _tls_context() if self._https else None
        self._idle: list[Connection] = []
        self._lock = threading.Lock()

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """The decoded JSON reply (a ``ValueError`` when it is not JSON); the SDK's exceptions for an
        error status, a timeout or a lost connection."""
        data = _JSON.encode(body).encode("utf-8")
        request = b"%s%d\r\n\r\n%s" % (self._head(path), len(data), data)
        connection, reused = self._checkout()
        try:
            try:
                response = connection.exchange(request)
            except ConnectionError:
                if not reused:
                    raise
                # A kept-alive connection the server closed just as it was taken (its FIN still
                # on the way): the request never reached the server, so it goes once more on a
                # fresh connection, as HTTP clients do for stale connections.
                connection.close()
                connection = self._new_connection()
                response = connection.exchange(request)
        except TimeoutError:
            connection.close()
            # openai declares httpx2's types for what its errors carry; ours are httpx's, which it only stores
            raise openai.APITimeoutError(request=self._request(path)) from None  # type: ignore[arg-type]
        except (OSError, http.client.HTTPException) as error:
            connection.close()
            raise openai.APIConnectionError(
                message=f"Connection error: {type(error).__name__}: {error}",
                request=self._request(path),  # type: ignore[arg-type]  # (httpx's, as above)
            ) from None
        if response.keep_alive:
            connection.idle_since = time.monotonic()
            with self._lock:
                self._idle.append(connection)
        else:
            connection.close()
        if response.status >= 400:
            raise status_error(
                httpx.Response(
                    response.status, headers=response.headers, content=response.body, request=self._request(path)
                )
            )
        return json.loads(response.body)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def _head(self, path: str) -> bytes:
        head = self._heads.get(path)
        if head is None:
            lines = [
                f"POST {self._prefix}{path} HTTP/1.1",
                f"Host: {self._host_header}",
                *(f"{name}: {value}" for name, value in self._headers.items()),
                "Content-Length: ",
            ]
            head = self._heads[path] = "\r\n".join(lines).encode("latin-1")
        return head

    def _checkout(self) -> tuple[Connection, bool]:
        """``(connection, reused)``: the most recently used idle connection the server has not
        closed, else a new one. Servers close idle connections after seconds, so one idle for less
        than :data:`FRESH_S` is taken unchecked (a check is a system call); if the server closed it
        anyway, :meth:`post` sends the request again on a new one."""
        while True:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            if connection is None:
                return self._new_connection(), False
            if time.monotonic() - connection.idle_since < FRESH_S or not _dropped(connection):
                return connection, True
            connection.close()

    def _new_connection(self) -> Connection:
        return Connection(self._host, self._port, self._timeout_s, self._tls)

    def _request(self, path: str) -> httpx.Request:
        """The request as the SDK's exceptions describe it (never its headers: they hold the key)."""
        return httpx.Request("POST", self.base_url + path)


class Response(NamedTuple):
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    keep_alive: bool  # the connection may carry the next request


class Connection:
    """One HTTP/1.1 connection (TLS when given a context), opened at its first request.

    Errors are those of ``http.client``: ``RemoteDisconnected`` (a ``ConnectionError``) when the
    server closed the connection before answering, ``IncompleteRead`` when it closed mid-reply,
    ``BadStatusLine`` or ``HTTPException`` for a reply that is not HTTP; ``TimeoutError`` when a
    read or the connect takes longer than ``timeout_s``.
    """

    def __init__(self, host: str, port: int, timeout_s: float, tls: ssl.SSLContext | None = None):
        self._address, self._timeout_s, self._tls = (host, port), timeout_s, tls
        self.sock: socket.socket | None = None
        self.idle_since = 0.0  # time.monotonic() when it last went back to the pool
        self._buffer = bytearray()

    def exchange(self, request: bytes) -> Response:
        """Send ``request`` (head and body), read the reply."""
        if self.sock is None:
            self.sock = self._connect()
        try:
            self.sock.sendall(request)
        except BlockingIOError:  # the kernel's send timeout ran out
            raise TimeoutError("timed out") from None
        status, version, headers = self._read_head()
        while 100 <= status < 200:  # interim replies (100 Continue, 103 Early Hints) precede the real one
            status, version, headers = self._read_head()
        fields = {name.lower(): value for name, value in headers}
        body, until_close = self._read_body(fields)
        connection = fields.get("connection", "").lower()
        keep_alive = (
            not until_close
            and not self._buffer
            and ("keep-alive" in connection if version == "HTTP/1.0" else "close" not in connection)
        )
        return Response(status, headers, body, keep_alive)

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _connect(self) -> socket.socket:
        sock = socket.create_connection(self._address, self._timeout_s)
        # The request goes out in one write; without this a reply's ACK could wait for Nagle.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._tls is not None:  # OpenSSL retries a read the kernel timed out: TLS keeps Python's timeout
            try:
                return self._tls.wrap_socket(sock, server_hostname=self._address[0])
            except BaseException:
                sock.close()
                raise
        # A socket with a Python timeout polls before every send and receive, a system call more each
        # (and a hand-over of the interpreter to another thread): the kernel times them out instead.
        sock.settimeout(None)
        timeout = struct.pack("ll", int(self._timeout_s), int(self._timeout_s % 1 * 1_000_000))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeout)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeout)
        return sock

    def _read_head(self) -> tuple[int, str, list[tuple[str, str]]]:
        """The status, the HTTP version and the headers of the next reply on the connection."""
        end = self._buffer.find(b"\r\n\r\n")
        while end < 0:
            if len(self._buffer) > MAX_HEAD_BYTES:
                raise http.client.HTTPException(f"a reply head longer than {MAX_HEAD_BYTES} bytes")
            if not self._receive():
                if self._buffer:
                    raise http.client.IncompleteRead(bytes(self._buffer))
                raise http.client.RemoteDisconnected("Remote end closed connection without response")
            end = self._buffer.find(b"\r\n\r\n")
        lines = self._buffer[:end].decode("latin-1").split("\r\n")
        del self._buffer[: end + 4]
        version, _, rest = lines[0].partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/") or len(code) != 3 or not code.isdigit():
            raise http.client.BadStatusLine(lines[0])
        headers = []
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not colon:
                raise http.client.HTTPException(f"a reply header without a colon: {line!r}")
            headers.append((name.strip(), value.strip()))
        return int(code), version, headers

    def _read_body(self, fields: dict[str, str]) -> tuple[bytes, bool]:
        """The reply's body, and whether it ran to the connection's close (then the connection is spent)."""
        if "chunked" in fields.get("transfer-encoding", "").lower():
            return self._read_chunked(), False
        if (length := fields.get("content-length")) is not None:
            try:
                return self._read_exactly(int(length)), False
            except ValueError:
                raise http.client.HTTPException(f"a reply with Content-Length {length!r}") from None
        while self._receive():  # no length: the body runs to the end of the connection
            pass
        body = bytes(self._buffer)
        self._buffer.clear()
        return body, True

    def _read_exactly(self, size: int) -> bytes:
        while len(self._buffer) < size:
            if not self._receive():
                raise http.client.IncompleteRead(bytes(self._buffer), size - len(self._buffer))
        body = bytes(self._buffer[:size])
        del self._buffer[:size]
        return body

    def _read_line(self) -> bytes:
        while (end := self._buffer.find(b"\r\n")) < 0:
            if not self._receive():
                raise http.client.IncompleteRead(bytes(self._buffer))
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 2]
        return line

    def _read_chunked(self) -> bytes:
        chunks: list[bytes] = []
        while True:
            size_field = self._read_line().split(b";", 1)[0].strip()
            try:
                size = int(size_field, 16)
            except ValueError:
                raise http.client.HTTPException(f"a chunk size {size_field!r} that is not hexadecimal") from None
            if size == 0:
                while self._read_line():  # the trailer's fields, up to an empty line
                    pass
                return b"".join(chunks)
            chunks.append(self._read_exactly(size))
            if self._read_line():
                raise http.client.HTTPException("a chunk longer than its size")

    def _receive(self) -> int:
        """Add what the socket has to the buffer: the number of bytes read, 0 at the connection's end."""
        try:
            data = self.sock.recv(RECEIVE_BYTES)  # type: ignore[union-attr]
        except BlockingIOError:  # the kernel's receive timeout ran out
            raise TimeoutError("timed out") from None
        self._buffer += data
        return len(data)


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
    return error_class(message, response=response, body=data)  # type: ignore[arg-type]  # (httpx's, as above)


def _dropped(connection: Connection) -> bool:
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
