"""The server of the labelling and review pages: the page, its static files, and a JSON API that
a page object answers (``answer(method, route, query, body)``).

Bound to 127.0.0.1 by default. On any other address every API request must carry the access token
printed at start (the page reads it from its address and sends it in a header): anyone who can
reach the port could otherwise read the collection and write judgments. On loopback the Host
header must name the loopback address, so a web page elsewhere cannot reach the API through a
DNS name rebound to 127.0.0.1. Every response forbids inline scripts and remote resources
(Content-Security-Policy), so document text that slipped into markup still could not run.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import re
import secrets
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from benchsmith.stores.errors import InputError

LOOPBACK = "127.0.0.1"
STATIC_NAME = re.compile(r"^[a-z][a-z0-9-]*\.(html|js|css|png)$")
CONTENT_TYPES = {
    "html": "text/html; charset=utf-8",
    "js": "text/javascript; charset=utf-8",
    "css": "text/css; charset=utf-8",
    "png": "image/png",
}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
TOKEN_HEADER = "X-Access-Token"
MAX_BODY = 1 << 20


class PageApp(Protocol):
    page: str  # the page served at / (framed_page)

    def answer(self, method: str, route: str, query: dict[str, str], body: dict[str, Any] | None) -> Any:
        """The JSON answer of ``/api/<route>``: LookupError is a 404, ValueError a 400."""
        ...


@dataclass(frozen=True)
class Address:
    host: str
    port: int
    token: str | None  # required on the API when the host is not loopback

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}/" + (f"?token={self.token}" if self.token else "")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_host(host: str, port: int) -> None:
    if not 0 <= port <= 65535:
        raise InputError(f"--port {port}: use 0 (any free port) to 65535")
    if not host:
        raise InputError("--host: give an address to listen on, e.g. 127.0.0.1")


def static_file(name: str) -> bytes:
    if not STATIC_NAME.match(name):
        raise LookupError(name)
    path = resources.files("benchsmith.pages") / "static" / name
    if not path.is_file():
        raise LookupError(name)
    return path.read_bytes()


def framed_page(page: str) -> bytes:
    """The page ``page`` (label, review): the frame every page shares (static/frame.html: the
    stylesheet, common.js, a header with the progress line) around the page's own main part
    (static/<page>.html) and script (static/<page>.js)."""
    frame = static_file("frame.html").decode("utf-8")
    main = static_file(f"{page}.html").decode("utf-8")
    return frame.replace("{{page}}", page).replace("{{main}}", main).encode("utf-8")


class Listener:
    """The page's socket, bound before a run starts, so a port in use stops the command (exit 2)
    before any run record is made."""

    def __init__(self, host: str = LOOPBACK, port: int = 0):
        check_host(host, port)
        self.host = host
        self.token = None if is_loopback(host) else secrets.token_urlsafe(24)
        try:
            self.server = ThreadingHTTPServer((host, port), BaseHTTPRequestHandler)
        except OSError as error:
            raise InputError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
        self.server.daemon_threads = True

    @property
    def address(self) -> Address:
        return Address(self.host, self.server.server_port, self.token)

    def close(self) -> None:
        self.server.server_close()


def serve(
    app: PageApp,
    host: str = LOOPBACK,
    port: int = 0,
    on_ready: Callable[[Address], None] | None = None,
    stop: threading.Event | None = None,
    listener: Listener | None = None,
) -> None:
    """Serve ``app`` on ``listener`` (or a new one on ``host``:``port``) until ``stop`` is set,
    Ctrl-C or SIGTERM; ``on_ready`` gets the address (the port chosen, the token) once requests
    are accepted. The listener is closed at the end."""
    listener = listener or Listener(host, port)
    server = listener.server
    loopback_hosts = {f"{name}:{server.server_port}" for name in ("127.0.0.1", "localhost", "[::1]")}
    server.RequestHandlerClass = _handler(app, listener.token, loopback_hosts)
    stop = stop or threading.Event()
    worker = threading.Thread(target=server.serve_forever, name="benchsmith-page", daemon=True)
    worker.start()
    restore = None
    if threading.current_thread() is threading.main_thread():
        restore = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        if on_ready is not None:
            on_ready(listener.address)
        with contextlib.suppress(KeyboardInterrupt):
            while not stop.wait(0.2):
                pass
    finally:
        if restore is not None:
            signal.signal(signal.SIGTERM, restore)
        server.shutdown()
        listener.close()


def _handler(app: PageApp, token: str | None, loopback_hosts: set[str]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "benchsmith"
        sys_version = ""

        def log_message(self, format: str, *args: Any) -> None:  # the console is the user's, not a log
            return

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def _route(self, method: str) -> None:
            url = urlsplit(self.path)
            if token is None and self.headers.get("Host", "") not in loopback_hosts:
                return self._send(421, b"unknown host", "text/plain; charset=utf-8")
            if url.path.startswith("/api/"):
                return self._api(method, url.path.removeprefix("/api/"), url.query)
            if method != "GET":
                return self._send(405, b"method not allowed", "text/plain; charset=utf-8")
            name = f"{app.page}.html" if url.path == "/" else url.path.removeprefix("/static/")
            try:
                content = framed_page(app.page) if url.path == "/" else static_file(name)
            except LookupError:
                return self._send(404, b"not found", "text/plain; charset=utf-8")
            self._send(200, content, CONTENT_TYPES[name.rpartition(".")[2]])

        def _api(self, method: str, route: str, raw_query: str) -> None:
            if token is not None and not secrets.compare_digest(self.headers.get(TOKEN_HEADER, ""), token):
                return self._json(403, {"error": "the access token printed at start is missing or wrong"})
            query = {key: values[-1] for key, values in parse_qs(raw_query).items()}
            body = None
            if method == "POST":
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY:
                    return self._json(413, {"error": "request too large"})
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    return self._json(400, {"error": "the body is not JSON"})
                if not isinstance(body, dict):
                    return self._json(400, {"error": "the body must be a JSON object"})
            try:
                answer = app.answer(method, route, query, body)
            except LookupError:
                return self._json(404, {"error": f"nothing at {route}"})
            except (ValueError, TypeError) as error:
                return self._json(400, {"error": str(error)})
            self._json(200, answer)

        def _json(self, status: int, value: Any) -> None:
            self._send(status, json.dumps(value, ensure_ascii=False).encode("utf-8"), "application/json")

        def _send(self, status: int, content: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(content)))
            for name, value in SECURITY_HEADERS.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(content)

    return Handler
