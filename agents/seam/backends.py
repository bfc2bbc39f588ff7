"""The backends a :class:`~benchsmith.agents.seam.models.ModelSeam` calls, and what they share with it:
the call settings (:class:`ModelSettings`), the chat message and the completion types.
:class:`OpenAIBackend` asks an OpenAI-compatible server over the seam's own HTTP client
(:mod:`~benchsmith.agents.seam.transport`); :class:`ScriptedBackend` answers tests with scripted
pydantic objects. The seam does the retrying, caching and accounting."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import openai
from pydantic import BaseModel, ValidationError

from benchsmith.agents.defaults import StructuredOutput
from benchsmith.agents.seam.endpoints import (
    LOCAL_PLACEHOLDER_KEY,
    Endpoint,
    display_url,
    endpoint,
    endpoint_error,
    is_fatal,
    is_official,
    resolve_api_key,
    resolve_base_url,
    server_message,
)
from benchsmith.agents.seam.errors import InvalidOutput, ModelEndpointError, StructuredOutputUnsupported
from benchsmith.agents.seam.redaction import register_secret
from benchsmith.agents.seam.structured_output import (
    check_structured_output,
    first_method,
    is_format_rejection,
    needs_schema_in_prompt,
    next_method,
    parse_completion,
    request_options,
    with_schema_instructions,
)
from benchsmith.agents.seam.transport import json_client

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}


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
    :mod:`~benchsmith.agents.seam.transport` (kept-alive connections; the openai SDK's exceptions), and
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
            "seed": settings.seed,
            "temperature": settings.temperature,
        }
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
        body = {
            "model": self.model,
            "stream": False,
            "messages": request,
            **self._sampling,
            **self._request_options(method, schema),
        }
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
            base_url=self.base_url,
            status_code=rejection.status_code,
        )


ScriptedReply = BaseModel | Exception | Callable[[list[Message], type[BaseModel]], BaseModel]


class ScriptedBackend:
    """The test seam: replies are pydantic objects (or exceptions to raise, or functions of
    the messages and schema) consumed in order; once they run out, ``replier`` (a function of
    the messages and schema) answers every call. Every call's messages are recorded."""

    def __init__(
        self,
        replies: Iterable[ScriptedReply] = (),
        model: str = "scripted",
        replier: Callable[[list[Message], type[BaseModel]], BaseModel] | None = None,
    ):
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
