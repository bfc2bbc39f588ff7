"""The chat-model seam: every model call of every graph goes through :class:`ModelSeam`.

A model is chosen by a spec string:

* ``openai:<model>``: any OpenAI-compatible server through the openai SDK's client
  (``OPENAI_BASE_URL`` for vLLM, Ollama, llama.cpp...; the key from ``OPENAI_API_KEY``, optional
  for a server on this machine or a private network);
* ``baseline``: the offline deterministic agents (each agent's ``baseline`` method);
* a :class:`ScriptedBackend` object: tests feed pydantic objects (or exceptions) in order.

The seam validates structured output with the agent's pydantic schema, asking each endpoint
the way it understands (:mod:`~benchsmith.agents.structured_output`: JSON schema, then function
calling, then JSON mode or the prompt, remembered per endpoint); retries with backoff on 429
(honouring ``Retry-After`` and ``retry-after-ms``), 5xx, timeouts and connection errors, and
retries invalid or truncated output with the error fed back once; stops at once, for every
seam of the process, when an endpoint refuses for good (:mod:`~benchsmith.agents.endpoints`);
caches validated replies by (model, endpoint, messages, schema, sampling); and records tokens
and cost per call. The API key is never part of a cache key, a record, a log line or an error
(:func:`~benchsmith.agents.redaction.redact`).
"""

from __future__ import annotations

import functools
import html
import json
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from hashlib import sha256
from typing import Any, Generic, Protocol, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from benchsmith.agents.endpoints import (
    LOCAL_PLACEHOLDER_KEY,
    Endpoint,
    display_url,
    endpoint,
    endpoint_error,
    forget_endpoints,
    is_fatal,
    is_local_base_url,
    is_official,
    resolve_api_key,
    resolve_base_url,
    server_message,
)
from benchsmith.agents.pricing import PriceTable
from benchsmith.agents.redaction import redact, register_secret
from benchsmith.agents.retries import (
    MAX_RETRY_AFTER_S,
    RetryCounter,
    error_name,
    is_retryable,
    retry_after_seconds,
    retrying,
    transport_failure,
)
from benchsmith.agents.seam_errors import (
    InvalidOutput,
    MissingAPIKeyError,
    ModelEndpointError,
    ModelSeamError,
    ModelUnavailableError,
    StructuredOutputUnsupported,
)
from benchsmith.agents.structured_output import (
    STRUCTURED_OUTPUT_CHOICES,
    StructuredOutput,
    check_structured_output,
    corrective_turn,
    first_method,
    is_format_rejection,
    needs_schema_in_prompt,
    next_method,
    parse_completion,
    request_options,
    with_schema_instructions,
)
from benchsmith.agents.transport import json_client
from benchsmith.agents.defaults import BASELINE

__all__ = [
    "BASELINE", "MAX_RETRY_AFTER_S", "Agent", "Backend", "Completion", "Endpoint", "InvalidOutput", "Message",
    "MissingAPIKeyError", "ModelEndpointError", "ModelSeam", "ModelSeamError", "ModelSettings",
    "ModelUnavailableError", "NoBaselineError", "OpenAIBackend", "STRUCTURED_OUTPUT_CHOICES", "ScriptedBackend",
    "Section", "SeamStats", "StructuredOutput", "build_seam", "defused", "delimited", "endpoint", "estimate_tokens",
    "error_name", "forget_endpoints", "is_local_base_url", "is_official", "is_retryable", "listed", "numbered",
    "parse_model_spec", "redact", "resolve_base_url", "retry_after_seconds", "sections",
]

Out = TypeVar("Out", bound=BaseModel)
# The cache key's JSON, its encoder built once (json.dumps builds one at every call that passes options).
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}



class NoBaselineError(RuntimeError):
    """The agent has no offline baseline; it needs a real model."""


class ResponseCache(Protocol):
    def get(self, key: str) -> str | None: ...
    def put(self, key: str, model: str, response: str) -> None: ...


class UsageRecorder(Protocol):
    def record(self, call: dict[str, Any]) -> None: ...


class Agent(Generic[Out]):
    """A role: its prompt, its output schema and, where one exists, its offline baseline.

    Subclasses set ``name`` and ``schema`` and implement :meth:`messages`; the baseline is
    optional. Inputs are keyword arguments, the same for both.
    """

    name: str
    schema: type[Out]

    def messages(self, **inputs: Any) -> list[Message]:
        raise NotImplementedError

    def baseline(self, **inputs: Any) -> Out:
        raise NoBaselineError(f"the {self.name} agent has no offline baseline: pass a model spec such as openai:gpt-4o-mini")


class Section(str):
    """Prompt text made of :func:`delimited` sections: it nests in another section as it is (its
    tags are ours, and the untrusted text inside them is defused already)."""


# What opens a closing tag of any name, case or spacing: "</x>", "</ X >", "</x" then a newline.
CLOSING_TAG_OPENER = re.compile(r"<(?=\s*/)")


def defused(text: str) -> str:
    """Untrusted text that can close no prompt section: each ``<`` that opens a closing tag
    becomes ``&lt;`` (a model reads it as the same character); the rest is left as it was."""
    return CLOSING_TAG_OPENER.sub("&lt;", text)


def attribute(value: Any) -> str:
    """A value for a tag's attribute (a title is document text): one line, HTML-escaped, so no
    quote or bracket in it ends the attribute or the tag."""
    return html.escape(" ".join(str(value).split()), quote=True)


def delimited(tag: str, text: str, **attributes: Any) -> Section:
    """The one way untrusted text (documents, their titles, user questions, model replies) enters a
    prompt: inside a tagged section, its attribute values escaped and every closing tag in it
    defused (:func:`defused`), so nothing in it ends the section early. ``text`` that is already a
    :class:`Section` (sections nested in this one) goes in as it is."""
    attrs = "".join(f' {key}="{attribute(value)}"' for key, value in attributes.items())
    body = text if isinstance(text, Section) else defused(text)
    return Section(f"<{tag}{attrs}>\n{body}\n</{tag}>")


def sections(parts: Iterable[Section], separator: str = "\n") -> Section:
    """Delimited sections one after another, to nest in another section."""
    parts = list(parts)
    if not all(isinstance(part, Section) for part in parts):
        raise TypeError("sections() joins delimited() sections only: delimit untrusted text first")
    return Section(separator.join(parts))


def numbered(tag: str, texts: Iterable[str]) -> Section:
    """``texts`` as delimited sections numbered from 1, one a line: the items a model answers by number."""
    return sections(delimited(tag, text, number=number) for number, text in enumerate(texts, start=1))


def listed(texts: Iterable[str]) -> str:
    """Short texts (earlier questions, nuggets) as ``- text`` lines, for a delimited section."""
    return "\n".join(f"- {text}" for text in texts)


def estimate_tokens(text: str) -> int:
    """Rough token count for dry-run estimates: ~4 characters per token for English."""
    return max(1, len(text) // 4)


@dataclass(frozen=True)
class ModelSettings:
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int | None = None
    timeout_s: float = 60.0  # per request, reaches the HTTP client
    max_attempts: int = 6  # per call, counting the first
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 20.0
    requests_per_second: float | None = None  # shared by every seam on the same endpoint
    structured_output: StructuredOutput = "auto"  # auto: json_schema, then function calling, then JSON mode

    def __post_init__(self) -> None:
        check_structured_output(self.structured_output)
        if not self.timeout_s > 0:
            raise ValueError(f"the model timeout must be positive, got {self.timeout_s}")
        if self.max_attempts < 1:
            raise ValueError(f"max attempts must be at least 1, got {self.max_attempts}")
        if self.requests_per_second is not None and not self.requests_per_second > 0:
            raise ValueError(f"requests per second must be positive, got {self.requests_per_second}")

    def sampling(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens}


@dataclass
class Completion:
    parsed: BaseModel
    input_tokens: int = 0
    output_tokens: int = 0
    structured_output: str | None = None  # the method the endpoint answered (None: no server)


class Backend(Protocol):
    model: str

    def complete(self, messages: list[Message], schema: type[BaseModel]) -> Completion: ...


class OpenAIBackend:
    """Chat completions from an OpenAI-compatible server, asked for structured output the way the
    endpoint understands; the seam does the retrying.

    The request is plain JSON (the body langchain-openai's ``ChatOpenAI`` sent), posted by
    :mod:`~benchsmith.agents.transport` (kept-alive connections; the openai SDK's exceptions), and
    the reply a plain dict. Measured in benchmarks/synthesize.py at 64 conversations in flight:
    the client's CPU per model call was 9.5 ms through ``ChatOpenAI``, about 5 ms through the
    SDK's client, and about 3 ms this way.

    Endpoint state (the working method, the latch, the rate limiter) is shared with every other
    backend on the same base URL.
    """

    def __init__(self, model: str, settings: ModelSettings):
        self.model = model
        self.base_url = resolve_base_url()
        # The cache key's endpoint: None for OpenAI's own (as before), else the base URL, since two
        # servers may serve different weights under one model name.
        self.endpoint = None if is_official(self.base_url) else self.base_url
        self.settings = settings
        self.state.share_rate_limit(settings.requests_per_second)  # from now on, not from the first call
        api_key = resolve_api_key(self.base_url)
        if api_key != LOCAL_PLACEHOLDER_KEY:
            register_secret(api_key)
        self.transport = json_client(self.base_url, api_key, settings.timeout_s)
        self._sampling: dict[str, Any] = {
            **({"max_completion_tokens": settings.max_tokens} if settings.max_tokens is not None else {}),
            "seed": settings.seed, "temperature": settings.temperature}
        self._options: dict[tuple[str, type[BaseModel]], dict[str, Any]] = {}
        self._lock = threading.Lock()

    @property
    def state(self) -> Endpoint:
        """The endpoint's shared state, looked up each time: forgetting it takes effect at once."""
        return endpoint(self.base_url)

    @property
    def structured_output(self) -> str:
        """The method the next call uses."""
        return self._method(self.state)

    def _method(self, state: Endpoint) -> str:
        if self.settings.structured_output != "auto":
            return self.settings.structured_output
        return state.method(first_method("auto"))

    def _request_options(self, method: str, schema: type[BaseModel]) -> dict[str, Any]:
        """The format parameters of ``method`` for ``schema``, built once (the strict schema costs)."""
        with self._lock:
            if (method, schema) not in self._options:
                self._options[method, schema] = request_options(method, schema)
            return self._options[method, schema]

    def complete(self, messages: list[Message], schema: type[BaseModel]) -> Completion:
        while True:
            state = self.state
            state.raise_if_latched()
            state.wait_for_turn(self.settings.requests_per_second)
            state.raise_if_latched()  # latched while this call waited for its turn
            method = self._method(state)
            try:
                return self._complete(method, messages, schema)
            except StructuredOutputUnsupported as rejection:
                if self.settings.structured_output != "auto":
                    raise self._latch(self._unsupported(rejection)) from None
                # Never None: the last method (the prompt) sends no format parameter to reject.
                state.fall_back(method, next_method(method), rejection.server_message)  # type: ignore[arg-type]

    def _complete(self, method: str, messages: list[Message], schema: type[BaseModel]) -> Completion:
        request = with_schema_instructions(messages, schema) if needs_schema_in_prompt(method) else messages
        body = {"model": self.model, "stream": False, "messages": request, **self._sampling,
                **self._request_options(method, schema)}
        try:
            reply = self.transport.post("/chat/completions", body)
        except openai.APIStatusError as error:
            if is_format_rejection(error, method):
                raise StructuredOutputUnsupported(method, server_message(error), error.status_code) from None
            if is_fatal(error):
                raise self._latch(endpoint_error(error, self.base_url, self.model)) from None
            raise  # transient: the seam retries it
        except ValueError:  # the body is not JSON (openai's errors are no ValueErrors)
            raise InvalidOutput("the server's reply is not JSON") from None  # retried, not fed back
        parsed = parse_completion(reply, method, schema)
        usage = reply.get("usage") or {}
        return Completion(parsed, usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0, method)

    def _latch(self, error: ModelEndpointError) -> ModelEndpointError:
        latched = self.state.latch(error)
        return ModelEndpointError(str(latched), base_url=latched.base_url, status_code=latched.status_code)

    def _unsupported(self, rejection: StructuredOutputUnsupported) -> ModelEndpointError:
        return ModelEndpointError(
            f"{display_url(self.base_url)} rejected {rejection.method} structured output for model {self.model!r} "
            f"({rejection.server_message}): choose another structured output method, or auto, which finds one",
            base_url=self.base_url, status_code=rejection.status_code)


ScriptedReply = BaseModel | Exception | Callable[[list[Message], type[BaseModel]], BaseModel]


class ScriptedBackend:
    """The test seam: replies are pydantic objects (or exceptions to raise, or functions of
    the messages and schema) consumed in order; once they run out, ``replier`` (a function of
    the messages and schema) answers every call. Every call's messages are recorded."""

    def __init__(self, replies: Iterable[ScriptedReply] = (), model: str = "scripted",
                 replier: Callable[[list[Message], type[BaseModel]], BaseModel] | None = None):
        self.model = model
        self.replies = list(replies)
        self.replier = replier
        self.calls: list[tuple[list[Message], type[BaseModel]]] = []
        self._lock = threading.Lock()

    def complete(self, messages: list[Message], schema: type[BaseModel]) -> Completion:
        with self._lock:
            self.calls.append((messages, schema))
            if self.replies:
                reply: ScriptedReply = self.replies.pop(0)
            elif self.replier is not None:
                reply = self.replier
            else:
                raise AssertionError(f"scripted model has no reply left for {schema.__name__}")
        if isinstance(reply, Exception):
            raise reply
        parsed = reply(messages, schema) if callable(reply) and not isinstance(reply, BaseModel) else reply
        if not isinstance(parsed, schema):
            raise InvalidOutput(f"scripted reply {type(parsed).__name__} is not a {schema.__name__}")
        try:  # validated like a real reply: a model_construct()ed out-of-range verdict is invalid output
            parsed = schema.model_validate(parsed.model_dump())
        except ValidationError as error:
            raise InvalidOutput(f"scripted reply fails {schema.__name__}: {error}") from None
        text = "".join(message["content"] for message in messages)
        return Completion(parsed, estimate_tokens(text), estimate_tokens(parsed.model_dump_json()))


@dataclass
class SeamStats:
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    retried_errors: dict[str, int] = field(default_factory=dict)
    structured_output: str | None = None  # the method the endpoint answers to (None: no server)


class ModelSeam:
    """Structured calls with validation, retries, caching and accounting.

    Thread-safe: graph fan-out workers share one seam.
    """

    def __init__(
        self,
        backend: Backend | None,
        *,
        settings: ModelSettings = ModelSettings(),
        cache: ResponseCache | None = None,
        usage: UsageRecorder | None = None,
        prices: PriceTable | None = None,
        sleep: Callable[[float], None] | None = None,
    ):
        self.backend = backend  # None is the offline baseline
        self.settings = settings
        self.cache = cache
        self.usage = usage
        self.prices = prices or PriceTable.load()
        self.stats = SeamStats()
        self._sleep = sleep
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        return self.backend.model if self.backend is not None else BASELINE

    @property
    def base_url(self) -> str | None:
        """The endpoint the seam calls; ``None`` for the baseline and scripted models."""
        return getattr(self.backend, "base_url", None)

    @property
    def is_baseline(self) -> bool:
        return self.backend is None

    def run(self, agent: Agent[Out], **inputs: Any) -> Out:
        """The agent's validated output for these inputs.

        Raises :class:`ModelEndpointError` when the endpoint refuses for good,
        :class:`ModelUnavailableError` when transient faults outlast every attempt and
        :class:`InvalidOutput` when no attempt gave a valid reply; all with redacted messages.
        """
        if self.backend is None:
            result = agent.baseline(**inputs)
            self._account(agent, Completion(result), retries=0, cached=False)
            return result
        messages = agent.messages(**inputs)
        key = self._cache_key(messages, agent.schema)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            try:
                result = agent.schema.model_validate_json(hit)
                self._account(agent, Completion(result), retries=0, cached=True)
                return result
            except ValidationError:
                pass  # the schema changed since: pay for a fresh answer
        failure: BaseException | None = None
        try:
            completion, retries = self._complete_with_retries(messages, agent.schema)
        except Exception as error:
            failure = self._clean_failure(error, agent.schema)
        if failure is not None:
            self._note_structured_output()  # a fallback may have moved the endpoint on before the failure
            raise failure  # outside the except block: nothing chained, not even as context
        self._note_structured_output(completion.structured_output)
        if self.cache is not None:
            self.cache.put(key, self.model, completion.parsed.model_dump_json())
        self._account(agent, completion, retries=retries, cached=False)
        return completion.parsed  # type: ignore[return-value]

    def _cache_key(self, messages: list[Message], schema: type[BaseModel]) -> str:
        """SHA-256 of everything that decides the reply; never the API key. The messages are the
        agent's: neither the structured-output method nor a corrective turn changes the key."""
        canonical = _CANONICAL_JSON.encode(
            {"model": self.model, "endpoint": getattr(self.backend, "endpoint", None), "messages": messages,
             "schema": json_schema(schema), "sampling": self.settings.sampling()})
        return sha256_hex(canonical.encode("utf-8"))

    def _complete_with_retries(self, messages: list[Message], schema: type[BaseModel]) -> tuple[Completion, int]:
        correction: list[Message] = []  # one corrective turn after an invalid reply, replaced by the next

        def attempt() -> Completion:
            try:
                return self.backend.complete(messages + correction, schema)  # type: ignore[union-attr]
            except InvalidOutput as error:
                if error.reply is not None:
                    correction[:] = corrective_turn(error.reply, str(error), schema)
                raise

        counter = RetryCounter(self.stats, self._lock)
        return retrying(self.settings, counter, self._sleep)(attempt), counter.count

    def _clean_failure(self, error: Exception, schema: type[BaseModel]) -> BaseException:
        """The exception the seam raises for ``error``: ours, with a redacted message and no chain
        (the openai errors hold the request with its headers, and the server's text)."""
        attempts = self.settings.max_attempts
        if not isinstance(error, InvalidOutput):
            return transport_failure(error, model=self.model, base_url=self.base_url, attempts=attempts)
        where = f"model {self.model!r}" + (f" at {display_url(self.base_url)}" if self.base_url else "")
        excerpt = f"; its last reply began: {redact(error.reply[:200])!r}" if error.reply else ""
        clean = InvalidOutput(redact(f"{where} gave no valid {schema.__name__} in {attempts} attempt(s): "
                                     f"{error}{excerpt}"))
        clean.__cause__ = clean.__context__ = None
        clean.__suppress_context__ = True
        return clean

    def _note_structured_output(self, method: str | None = None) -> None:
        """Record the method the endpoint answers to: the one a call was just answered in, else the
        one the backend would use next."""
        method = method or getattr(self.backend, "structured_output", None)
        if method is not None and method != self.stats.structured_output:
            with self._lock:
                self.stats.structured_output = method

    def _account(self, agent: Agent[Any], completion: Completion, *, retries: int, cached: bool) -> None:
        cost = 0.0 if cached else self.prices.cost(self.model, completion.input_tokens, completion.output_tokens,
                                                   base_url=self.base_url)
        with self._lock:
            self.stats.calls += 1
            self.stats.cache_hits += int(cached)
            self.stats.input_tokens += completion.input_tokens
            self.stats.output_tokens += completion.output_tokens
            self.stats.cost_usd += cost
        if self.usage is not None:
            self.usage.record({
                "model": self.model, "agent": agent.name, "input_tokens": completion.input_tokens,
                "output_tokens": completion.output_tokens, "cost_usd": round(cost, 8),
                "retries": retries, "cached": cached,
            })

    def stats_dict(self) -> dict[str, Any]:
        self._note_structured_output()
        with self._lock:
            return asdict(self.stats)


# hashlib lets go of the interpreter to hash 2,048 bytes or more at once: with many threads each
# such call hands the interpreter to another thread and waits to get it back (two context switches
# to hash a few kilobytes, which takes microseconds). Fed in smaller pieces it keeps it; same digest.
_HASH_PIECE_BYTES = 2047


def sha256_hex(data: bytes) -> str:
    digest = sha256()
    view = memoryview(data)
    for start in range(0, len(view), _HASH_PIECE_BYTES):
        digest.update(view[start:start + _HASH_PIECE_BYTES])
    return digest.hexdigest()


@functools.lru_cache(maxsize=256)
def json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """``schema.model_json_schema()``, built once per schema (it costs a third of a millisecond;
    callers must not modify it)."""
    return schema.model_json_schema()


def parse_model_spec(spec: str) -> tuple[str, str]:
    """``(provider, model)`` of a spec: ``openai:gpt-4o-mini`` or ``baseline``."""
    if spec == BASELINE:
        return BASELINE, BASELINE
    provider, _, model = spec.partition(":")
    if provider != "openai" or not model:
        raise ValueError(f"unknown model spec {spec!r}: use 'baseline' or 'openai:<model>' "
                         "(OPENAI_BASE_URL selects any OpenAI-compatible server)")
    return provider, model


def build_seam(
    spec: str,
    settings: ModelSettings = ModelSettings(),
    *,
    cache: ResponseCache | None = None,
    usage: UsageRecorder | None = None,
    prices: PriceTable | None = None,
) -> ModelSeam:
    """The seam for a model spec string, with ``settings`` (timeout, attempts, structured output,
    rate) for its calls."""
    provider, model = parse_model_spec(spec)
    backend = None if provider == BASELINE else OpenAIBackend(model, settings)
    return ModelSeam(backend, settings=settings, cache=cache, usage=usage, prices=prices)
