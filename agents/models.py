"""The chat-model seam: every model call of every graph goes through :class:`ModelSeam`.

A model is chosen by a spec string:

* ``openai:<model>``: any OpenAI-compatible server through langchain-openai
  (``OPENAI_BASE_URL`` for vLLM, Ollama, llama.cpp...; the key from ``OPENAI_API_KEY``);
* ``baseline``: the offline deterministic agents (each agent's ``baseline`` method);
* a :class:`ScriptedBackend` object: tests feed pydantic objects (or exceptions) in order.

The seam validates structured output with the agent's pydantic schema; retries with
backoff on 429 (honouring ``Retry-After``), 5xx, timeouts, connection errors and invalid or
truncated output; caches validated replies by (model, messages, schema, sampling); and
records tokens and cost per call. The API key is never part of a cache key, a record or a
log line.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from hashlib import sha256
from typing import Any, Generic, Protocol, TypeVar

import openai
from pydantic import BaseModel, ValidationError
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from benchsmith.agents.pricing import PriceTable

Out = TypeVar("Out", bound=BaseModel)
Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}

BASELINE = "baseline"
MAX_RETRY_AFTER_S = 60.0


class InvalidOutput(Exception):
    """The model answered, but not with a valid instance of the schema (retried)."""


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


def delimited(tag: str, text: str, **attributes: Any) -> str:
    """Untrusted text (documents, user questions) enters a prompt only inside a tagged
    section; a closing tag inside the text is defused so it cannot end the section early."""
    attrs = "".join(f' {key}="{value}"' for key, value in attributes.items())
    safe = text.replace(f"</{tag}>", f"</ {tag}>")
    return f"<{tag}{attrs}>\n{safe}\n</{tag}>"


def estimate_tokens(text: str) -> int:
    """Rough token count for dry-run estimates: ~4 characters per token for English."""
    return max(1, len(text) // 4)


@dataclass(frozen=True)
class ModelSettings:
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int | None = None
    timeout_s: float = 60.0
    max_attempts: int = 6
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 20.0
    requests_per_second: float | None = None
    structured_method: str = "json_schema"  # or "function_calling" for servers without JSON schema

    def sampling(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens}


@dataclass
class Completion:
    parsed: BaseModel
    input_tokens: int = 0
    output_tokens: int = 0


class Backend(Protocol):
    model: str

    def complete(self, messages: list[Message], schema: type[BaseModel]) -> Completion: ...


class OpenAIBackend:
    """langchain-openai ``ChatOpenAI`` with structured output; the seam does the retrying."""

    def __init__(self, model: str, settings: ModelSettings):
        from langchain_core.rate_limiters import InMemoryRateLimiter
        from langchain_openai import ChatOpenAI

        if not os.environ.get("OPENAI_API_KEY"):
            raise ValueError("openai: models need OPENAI_API_KEY in the environment (any value for a local server)")
        self.model = model
        # Two servers may serve different weights under one model name: the cache keys on both.
        self.endpoint = os.environ.get("OPENAI_BASE_URL")  # None: the official endpoint
        self.settings = settings
        limiter = None
        if settings.requests_per_second:
            limiter = InMemoryRateLimiter(requests_per_second=settings.requests_per_second,
                                          check_every_n_seconds=0.02, max_bucket_size=1)
        self.chat = ChatOpenAI(
            model=model,
            temperature=settings.temperature,
            seed=settings.seed,
            max_tokens=settings.max_tokens,
            timeout=settings.timeout_s,
            max_retries=0,
            rate_limiter=limiter,
        )
        self._runnables: dict[type[BaseModel], Any] = {}
        self._lock = threading.Lock()

    def _structured(self, schema: type[BaseModel]) -> Any:
        with self._lock:
            if schema not in self._runnables:
                self._runnables[schema] = self.chat.with_structured_output(
                    schema, method=self.settings.structured_method, include_raw=True)
            return self._runnables[schema]

    def complete(self, messages: list[Message], schema: type[BaseModel]) -> Completion:
        try:
            reply = self._structured(schema).invoke(messages)
        except openai.LengthFinishReasonError as error:
            raise InvalidOutput("truncated reply (finish_reason=length)") from error
        except ValidationError as error:
            raise InvalidOutput(f"reply does not match {schema.__name__}: {error}") from error
        raw, parsed = reply["raw"], reply["parsed"]
        if reply.get("parsing_error") is not None or parsed is None:
            raise InvalidOutput(f"unparseable reply: {reply.get('parsing_error')}")
        if (raw.response_metadata or {}).get("finish_reason") == "length":
            raise InvalidOutput("truncated reply (finish_reason=length)")
        usage = raw.usage_metadata or {}
        return Completion(parsed, usage.get("input_tokens", 0), usage.get("output_tokens", 0))


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


def is_retryable(error: BaseException) -> bool:
    """Transport faults and invalid output are retried; auth and bad requests are not."""
    if isinstance(error, InvalidOutput | openai.APITimeoutError | openai.APIConnectionError | openai.RateLimitError):
        return True
    # 408 (request timeout) and 409 (conflict) are transient too, as the openai SDK treats them.
    return isinstance(error, openai.APIStatusError) and (error.status_code >= 500 or error.status_code in (408, 409))


def error_name(error: BaseException | None) -> str:
    """Stable names for the stats: openai's class, not langchain-openai's wrapper subclass."""
    for cls in type(error).__mro__:
        if cls.__module__.startswith("openai") or cls is InvalidOutput:
            return cls.__name__
    return type(error).__name__


def retry_after_seconds(error: BaseException | None) -> float | None:
    """The server's ``Retry-After`` (seconds form), if the error carries one."""
    response = getattr(error, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return min(MAX_RETRY_AFTER_S, float(value)) if value is not None else None
    except ValueError:
        return None


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
    def is_baseline(self) -> bool:
        return self.backend is None

    def run(self, agent: Agent[Out], **inputs: Any) -> Out:
        """The agent's validated output for these inputs."""
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
        completion, retries = self._complete_with_retries(messages, agent.schema)
        if self.cache is not None:
            self.cache.put(key, self.model, completion.parsed.model_dump_json())
        self._account(agent, completion, retries=retries, cached=False)
        return completion.parsed  # type: ignore[return-value]

    def _cache_key(self, messages: list[Message], schema: type[BaseModel]) -> str:
        """SHA-256 of everything that decides the reply; never the API key."""
        canonical = json.dumps(
            {"model": self.model, "endpoint": getattr(self.backend, "endpoint", None), "messages": messages, "schema": schema.model_json_schema(),
             "sampling": self.settings.sampling()},
            sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return sha256(canonical.encode("utf-8")).hexdigest()

    def _complete_with_retries(self, messages: list[Message], schema: type[BaseModel]) -> tuple[Completion, int]:
        settings = self.settings
        exponential = wait_exponential_jitter(multiplier=settings.backoff_initial_s, max=settings.backoff_max_s,
                                              jitter=settings.backoff_initial_s)
        retries = 0

        def wait(state: RetryCallState) -> float:
            error = state.outcome.exception() if state.outcome else None
            after = retry_after_seconds(error)
            return after if after is not None else exponential(state)

        def count(state: RetryCallState) -> None:
            nonlocal retries
            retries += 1
            name = error_name(state.outcome.exception()) if state.outcome else "unknown"
            with self._lock:
                self.stats.retries += 1
                self.stats.retried_errors[name] = self.stats.retried_errors.get(name, 0) + 1

        retrying = Retrying(
            retry=retry_if_exception(is_retryable),
            wait=wait,
            stop=stop_after_attempt(settings.max_attempts),
            before_sleep=count,
            reraise=True,
            **({"sleep": self._sleep} if self._sleep else {}),
        )
        completion = retrying(self.backend.complete, messages, schema)  # type: ignore[union-attr]
        return completion, retries

    def _account(self, agent: Agent[Any], completion: Completion, *, retries: int, cached: bool) -> None:
        cost = 0.0 if cached else self.prices.cost(self.model, completion.input_tokens, completion.output_tokens)
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
        with self._lock:
            return asdict(self.stats)


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
) -> ModelSeam:
    """The seam for a model spec string."""
    provider, model = parse_model_spec(spec)
    backend = None if provider == BASELINE else OpenAIBackend(model, settings)
    return ModelSeam(backend, settings=settings, cache=cache, usage=usage)
