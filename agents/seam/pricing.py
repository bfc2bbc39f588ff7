"""Price table for token cost accounting, in US dollars per million tokens, per (endpoint, model).

The built-in prices are OpenAI's list prices and apply to OpenAI's own endpoint
(``https://api.openai.com/v1``) only: a model served elsewhere (vLLM, Ollama, a proxy) costs 0
and is reported as unpriced, even when it carries an OpenAI model's name, unless priced here.

Override or extend with a JSON file named by ``BENCHSMITH_PRICES``. A top-level model name prices
that model on OpenAI's endpoint (the original form); a top-level base URL (any key with ``://``)
holds the prices of models on that endpoint, where ``"*"`` prices every other model there::

    {
      "gpt-4o-mini": {"input": 0.15, "output": 0.60},
      "https://llm.example.com/v1": {"llama-3.1-70b": {"input": 0.50, "output": 1.50}},
      "http://127.0.0.1:8000/v1": {"*": {"input": 0.0, "output": 0.0}}
    }

Base URLs match the one the seam calls (``OPENAI_BASE_URL``) without a trailing slash.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.agents.seam.endpoints import is_official, normalize_base_url

PRICES_ENV = "BENCHSMITH_PRICES"
ANY_MODEL = "*"
DEFAULT_PRICES_PER_MILLION: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    # Embedding models: input tokens only.
    "text-embedding-3-small": (0.02, 0.0),
    "text-embedding-3-large": (0.13, 0.0),
    "text-embedding-ada-002": (0.10, 0.0),
}
_EXPECTED = (
    '{"model": {"input": USD_PER_M, "output": USD_PER_M}} for OpenAI\'s endpoint, or '
    '{"BASE_URL": {"model": {"input": USD_PER_M, "output": USD_PER_M}}} for another'
)

Prices = dict[str, tuple[float, float]]


@dataclass(frozen=True)
class PriceTable:
    per_million: Prices  # models on OpenAI's endpoint
    per_endpoint: dict[str, Prices] = field(default_factory=dict)  # normalized base URL → its models

    @classmethod
    def load(cls) -> PriceTable:
        prices = dict(DEFAULT_PRICES_PER_MILLION)
        per_endpoint: dict[str, Prices] = {}
        if path := os.environ.get(PRICES_ENV):
            try:
                overrides = json.loads(Path(path).read_text(encoding="utf-8"))
                for key, value in overrides.items():
                    if "://" not in key:
                        prices[key] = _price(value)
                    elif is_official(key):
                        prices.update(_models(value))
                    else:
                        per_endpoint.setdefault(normalize_base_url(key), {}).update(_models(value))
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
                raise ValueError(f"{path}: not a price table ({error}); expected {_EXPECTED}") from None
        return cls(prices, per_endpoint)

    def price(self, model: str, base_url: str | None = None) -> tuple[float, float] | None:
        """``(input, output)`` USD per million tokens of ``model`` on ``base_url`` (``None``: OpenAI's)."""
        if base_url is None or is_official(base_url):
            return self.per_million.get(model)
        endpoint_prices = self.per_endpoint.get(normalize_base_url(base_url), {})
        return endpoint_prices.get(model, endpoint_prices.get(ANY_MODEL))

    def is_priced(self, model: str, base_url: str | None = None) -> bool:
        return self.price(model, base_url) is not None

    def cost(self, model: str, input_tokens: int, output_tokens: int, base_url: str | None = None) -> float:
        input_price, output_price = self.price(model, base_url) or (0.0, 0.0)
        return (input_tokens * input_price + output_tokens * output_price) / 1_000_000


def _price(value: Any) -> tuple[float, float]:
    return float(value["input"]), float(value["output"])


def _models(value: dict[str, Any]) -> Prices:
    return {model: _price(price) for model, price in value.items()}
