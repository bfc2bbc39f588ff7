"""Embeddings from an OpenAI-compatible server: the embedder spec ``openai:<model>``.

Any server with a ``/v1/embeddings`` route answers: OpenAI, Text Embeddings Inference (TEI),
vLLM, Ollama, llama.cpp. The server is ``BENCHSMITH_EMBEDDINGS_BASE_URL`` when set (an
embedding server beside a chat server), else the chat models' ``OPENAI_BASE_URL``; the key is
``BENCHSMITH_EMBEDDINGS_API_KEY``, else ``OPENAI_API_KEY`` (optional for a server on this machine
or a private network).

:class:`OpenAIEmbedder` is an ``Embedder`` (``name``, ``encode(texts)`` → L2-normalized float32
rows) that

* looks every text up in a cache keyed by (endpoint, model, text) first, and asks only for the
  texts it lacks, each distinct text once;
* sends them in batches (``batch_size`` texts per request: 32, the default limit of TEI) with
  up to ``concurrency`` requests in flight;
* retries with the chat seam's policy (:mod:`~benchsmith.agents.seam.retries`: 429 with
  ``Retry-After`` / ``retry-after-ms``, 5xx, timeouts, a reply with the wrong number of vectors),
  waits its turn at the endpoint's shared rate limiter, and latches the endpoint on a refusal
  (401, 403, 404) so every later call, chat or embedding, stops at once
  (:mod:`~benchsmith.agents.seam.endpoints`);
* records each request's ``usage.prompt_tokens`` and its cost (:mod:`~benchsmith.agents.seam.pricing`)
  in the run's usage ledger.

The cache and the ledger are stores the caller hands in; this module does no I/O besides the
server. The API key is never part of a cache key, a record or an error.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from hashlib import sha256
from typing import Any, Protocol

import numpy as np
import openai

from benchsmith.agents.seam.backends import ModelSettings, estimate_tokens
from benchsmith.agents.seam.endpoints import (
    API_KEY_ENV,
    LOCAL_PLACEHOLDER_KEY,
    Endpoint,
    display_url,
    endpoint,
    endpoint_error,
    is_fatal,
    is_official,
    normalize_base_url,
    resolve_api_key,
    resolve_base_url,
)
from benchsmith.agents.seam.errors import InvalidOutput, ModelEndpointError, ModelSeamError
from benchsmith.agents.seam.models import UsageRecorder
from benchsmith.agents.seam.pricing import PriceTable
from benchsmith.agents.seam.redaction import register_secret
from benchsmith.agents.seam.retries import RetryCounter, retrying, transport_failure

EMBEDDER_PROVIDER = "openai"
EMBEDDINGS_BASE_URL_ENV = "BENCHSMITH_EMBEDDINGS_BASE_URL"
EMBEDDINGS_API_KEY_ENV = "BENCHSMITH_EMBEDDINGS_API_KEY"
DEFAULT_BATCH_SIZE = 32  # texts per request: TEI's default --max-client-batch-size
DEFAULT_CONCURRENCY = 4  # requests in flight per encode() call
ROUTE = "embeddings"
UNIT_TOLERANCE = 1e-5  # a row this close to length 1 counts as normalized


class EmbeddingStore(Protocol):
    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]: ...
    def put_many(self, model: str, rows: Iterable[tuple[str, bytes]]) -> None: ...


def is_server_embedder(spec: str) -> bool:
    """Does ``spec`` name an embedder on a server (``openai:<model>``), not a local model?"""
    return spec.partition(":")[0] == EMBEDDER_PROVIDER and ":" in spec


def parse_embedder_spec(spec: str) -> str:
    """The model of an ``openai:<model>`` spec; a ValueError saying the form otherwise."""
    provider, _, model = spec.partition(":")
    if provider != EMBEDDER_PROVIDER or not model.strip() or model != model.strip():
        raise ValueError(
            f"embedder spec {spec!r}: use openai:<model>, e.g. openai:text-embedding-3-small "
            f"(the server is {EMBEDDINGS_BASE_URL_ENV}, else OPENAI_BASE_URL)"
        )
    return model


def embeddings_base_url() -> str:
    """The embedding server: ``BENCHSMITH_EMBEDDINGS_BASE_URL``, else the chat models' base URL."""
    if url := os.environ.get(EMBEDDINGS_BASE_URL_ENV):
        return normalize_base_url(url)
    return resolve_base_url()


def embeddings_variables() -> dict[str, str]:
    """The environment variables the embedding server's key and address come from, for messages
    that say what to fix (``endpoint_error``'s ``key_variable`` and ``url_variable``)."""
    return {
        "key_variable": EMBEDDINGS_API_KEY_ENV if os.environ.get(EMBEDDINGS_API_KEY_ENV) else API_KEY_ENV,
        "url_variable": EMBEDDINGS_BASE_URL_ENV if os.environ.get(EMBEDDINGS_BASE_URL_ENV) else "OPENAI_BASE_URL",
    }


def embeddings_api_key(base_url: str) -> str:
    """``BENCHSMITH_EMBEDDINGS_API_KEY``, else ``OPENAI_API_KEY``, else a placeholder for a local server
    (:class:`~benchsmith.agents.seam.errors.MissingAPIKeyError` for a remote one)."""
    return os.environ.get(EMBEDDINGS_API_KEY_ENV) or resolve_api_key(base_url)


@dataclass
class EmbeddingStats:
    requests: int = 0  # answered by the server
    texts: int = 0  # asked of encode(), repeats included
    embedded_texts: int = 0  # sent to the server
    cached_texts: int = 0  # answered from the cache
    retries: int = 0
    input_tokens: int = 0
    cost_usd: float = 0.0
    retried_errors: dict[str, int] = field(default_factory=dict)


class OpenAIEmbedder:
    """The embedder ``openai:<model>``; thread-safe (graph workers may share one)."""

    def __init__(
        self,
        model: str,
        settings: ModelSettings = ModelSettings(),
        *,
        cache: EmbeddingStore | None = None,
        usage: UsageRecorder | None = None,
        prices: PriceTable | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        concurrency: int = DEFAULT_CONCURRENCY,
        sleep: Callable[[float], None] | None = None,
    ):
        if batch_size < 1 or concurrency < 1:
            raise ValueError(f"batch size and concurrency must be at least 1, got {batch_size} and {concurrency}")
        self.model = model
        self.name = f"{EMBEDDER_PROVIDER}:{model}"  # stable: collections record it as their embedder
        self.base_url = embeddings_base_url()
        # The cache key's endpoint: two servers may serve different weights under one model name.
        self.endpoint = None if is_official(self.base_url) else self.base_url
        self.settings = settings
        self.cache = cache
        self.usage = usage
        self.prices = prices or PriceTable.load()
        self.batch_size = batch_size
        self.concurrency = concurrency
        self.stats = EmbeddingStats()
        self._sleep = sleep
        self._lock = threading.Lock()
        self.state.share_rate_limit(settings.requests_per_second)
        api_key = embeddings_api_key(self.base_url)
        self.variables = embeddings_variables()  # read with the key: what a refusal tells the user to check
        if api_key != LOCAL_PLACEHOLDER_KEY:
            register_secret(api_key)
        self.client = openai.OpenAI(
            base_url=self.base_url, api_key=api_key, timeout=settings.timeout_s, max_retries=0
        )  # the retry loop is ours, with the seam's policy

    @property
    def state(self) -> Endpoint:
        """The endpoint's shared state (latch, rate limiter), looked up each time."""
        return endpoint(self.base_url)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalized float32 row per text, in order."""
        texts = list(texts)
        with self._lock:
            self.stats.texts += len(texts)
        unique = list(dict.fromkeys(texts))
        keys = {text: self.cache_key(text) for text in unique}
        vectors: dict[str, np.ndarray] = {}
        if self.cache is not None and unique:
            stored = self.cache.get_many(list(keys.values()))
            vectors = {
                text: np.frombuffer(stored[key], dtype=np.float32) for text, key in keys.items() if key in stored
            }
            if vectors:
                self._account_cached(len(vectors))
        missing = [text for text in unique if text not in vectors]
        batches = [missing[start : start + self.batch_size] for start in range(0, len(missing), self.batch_size)]
        if len(batches) > 1 and self.concurrency > 1:
            with ThreadPoolExecutor(min(self.concurrency, len(batches)), thread_name_prefix="embed") as pool:
                answered = list(pool.map(lambda batch: self._embed_batch(batch, keys), batches))
        else:
            answered = [self._embed_batch(batch, keys) for batch in batches]
        for batch, matrix in zip(batches, answered):
            vectors.update(zip(batch, matrix))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        dimensions = {len(vector) for vector in vectors.values()}
        if len(dimensions) > 1:
            raise ModelSeamError(
                f"model {self.model!r} at {display_url(self.base_url)} gave vectors of {sorted(dimensions)} dimensions "
                "(the cache holds vectors of another size for the same model): clear "
                "embedding-cache.sqlite in the workspace, or serve the model under another name"
            )
        return np.vstack([vectors[text] for text in texts])

    def cache_key(self, text: str) -> str:
        """SHA-256 of (endpoint, model, text); never the API key."""
        canonical = json.dumps(
            {"endpoint": self.endpoint, "model": self.model, "text": text}, ensure_ascii=False, separators=(",", ":")
        )
        return sha256(canonical.encode("utf-8")).hexdigest()

    def stats_dict(self) -> dict[str, Any]:
        with self._lock:
            return asdict(self.stats)

    # ---------------------------------------------------------------------------------
    # One batch: request with retries, cache, account.

    def _embed_batch(self, batch: list[str], keys: dict[str, str]) -> np.ndarray:
        counter = RetryCounter(self.stats, self._lock)
        failure: BaseException | None = None
        try:
            matrix, tokens = retrying(self.settings, counter, self._sleep)(lambda: self._request(batch))
        except Exception as error:
            failure = self._clean_failure(error, len(batch))
        if failure is not None:
            raise failure  # outside the except block: nothing chained
        if self.cache is not None:
            # Per batch, as it arrives: a run killed mid-way has paid for no finished batch twice.
            self.cache.put_many(self.model, ((keys[text], row.tobytes()) for text, row in zip(batch, matrix)))
        self._account(len(batch), tokens, counter.count)
        return matrix

    def _request(self, batch: list[str]) -> tuple[np.ndarray, int]:
        state = self.state
        state.raise_if_latched()
        state.wait_for_turn(self.settings.requests_per_second)
        state.raise_if_latched()  # latched while this request waited for its turn
        try:
            # "float": every compatible server speaks it (base64 is not universal).
            response = self.client.embeddings.create(model=self.model, input=batch, encoding_format="float")
        except openai.APIStatusError as error:
            if is_fatal(error):
                latched = state.latch(endpoint_error(error, self.base_url, self.model, route=ROUTE, **self.variables))
                raise ModelEndpointError(
                    str(latched), base_url=latched.base_url, status_code=latched.status_code
                ) from None
            raise  # transient: retried
        except (json.JSONDecodeError, openai.APIResponseValidationError) as error:
            raise InvalidOutput(f"the server's reply is not an embeddings response ({type(error).__name__})") from None
        rows = sorted(response.data or [], key=lambda item: item.index)
        if [row.index for row in rows] != list(range(len(batch))):
            raise InvalidOutput(
                f"the server sent {len(rows)} vectors (indexes {[row.index for row in rows][:8]}) "
                f"for {len(batch)} texts"
            )
        try:
            matrix: np.ndarray = np.asarray([row.embedding for row in rows], dtype=np.float32)
        except (ValueError, TypeError):
            raise InvalidOutput("the server sent vectors of different lengths or not numbers") from None
        if matrix.ndim != 2 or matrix.shape[1] == 0 or not np.isfinite(matrix).all():
            raise InvalidOutput(f"the server sent no usable vectors (shape {matrix.shape}, or not finite numbers)")
        # Servers differ in whether they normalize. Rows of unit length already stay as sent (bit for
        # bit: dividing by a norm of 1 ± 1e-7 would perturb scores and break ties differently).
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        if not np.all(np.abs(norms - 1) <= UNIT_TOLERANCE):
            matrix = matrix / np.where(np.abs(norms - 1) <= UNIT_TOLERANCE, 1, np.where(norms == 0, 1, norms))
        usage = getattr(response, "usage", None)
        tokens = getattr(usage, "prompt_tokens", None)
        return matrix, int(tokens) if tokens is not None else sum(estimate_tokens(text) for text in batch)

    def _clean_failure(self, error: Exception, texts: int) -> BaseException:
        if isinstance(error, InvalidOutput):
            clean = InvalidOutput(
                f"model {self.model!r} at {display_url(self.base_url)} gave no valid embeddings "
                f"for {texts} texts in {self.settings.max_attempts} attempt(s): {error}"
            )
            clean.__cause__ = clean.__context__ = None
            clean.__suppress_context__ = True
            return clean
        return transport_failure(
            error,
            model=self.model,
            base_url=self.base_url,
            attempts=self.settings.max_attempts,
            route=ROUTE,
            variables=self.variables,
        )

    def _account(self, texts: int, tokens: int, retries: int) -> None:
        cost = self.prices.cost(self.model, tokens, 0, base_url=self.base_url)
        with self._lock:
            self.stats.requests += 1
            self.stats.embedded_texts += texts
            self.stats.input_tokens += tokens
            self.stats.cost_usd += cost
        self._record(texts, tokens, cost, retries, cached=False)

    def _account_cached(self, texts: int) -> None:
        with self._lock:
            self.stats.cached_texts += texts
        self._record(texts, 0, 0.0, 0, cached=True)

    def _record(self, texts: int, tokens: int, cost: float, retries: int, *, cached: bool) -> None:
        """A row of the run's usage ledger, where the embedder keeps one."""
        if self.usage is not None:
            self.usage.record(
                {
                    "model": self.model,
                    "agent": "embedder",
                    "texts": texts,
                    "input_tokens": tokens,
                    "output_tokens": 0,
                    "cost_usd": round(cost, 8),
                    "retries": retries,
                    "cached": cached,
                }
            )
