"""Price table for token cost accounting, in US dollars per million tokens.

The defaults are list prices of common OpenAI models; an unknown model costs 0 and is
reported as unpriced. Override or extend with a JSON file named by ``BENCHSMITH_PRICES``:
``{"my-model": {"input": 0.5, "output": 1.5}}``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

PRICES_ENV = "BENCHSMITH_PRICES"
DEFAULT_PRICES_PER_MILLION: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
}


@dataclass(frozen=True)
class PriceTable:
    per_million: dict[str, tuple[float, float]]

    @classmethod
    def load(cls) -> "PriceTable":
        prices = dict(DEFAULT_PRICES_PER_MILLION)
        if path := os.environ.get(PRICES_ENV):
            try:
                overrides = json.loads(open(path, encoding="utf-8").read())
                prices.update({model: (float(p["input"]), float(p["output"])) for model, p in overrides.items()})
            except (OSError, ValueError, KeyError, TypeError) as error:
                raise ValueError(f"{path}: not a price table ({error}); expected "
                                 '{"model": {"input": USD_PER_M, "output": USD_PER_M}}') from None
        return cls(prices)

    def is_priced(self, model: str) -> bool:
        return model in self.per_million

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float:
        input_price, output_price = self.per_million.get(model, (0.0, 0.0))
        return (input_tokens * input_price + output_tokens * output_price) / 1_000_000
