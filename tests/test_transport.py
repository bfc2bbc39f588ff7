"""The seam's HTTP transport (agents/seam/transport.py): kept-alive connections, connections the server
dropped, and the openai SDK's exceptions for every failure, against loopback servers."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import openai
import pytest

from benchsmith.agents.seam.models import retry_after_seconds
from benchsmith.agents.seam.transport import JsonClient, SdkClient, json_client
from tests.openai_server import FakeOpenAIServer

BODY = {"model": "m", "messages": [{"role": "user", "content": "hello"}], "stream": False}
KEY = "sk-transport-test-key-5b1e"


def reply(request: dict) -> dict:
    return {"answer": request["messages"][0]["content"]}


def test_one_connection_is_kept_alive_and_reused():
    with FakeOpenAIServer(replier=reply, keep_alive=True) as server:
        client = JsonClient(server.base_url, KEY, timeout_s=5)
        first = client.post("/chat/completions", BODY)
        connection = client._idle[0]
        for _ in range(3):
            client.post("/chat/completions", BODY)
        assert client._idle == [connection]  # the same socket every time
        assert first["choices"][0]["message"]["content"] == '{"answer": "hello"}'
        assert len(server.requests) == 4 and server.authorizations[0] == f"Bearer {KEY}"
        client.close()


def test_a_server_that_closes_each_connection_gets_a_new_one_each_time():
    with FakeOpenAIServer(replier=reply) as server:  # HTTP/1.0: the server closes after each reply
        client = JsonClient(server.base_url, KEY, timeout_s=5)
        for _ in range(3):
            client.post("/chat/completions", BODY)
        assert client._idle == [] and len(server.requests) == 3


@contextmanager
def one_reply_per_connection(body: bytes = b'{"ok": true}') -> Iterator[tuple[str, threading.Event]]:
    """A raw HTTP/1.1 server that answers one request per connection with keep-alive headers,
    then closes the connection anyway (as a server does when its idle timeout passes); the event
    is set once it has closed one."""
    listener = socket.create_server(("127.0.0.1", 0))
    connections = []
    closed = threading.Event()

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            connections.append(connection)
            request = b""
            while b"\r\n\r\n" not in request:
                request += connection.recv(65536)
            head, _, rest = request.partition(b"\r\n\r\n")
            length = int(
                next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
            )
            while len(rest) < length:
                rest += connection.recv(65536)
            connection.sendall(
                f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nConnection: keep-alive\r\n\r\n".encode()
                + body
            )
            connection.close()
            closed.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", closed
    finally:
        listener.close()


def test_a_kept_alive_connection_the_server_dropped_is_replaced_not_failed():
    with one_reply_per_connection() as (base_url, closed):
        client = JsonClient(base_url, KEY, timeout_s=5)
        assert client.post("/chat/completions", BODY) == {"ok": True}
        assert len(client._idle) == 1  # the server said keep-alive, then hung up
        assert closed.wait(5)
        assert client.post("/chat/completions", BODY) == {"ok": True}


def test_a_kept_alive_connection_closed_as_it_is_taken_gets_the_request_on_a_fresh_one(monkeypatch):
    """The server's FIN has not arrived when the idle connection is checked (the race a client
    meets under load): the request fails on it with a reset, and goes once more on a new one."""
    import benchsmith.agents.seam.transport as transport

    monkeypatch.setattr(transport, "_dropped", lambda connection: False)
    with one_reply_per_connection() as (base_url, closed):
        client = JsonClient(base_url, KEY, timeout_s=5)
        assert client.post("/chat/completions", BODY) == {"ok": True}
        assert closed.wait(5)
        assert client.post("/chat/completions", BODY) == {"ok": True}


@contextmanager
def raw_replies(reply: bytes, *, close: bool = False) -> Iterator[str]:
    """A server that answers every request with ``reply``, written as it is, and then closes the
    connection when told to: the base URL."""
    listener = socket.create_server(("127.0.0.1", 0))

    def answer(connection: socket.socket) -> None:
        with connection:
            buffered = b""
            while True:
                while b"\r\n\r\n" not in buffered:
                    if not (received := connection.recv(65536)):
                        return
                    buffered += received
                head, _, buffered = buffered.partition(b"\r\n\r\n")
                length = int(
                    next(
                        line.split(b":")[1]
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    )
                )
                while len(buffered) < length:
                    buffered += connection.recv(65536)
                buffered = buffered[length:]
                connection.sendall(reply)
                if close:
                    return

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=answer, args=(connection,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        listener.close()


OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"


@pytest.mark.parametrize(
    "reply, kept",
    [
        (
            OK_HEAD
            + b'Transfer-Encoding: chunked\r\n\r\n5;ext=1\r\n{"ok"\r\n6\r\n: true\r\n1\r\n}\r\n0\r\nX-Trailer: 1\r\n\r\n',
            True,
        ),
        (b"HTTP/1.1 100 Continue\r\n\r\n" + OK_HEAD + b'Content-Length: 12\r\n\r\n{"ok": true}', True),
        (OK_HEAD + b'Content-Length: 12\r\nConnection: close\r\n\r\n{"ok": true}', False),
        (b'HTTP/1.0 200 OK\r\nContent-Length: 12\r\n\r\n{"ok": true}', False),
        (b'HTTP/1.0 200 OK\r\nContent-Length: 12\r\nConnection: Keep-Alive\r\n\r\n{"ok": true}', True),
        (OK_HEAD + b'\r\n{"ok": true}', False),  # no length: the body runs to the connection's end
    ],
    ids=["chunked", "interim reply first", "close", "HTTP/1.0", "HTTP/1.0 keep-alive", "no length"],
)
def test_replies_are_read_by_their_framing_and_the_connection_kept_only_when_it_may_be(reply, kept):
    with raw_replies(reply, close=not kept) as base_url:
        client = JsonClient(base_url, KEY, timeout_s=5)
        assert client.post("/chat/completions", BODY) == {"ok": True}
        assert len(client._idle) == int(kept)
        assert client.post("/chat/completions", BODY) == {"ok": True}  # on the same connection when it was kept


@pytest.mark.parametrize(
    "reply",
    [
        OK_HEAD + b'Content-Length: 40\r\n\r\n{"ok": true}',  # cut off mid-body
        b"SMTP ready\r\n\r\n",  # not HTTP
        OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n",  # a chunk size that is no number
        OK_HEAD + b'Content-Length: twelve\r\n\r\n{"ok": true}',
    ],
    ids=["cut off", "not HTTP", "bad chunk", "bad length"],
)
def test_a_reply_that_is_cut_off_or_not_http_is_a_connection_error(reply):
    with raw_replies(reply, close=True) as base_url, pytest.raises(openai.APIConnectionError):
        JsonClient(base_url, KEY, timeout_s=5).post("/chat/completions", BODY)


def test_the_request_carries_the_host_path_key_and_json_body():
    with FakeOpenAIServer(replier=reply, keep_alive=True) as server:
        JsonClient(server.base_url + "/", KEY, timeout_s=5).post("/chat/completions", BODY)
        assert server.requests == [BODY] and server.authorizations == [f"Bearer {KEY}"]


def test_a_connection_idle_for_a_while_is_checked_before_it_is_reused(monkeypatch):
    import benchsmith.agents.seam.transport as transport

    checked = []
    monkeypatch.setattr(transport, "_dropped", lambda connection: checked.append(connection) or False)
    with FakeOpenAIServer(replier=reply, keep_alive=True) as server:
        client = JsonClient(server.base_url, KEY, timeout_s=5)
        for _ in range(3):
            client.post("/chat/completions", BODY)
        assert checked == []  # just used: taken unchecked
        monkeypatch.setattr(transport, "FRESH_S", 0.0)
        client.post("/chat/completions", BODY)
        assert checked == client._idle


def test_a_reply_that_is_not_json_is_a_value_error():
    with one_reply_per_connection(body=b"<html>gateway</html>") as (base_url, _), pytest.raises(ValueError):
        JsonClient(base_url, KEY, timeout_s=5).post("/chat/completions", BODY)


@pytest.mark.parametrize(
    "fault, error_class, status",
    [
        ("429", openai.RateLimitError, 429),
        ("401", openai.AuthenticationError, 401),
        ("500", openai.InternalServerError, 500),
        ("503", openai.InternalServerError, 503),
        ("400", openai.BadRequestError, 400),
    ],
)
def test_error_statuses_are_the_sdks_exceptions(fault, error_class, status):
    with FakeOpenAIServer(replier=reply) as server:
        server.inject(fault)
        with pytest.raises(error_class) as raised:
            JsonClient(server.base_url, KEY, timeout_s=5).post("/chat/completions", BODY)
    error = raised.value
    assert error.status_code == status and isinstance(error.body, dict) and error.body["message"]
    assert str(error).startswith(f"Error code: {status} - ")
    if fault == "429":
        assert retry_after_seconds(error) == 1.0 and error.code == "rate_limit_exceeded"
    assert KEY not in repr(error.request.headers)  # the request the error carries holds no key


def test_a_slow_reply_times_out_and_a_closed_port_is_a_connection_error():
    with FakeOpenAIServer(replier=reply, latency_s=1.0) as server, pytest.raises(openai.APITimeoutError):
        JsonClient(server.base_url, KEY, timeout_s=0.2).post("/chat/completions", BODY)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(openai.APIConnectionError):
        JsonClient(f"http://127.0.0.1:{port}/v1", KEY, timeout_s=1).post("/chat/completions", BODY)


def test_parallel_posts_share_the_pool_without_mixing_replies():
    def echo(request: dict) -> dict:
        return {"echo": request["messages"][0]["content"]}

    with FakeOpenAIServer(replier=echo, keep_alive=True, latency_s=0.02) as server:
        client = JsonClient(server.base_url, KEY, timeout_s=5)
        results: dict[int, str] = {}

        def worker(number: int) -> None:
            for call in range(5):
                body = {**BODY, "messages": [{"role": "user", "content": f"{number}-{call}"}]}
                results[number * 10 + call] = client.post("/chat/completions", body)["choices"][0]["message"]["content"]

        threads = [threading.Thread(target=worker, args=(number,)) for number in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert results == {n * 10 + c: f'{{"echo": "{n}-{c}"}}' for n in range(8) for c in range(5)}
        assert 1 <= len(client._idle) <= 8


def test_a_proxy_in_the_environment_goes_through_the_sdks_client(monkeypatch):
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    assert isinstance(json_client("https://llm.example.com/v1", KEY, 5), JsonClient)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    assert isinstance(json_client("https://llm.example.com/v1", KEY, 5), SdkClient)
    monkeypatch.setenv("NO_PROXY", "llm.example.com")
    assert isinstance(json_client("https://llm.example.com/v1", KEY, 5), JsonClient)


def test_the_seam_retries_a_reply_that_is_not_json_then_names_it(monkeypatch):
    from benchsmith.agents.seam.backends import ModelSettings, OpenAIBackend
    from benchsmith.agents.seam.models import InvalidOutput, ModelSeam
    from tests.seam_fixtures import Judge, RecordingSleep

    with one_reply_per_connection(body=b"<html>502 from a gateway</html>") as (base_url, _):
        monkeypatch.setenv("OPENAI_BASE_URL", base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        settings = ModelSettings(max_attempts=2, backoff_initial_s=0.01, backoff_max_s=0.02)
        sleep = RecordingSleep()
        seam = ModelSeam(OpenAIBackend("m", settings), settings=settings, sleep=sleep)
        with pytest.raises(InvalidOutput, match="not JSON"):
            seam.run(Judge(), question="q")
        assert len(sleep.waits) == 1  # retried once
