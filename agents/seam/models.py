"""The chat-model seam: every model call of every graph goes through :class:`ModelSeam`.

A model is chosen by a spec string:

* ``openai:<model>``: any OpenAI-compatible server through the openai SDK's client
  (``OPENAI_BASE_URL`` for vLLM, Ollama, llama.cpp...; the key from ``OPENAI_API_KEY``, optional
  for a server on this machine or a private network);
* ``baseline``: the offline deterministic agents (each agent's ``baseline`` method);
* a :class:`~benchsmith.agents.seam.backends.ScriptedBackend` object: tests feed pydantic objects (or exceptions) in order.

The seam validates structured output with the agent's pydantic schema, asking each endpoint
the way it understands (:mod:`~benchsmith.agents.seam.structured_output`: JSON schema, then function
calling, then JSON mode or the prompt, remembered per endpoint); retries with backoff on 429
(honouring ``Retry-After`` and ``retry-after-ms``), 5xx, timeouts and connection errors, and
retries invalid or truncated output with the error fed back once; stops at once, for every
seam of the process, when an endpoint refuses for good (:mod:`~benchsmith.agents.seam.endpoints`);
caches validated replies by (model, endpoint, messages, schema, sampling); and records tokens
and cost per call. The API key is never part of a cache key, a record, a log line or an error
(:func:`~benchsmith.agents.seam.redaction.redact`).
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from hashlib import sha256
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from benchsmith.agents.defaults import BASELINE, StructuredOutput
from benchsmith.agents.seam.backends import Backend, Completion, Message, ModelSettings, OpenAIBackend
from benchsmith.agents.seam.endpoints import (
    Endpoint,
    display_url,
    endpoint,
    forget_endpoints,
    is_local_base_url,
    is_official,
    resolve_base_url,
)
from benchsmith.agents.seam.errors import (
    InvalidOutput,
    MissingAPIKeyError,
    ModelEndpointError,
    ModelSeamError,
    ModelUnavailableError,
)
from benchsmith.agents.seam.pricing import PriceTable
from benchsmith.agents.seam.redaction import redact
from benchsmith.agents.seam.retries import (
    MAX_RETRY_AFTER_S,
    RetryCounter,
    error_name,
    is_retryable,
    retry_after_seconds,
    retrying,
    transport_failure,
)
from benchsmith.agents.seam.structured_output import STRUCTURED_OUTPUT_CHOICES, corrective_turn

__all__ = [
    "BASELINE",
    "MAX_RETRY_AFTER_S",
    "STRUCTURED_OUTPUT_CHOICES",
    "Agent",
    "Endpoint",
    "InvalidOutput",
    "MissingAPIKeyError",
    "ModelEndpointError",
    "ModelSeam",
    "ModelSeamError",
    "ModelUnavailableError",
    "NoBaselineError",
    "SeamStats",
    "StructuredOutput",
    "build_seam",
    "endpoint",
    "error_name",
    "forget_endpoints",
    "is_local_base_url",
    "is_official",
    "is_retryable",
    "parse_model_spec",
    "redact",
    "resolve_base_url",
    "retry_after_seconds",
]

Out = TypeVar("Out", bound=BaseModel)
# The cache key's JSON, its encoder built once (json.dumps builds one at every call that passes options).
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))


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

    # (*args, **inputs): each role names the inputs it reads as keyword arguments, which a type checker
    # accepts as an override only of a signature this open; the seam passes keyword arguments alone.
    def messages(self, *args: Any, **inputs: Any) -> list[Message]:
        raise NotImplementedError

    def baseline(self, *args: Any, **inputs: Any) -> Out:
        raise NoBaselineError(
            f"the {self.name} agent has no offline baseline: pass a model spec such as openai:gpt-4o-mini"
        )


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
            {
                "model": self.model,
                "endpoint": getattr(self.backend, "endpoint", None),
                "messages": messages,
                "schema": json_schema(schema),
                "sampling": self.settings.sampling(),
            }
        )
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
        clean = InvalidOutput(
            redact(f"{where} gave no valid {schema.__name__} in {attempts} attempt(s): {error}{excerpt}")
        )
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
        cost = (
            0.0
            if cached
            else self.prices.cost(self.model, completion.input_tokens, completion.output_tokens, base_url=self.base_url)
        )
        with self._lock:
            self.stats.calls += 1
            self.stats.cache_hits += int(cached)
            self.stats.input_tokens += completion.input_tokens
            self.stats.output_tokens += completion.output_tokens
            self.stats.cost_usd += cost
        if self.usage is not None:
            self.usage.record(
                {
                    "model": self.model,
                    "agent": agent.name,
                    "input_tokens": completion.input_tokens,
                    "output_tokens": completion.output_tokens,
                    "cost_usd": round(cost, 8),
                    "retries": retries,
                    "cached": cached,
                }
            )

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
        digest.update(view[start : start + _HASH_PIECE_BYTES])
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
        raise ValueError(
            f"unknown model spec {spec!r}: use 'baseline' or 'openai:<model>' "
            "(OPENAI_BASE_URL selects any OpenAI-compatible server)"
        )
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
