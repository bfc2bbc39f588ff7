"""A local OpenAI-compatible chat-completions server for tests.

Tests and benchmarks point the real clients (the seam's openai SDK client,
``langchain_openai.ChatOpenAI``) at ``FakeOpenAIServer.base_url`` so the whole HTTP stack (request building,
retries, timeouts, response parsing) is exercised without network access or
API keys. Replies are scripted or computed by a ``replier`` callable, and
faults (rate limits, server errors, slow, malformed or truncated output) can
be injected deterministically or at a seeded random rate.

It can also behave like the servers users meet:

* vLLM and OpenAI (the default): every structured-output method works;
* older llama.cpp and Ollama builds: ``rejects=LEGACY_LLAMA_CPP`` answers 400 to
  ``response_format: json_schema`` and accepts ``tools``; ``rejects=PLAIN_COMPLETIONS``
  refuses every format parameter (JSON schema, tools, JSON mode);
* a chatty model: ``reply_style="fenced"`` wraps each JSON reply in ```json fences with a
  sentence before and after, as content even when a tool call was asked for;
* a server of some models: ``models={...}`` answers 404 to any other model name, as vLLM does;
* a server with a key: ``api_key=...`` answers 401 to any other key, echoing the key it was
  sent in the error text, as some proxies do;
* more faults to inject: ``429-ms`` (``retry-after-ms``), ``503``, ``401`` (key echoed) and
  ``400`` (a prompt longer than the context);
* an embedding server: ``POST /v1/embeddings`` answers each input with the vector
  ``HashingEmbedder(embedding_dimension)`` (tests/embedders.py) computes for it, as floats or
  base64, with ``usage.prompt_tokens``; the same faults apply (``malformed`` drops a vector,
  ``truncated`` cuts the JSON body).

Only the standard library is used for the server itself; it listens on
127.0.0.1 at a free port and runs in a daemon thread.
"""

from __future__ import annotations

import base64
import json
import random
import re
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


class RagReply:
    """A RAG assistant's reply: ``text`` as content and the ids of the passages it used in the
    message's ``passage_ids`` (the field `benchsmith replay` reads, tools/benchmark/assistants.py)."""

    def __init__(self, text: str, passage_ids: Sequence[str]):
        self.text, self.passage_ids = text, list(passage_ids)


Reply = dict | str | RagReply
Replier = Callable[[dict], Reply]

ALL_FAULTS: tuple[str, ...] = ("429", "500", "slow", "malformed", "truncated")
# Injectable too, but not drawn by default (seeded fault rates keep their draws).
EXTRA_FAULTS: tuple[str, ...] = ("429-ms", "503", "401", "400")
# The "400" fault: a prompt too long, in words that also name the tools (not a format problem).
CONTEXT_OVERFLOW_MESSAGE = (
    "This model's maximum context length is 4096 tokens. However, your messages resulted in "
    "5210 tokens (including 96 in the functions). Please reduce the length of the messages."
)
RETRY_AFTER_MS = 250

# Format parameters a server may refuse, keyed as ``rejects`` names them.
JSON_SCHEMA, TOOLS, JSON_OBJECT = "json_schema", "tools", "json_object"
# What an older llama.cpp server answers to a JSON-schema response format (HTTP 400).
LEGACY_LLAMA_CPP = frozenset({JSON_SCHEMA})
# A bare completions server: no response_format of any type, no tools.
PLAIN_COMPLETIONS = frozenset({JSON_SCHEMA, TOOLS, JSON_OBJECT})
REJECTION_MESSAGES = {
    JSON_SCHEMA: 'response_format type must be one of "text" or "json_object", but got: json_schema',
    TOOLS: "tools param requires --jinja flag",
    JSON_OBJECT: "response_format is not supported by this server",
}
REPLY_STYLES = ("json", "fenced")

CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
EMBEDDINGS_PATHS = frozenset({"/v1/embeddings", "/embeddings"})
MODELS_PATHS = frozenset({"/v1/models", "/models"})

# Faults answered without consulting the script or replier; "slow" is the
# only fault that still sends a real reply (late).
_IMMEDIATE_FAULTS = frozenset({"429", "500", "malformed", "truncated", "429-ms", "503", "401", "400"})

MALFORMED_TEXT = "Sure! {answer: maybe"
# Source of the half-cut JSON sent by the "truncated" fault.
TRUNCATION_SOURCE = {"rationale": "The output stops mid-object here", "score": 3}

# serve_forever() only notices shutdown() once per poll interval; keep it short
# so stopping a server (once per test) does not add half a second.
_POLL_INTERVAL_S = 0.05


class _ReplyError(Exception):
    """An HTTP error the handler should send instead of a completion."""

    def __init__(self, status: int, message: str, error_type: str, code: str):
        super().__init__(message)
        self.status = status
        self.body = _error_body(message, error_type, code)


class FakeOpenAIServer:
    """OpenAI-compatible ``/v1/chat/completions`` server with scriptable faults.

    Reply resolution for a request without a fault: the oldest ``script``-ed
    reply, else ``replier(request_body)``, else HTTP 500. A ``dict`` reply is
    a structured object, sent as a tool call when the request has ``tools``
    and as JSON content otherwise; a ``str`` reply is sent as content verbatim.
    """

    def __init__(
        self,
        replier: Replier | None = None,
        latency_s: float = 0.0,
        *,
        rejects: frozenset[str] | set[str] = frozenset(),
        rejection_status: int = 400,
        reply_style: str = "json",
        api_key: str | None = None,
        models: set[str] | None = None,
        embedding_dimension: int = 64,
        keep_alive: bool = False,
        rejection_messages: dict[str, str] | None = None,
    ):
        unknown = set(rejects) - set(REJECTION_MESSAGES)
        if unknown or reply_style not in REPLY_STYLES:
            raise ValueError(f"unknown rejects {sorted(unknown)} or reply style {reply_style!r}")
        self.replier = replier
        self.latency_s = latency_s
        self.rejects = frozenset(rejects)
        self.rejection_status = rejection_status
        # The words of each refusal (default REJECTION_MESSAGES): servers word them in many ways.
        self.rejection_messages = {**REJECTION_MESSAGES, **(rejection_messages or {})}
        self.reply_style = reply_style
        self.api_key = api_key
        self.models = models  # served model names (None: any); another one gets a 404 like vLLM's
        self.embedding_dimension = embedding_dimension
        # HTTP/1.1 connections that stay open, as real model servers keep them (benchmarks); tests keep
        # one connection per request, so no handler thread outlives stop().
        self.keep_alive = keep_alive
        self.embedded_texts = 0  # inputs answered by /v1/embeddings
        self.requests: list[dict] = []
        # Per request, in arrival order: when it arrived (time.monotonic()) and its Authorization header.
        self.arrivals: list[float] = []
        self.authorizations: list[str] = []
        # (time.monotonic() when sent, status) of every chat response.
        self.responses: list[tuple[float, int]] = []
        self.faults_served = 0
        self._lock = threading.Lock()
        self._scripted: deque[Reply] = deque()
        self._injected: deque[str] = deque()
        self._fault_rate = 0.0
        self._fault_kinds: Sequence[str] = ALL_FAULTS
        self._rng = random.Random(0)
        self._slow_s = 2.0
        self._httpd: _LoopbackHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, the value for ``ChatOpenAI(base_url=...)``."""
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> FakeOpenAIServer:
        """Bind a free loopback port and serve from a daemon thread."""
        if self._httpd is not None:
            raise RuntimeError("FakeOpenAIServer is already started")
        self._httpd = _LoopbackHTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": _POLL_INTERVAL_S},
            name="fake-openai-server",
            daemon=True,
        )
        self._thread.start()
        # A new server may get the port of one a previous test latched: nothing is known of it.
        from benchsmith.agents.seam.endpoints import forget_endpoints

        forget_endpoints(self.base_url)
        return self

    def stop(self) -> None:
        """Stop accepting requests, close the socket and join the thread."""
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()
        self._httpd = None
        self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def script(self, *replies: Reply) -> None:
        """Queue replies that are served FIFO before the replier is asked."""
        with self._lock:
            self._scripted.extend(replies)

    def inject(self, *faults: str) -> None:
        """Queue faults; each following request consumes one before anything else."""
        _check_fault_kinds(faults)
        with self._lock:
            self._injected.extend(faults)

    def set_fault_rate(
        self,
        rate: float,
        seed: int = 0,
        kinds: Sequence[str] = ALL_FAULTS,
        slow_s: float = 2.0,
    ) -> None:
        """Give each request an independent fault with probability ``rate``.

        The kind is drawn from ``kinds`` with a ``random.Random(seed)``, so a
        sequential run is reproducible. ``slow_s`` is how long a "slow" fault
        sleeps, for injected "slow" faults too.
        """
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"fault rate must be within [0, 1], got {rate}")
        if not kinds:
            raise ValueError("kinds must name at least one fault")
        _check_fault_kinds(kinds)
        with self._lock:
            self._fault_rate = rate
            self._fault_kinds = tuple(kinds)
            self._rng = random.Random(seed)
            self._slow_s = slow_s

    def _record(self, body: dict, authorization: str) -> None:
        with self._lock:
            self.requests.append(body)
            self.arrivals.append(time.monotonic())
            self.authorizations.append(authorization)

    def _record_response(self, status: int) -> None:
        with self._lock:
            self.responses.append((time.monotonic(), status))

    def first_response_at(self, status: int) -> float | None:
        """When (``time.monotonic()``) the first response with ``status`` was sent, if any was."""
        with self._lock:
            return next((sent for sent, code in self.responses if code == status), None)

    def _models_seen(self) -> list[str]:
        """Distinct model names requested so far, in order of first use."""
        with self._lock:
            return list(dict.fromkeys(body.get("model", "") for body in self.requests))

    def _next_fault(self) -> str | None:
        """Injected faults first, then a seeded random draw, else ``None``."""
        with self._lock:
            if self._injected:
                fault = self._injected.popleft()
            elif self._fault_rate > 0 and self._rng.random() < self._fault_rate:
                fault = self._rng.choice(self._fault_kinds)
            else:
                return None
            self.faults_served += 1
            return fault

    def _reply_for(self, body: dict, consume: bool = True) -> Reply:
        """Resolve the reply for ``body``: scripted, then replier, else 500.

        With ``consume=False`` a scripted reply is only peeked at, so a fault
        that still answers (a slow one) leaves it for the next request.
        """
        with self._lock:
            if self._scripted:
                return self._scripted.popleft() if consume else self._scripted[0]
        if self.replier is None:
            raise _ReplyError(
                500,
                "FakeOpenAIServer: no reply was scripted and no replier is set",
                "server_error",
                "no_reply_scripted",
            )
        try:
            return self.replier(body)
        except Exception as exc:  # surface replier bugs to the client, not stderr
            raise _ReplyError(500, f"replier raised {exc!r}", "server_error", "replier_error") from exc

    def _respond(self, body: dict, authorization: str = "") -> tuple[int, dict, dict[str, str]]:
        """Status, JSON payload and extra headers for one chat request."""
        time.sleep(self.latency_s)
        if body.get("stream"):
            raise _ReplyError(
                400,
                "FakeOpenAIServer does not support stream=true",
                "invalid_request_error",
                "stream_unsupported",
            )
        self._check_key_and_model(body, authorization)
        rejected = next((name for name in _format_parameters(body) if name in self.rejects), None)
        if rejected is not None:
            raise _ReplyError(
                self.rejection_status,
                self.rejection_messages[rejected],
                "invalid_request_error",
                "unsupported_parameter",
            )
        fault = self._next_fault()
        if fault == "401":
            raise _invalid_key(_sent_key(authorization))
        if fault in _IMMEDIATE_FAULTS:
            return _fault_response(body, fault)
        if fault == "slow":
            time.sleep(self._slow_s)
        reply = self._reply_for(body, consume=fault is None)
        return 200, _render_reply(body, reply, self.reply_style), {}

    def _respond_embeddings(self, body: dict, authorization: str = "") -> tuple[int, dict | str, dict[str, str]]:
        """Status, JSON payload (a ``str`` for a cut body) and extra headers for one embeddings request."""
        time.sleep(self.latency_s)
        self._check_key_and_model(body, authorization)
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not texts or not all(isinstance(text, str) and text for text in texts):
            raise _ReplyError(
                400,
                "input must be a non-empty string or a list of non-empty strings",
                "invalid_request_error",
                "invalid_input",
            )
        fault = self._next_fault()
        if fault == "401":
            raise _invalid_key(_sent_key(authorization))
        if fault in _IMMEDIATE_FAULTS - {"malformed", "truncated"}:
            return _fault_response(body, fault)
        if fault == "slow":
            time.sleep(self._slow_s)
        from tests.embedders import HashingEmbedder

        vectors = HashingEmbedder(self.embedding_dimension).encode(texts)
        with self._lock:
            self.embedded_texts += len(texts)
        payload = _embeddings(body, vectors, texts)
        if fault == "malformed":  # a vector short
            payload["data"] = payload["data"][:-1]
        if fault == "truncated":
            return 200, json.dumps(payload)[:40], {}
        return 200, payload, {}

    def _check_key_and_model(self, body: dict, authorization: str) -> None:
        sent_key = _sent_key(authorization)
        if self.api_key is not None and sent_key != self.api_key:
            raise _invalid_key(sent_key)
        if self.models is not None and body.get("model") not in self.models:
            raise _ReplyError(
                404, f"The model `{body.get('model')}` does not exist.", "NotFoundError", "model_not_found"
            )

    @property
    def embedding_requests(self) -> list[dict]:
        """The bodies of the embeddings requests received, in order."""
        with self._lock:
            return [body for body in self.requests if "input" in body]


class _LoopbackHTTPServer(ThreadingHTTPServer):
    """Threaded HTTP server on 127.0.0.1 at a free port, tied to its fake."""

    daemon_threads = True
    # The default listen backlog of 5 drops SYNs under a burst of concurrent
    # clients, which then stall for a 1 s SYN retransmit and look like timeouts.
    request_queue_size = 128

    def __init__(self, fake: FakeOpenAIServer):
        super().__init__(("127.0.0.1", 0), _KeepAliveHandler if fake.keep_alive else _Handler)
        self.fake = fake

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Ignore clients that hang up (timeouts); report anything else."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    """Routes the OpenAI endpoints to the owning ``FakeOpenAIServer``.

    It keeps the default HTTP/1.0 protocol: every request gets its own
    connection, so no keep-alive handler thread outlives ``stop()``.
    """

    server: _LoopbackHTTPServer
    # Headers and body go out in two writes: with Nagle's algorithm the body waits for the client's
    # delayed ACK of the headers (40 ms on Linux), as no real model server lets it.
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        if self._route() in MODELS_PATHS:
            models = [_model_entry(name) for name in self.server.fake._models_seen()]
            self._send_json(200, {"object": "list", "data": models})
        else:
            self._send_not_found()

    def do_POST(self) -> None:
        route = self._route()
        if route not in CHAT_PATHS | EMBEDDINGS_PATHS:
            self._send_not_found()
            return
        fake = self.server.fake
        respond = fake._respond if route in CHAT_PATHS else fake._respond_embeddings
        authorization = self.headers.get("Authorization") or ""
        try:
            body = self._read_json()
            fake._record(body, authorization)
            status, payload, headers = respond(body, authorization)
        except _ReplyError as error:
            status, payload, headers = error.status, error.body, {}
        fake._record_response(status)
        self._send_json(status, payload, headers)

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request access log that would flood test output."""

    def _route(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    def _read_json(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise _ReplyError(400, f"request body is not JSON: {exc}", "invalid_request_error", "invalid_json") from exc
        if not isinstance(body, dict):
            raise _ReplyError(400, "request body must be a JSON object", "invalid_request_error", "invalid_json")
        return body

    def _send_not_found(self) -> None:
        error = _error_body(
            f"FakeOpenAIServer has no route {self.command} {self.path}",
            "invalid_request_error",
            "unknown_url",
        )
        self._send_json(404, error)

    def _send_json(self, status: int, payload: dict | str, headers: dict[str, str] | None = None) -> None:
        """Write a JSON response (a ``str`` is sent as it is); a client that already gave up is not an error."""
        data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class _KeepAliveHandler(_Handler):
    protocol_version = "HTTP/1.1"


def _fault_response(body: dict, fault: str) -> tuple[int, dict, dict[str, str]]:
    """Status, payload and headers of a fault that answers without a reply."""
    if fault == "429":
        error = _error_body("Rate limit reached (injected fault)", "rate_limit_error", "rate_limit_exceeded")
        return 429, error, {"Retry-After": "1"}
    if fault == "429-ms":  # OpenAI's millisecond header; the seconds one says longer and must lose
        error = _error_body("Rate limit reached (injected fault)", "rate_limit_error", "rate_limit_exceeded")
        return 429, error, {"retry-after-ms": str(RETRY_AFTER_MS), "Retry-After": "5"}
    if fault == "400":
        return 400, _error_body(CONTEXT_OVERFLOW_MESSAGE, "invalid_request_error", "context_length_exceeded"), {}
    if fault == "503":
        return 503, _error_body("The server is overloaded (injected fault)", "server_error", "overloaded"), {}
    if fault == "500":
        error = _error_body("The server had an error (injected fault)", "server_error", "server_error")
        return 500, error, {}
    if fault == "malformed":
        return 200, _completion(body, MALFORMED_TEXT, _wants_tool_call(body)), {}
    text = json.dumps(TRUNCATION_SOURCE)
    cut_in_half = text[: len(text) // 2]
    return 200, _completion(body, cut_in_half, _wants_tool_call(body), "length"), {}


def _check_fault_kinds(kinds: Sequence[str]) -> None:
    unknown = [kind for kind in kinds if kind not in ALL_FAULTS + EXTRA_FAULTS]
    if unknown:
        raise ValueError(f"unknown fault kinds {unknown}; expected some of {ALL_FAULTS + EXTRA_FAULTS}")


def _sent_key(authorization: str) -> str:
    return authorization.removeprefix("Bearer ").strip()


def _embeddings(body: dict, vectors: Any, texts: list[str]) -> dict:
    """A ``/v1/embeddings`` reply: floats, or little-endian float32 base64 when the request asks for it."""
    as_base64 = body.get("encoding_format") == "base64"
    data = [
        {
            "object": "embedding",
            "index": index,
            "embedding": base64.b64encode(vector.astype("<f4").tobytes()).decode()
            if as_base64
            else [float(value) for value in vector],
        }
        for index, vector in enumerate(vectors)
    ]
    tokens = sum(max(1, len(text) // 4) for text in texts)
    return {
        "object": "list",
        "data": data,
        "model": body.get("model", ""),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def _invalid_key(sent_key: str) -> _ReplyError:
    """A 401 whose text echoes the key it was sent, as some proxies' do."""
    return _ReplyError(
        401,
        f"Incorrect API key provided: {sent_key}. You can find your API key in your account.",
        "invalid_request_error",
        "invalid_api_key",
    )


def _format_parameters(body: dict) -> list[str]:
    """The structured-output parameters a request uses, named as ``rejects`` names them."""
    used = []
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") in (JSON_SCHEMA, JSON_OBJECT):
        used.append(response_format["type"])
    if body.get("tools"):
        used.append(TOOLS)
    return used


def _error_body(message: str, error_type: str, code: str) -> dict:
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


def _model_entry(name: str) -> dict:
    return {"id": name, "object": "model", "created": 0, "owned_by": "fake-openai-server"}


def _wants_tool_call(body: dict) -> bool:
    """A request with ``tools`` (function-calling structured output) wants a tool call."""
    return bool(body.get("tools"))


def _requested_tool_name(body: dict) -> str:
    """The forced ``tool_choice`` function if any, else the first tool offered."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and "function" in choice:
        return choice["function"]["name"]
    return body["tools"][0]["function"]["name"]


def _render_reply(body: dict, reply: Reply, style: str = "json") -> dict:
    """A dict reply is structured output; a str reply is plain content. The "fenced" style sends
    a dict as chatty content even when a tool call was asked for. A :class:`RagReply` is content
    with the ids of its passages in the message's ``passage_ids``."""
    if isinstance(reply, RagReply):
        completion = _completion(body, reply.text, as_tool_call=False)
        completion["choices"][0]["message"]["passage_ids"] = reply.passage_ids
        return completion
    if isinstance(reply, dict) and style == "fenced":
        return _completion(body, fenced(reply), as_tool_call=False)
    if isinstance(reply, dict):
        return _completion(body, json.dumps(reply), _wants_tool_call(body))
    return _completion(body, reply, as_tool_call=False)


def fenced(reply: dict) -> str:
    """``reply`` as a chatty model writes it: a sentence, a ```json block, another sentence."""
    return (
        f"Sure! Here is the JSON object you asked for:\n\n```json\n{json.dumps(reply, indent=2)}\n```\n\n"
        "Let me know if you need anything else."
    )


def _completion(body: dict, text: str, as_tool_call: bool, finish_reason: str | None = None) -> dict:
    """A full ``chat.completion`` object carrying ``text`` as content or tool arguments."""
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if as_tool_call:
        message["content"] = None
        message["tool_calls"] = [
            {
                "id": f"call_{uuid.uuid4().hex[:24]}",
                "type": "function",
                "function": {"name": _requested_tool_name(body), "arguments": text},
            }
        ]
    default_finish = "tool_calls" if as_tool_call else "stop"
    prompt_tokens = max(1, _prompt_chars(body) // 4)
    completion_tokens = max(1, len(text) // 4)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason or default_finish,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _prompt_chars(body: dict) -> int:
    """Total characters of all message contents (text parts of list contents)."""
    total = 0
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            total += len(content)
        elif isinstance(content, list):
            total += sum(len(part.get("text", "")) for part in content if isinstance(part, dict))
    return total


def requested_schema_name(request: dict) -> str:
    """The name of the object a request asks for, however it asks: a JSON-schema response
    format, a forced tool, or (JSON mode, plain prompting) the schema written into the prompt."""
    response_format = request.get("response_format") or {}
    if response_format.get("type") == JSON_SCHEMA:
        return response_format["json_schema"]["name"]
    if request.get("tools"):
        return _requested_tool_name(request)
    for message in request.get("messages", []):
        if message["role"] == "system" and (match := _SCHEMA_NAME.search(message.get("content") or "")):
            return match.group(1)
    raise ValueError("the request names no schema")


def conversation_messages(request: dict) -> list[dict[str, str]]:
    """A request's messages as ``{"role", "content"}``, without a trailing corrective turn (the bad
    reply and the request to fix it), so a scripted model answers the original request again."""
    from benchsmith.agents.seam.structured_output import CORRECTION_PREFIX

    messages = [{"role": m["role"], "content": m.get("content") or ""} for m in request["messages"]]
    if (
        len(messages) >= 2
        and messages[-2]["role"] == "assistant"
        and messages[-1]["content"].startswith(CORRECTION_PREFIX)
    ):
        return messages[:-2]
    return messages


_SCHEMA_NAME = re.compile(r"JSON schema \(named (\w+)\)")


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    """A started ``FakeOpenAIServer`` for one test, stopped afterwards."""
    with FakeOpenAIServer() as server:
        yield server
