"""Quality filter: a pluggable scorer maps each chunk to [0, 1]; chunks below the
minimum are dropped.

The default :class:`InformationDensityScorer` is a heuristic that needs no model. It is
the geometric mean of four signals, each capped at 1:

* letter share: letters among non-space characters, over 0.55. Tables of numbers, ASCII
  art and symbol soup score low; prose scores ~0.8, code ~0.65.
* lexical variety: distinct words over words (over the first 200 words), over 0.35.
  Repeated filler ("foo foo foo", menus) scores low.
* compressibility: zlib-compressed size over raw size, over 0.3. Text that compresses to
  almost nothing repeats itself.
* word shape: mean word length within 2..12 characters; outside it (hashes, base64,
  one-letter noise) the score falls off.

With the default minimum 0.5, a chunk has to fail one signal badly or several mildly.
An LLM scorer through the model seam can replace it (``--quality llm``).
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Sequence
from typing import Protocol

DEFAULT_MIN_QUALITY = 0.5
WORD = re.compile(r"\w+", re.UNICODE)


class QualityScorer(Protocol):
    name: str

    def score(self, texts: Sequence[str]) -> list[float]:
        """One score in [0, 1] per text; higher is better."""
        ...


class InformationDensityScorer:
    name = "information-density"

    def score(self, texts: Sequence[str]) -> list[float]:
        return [information_density(text) for text in texts]


def information_density(text: str) -> float:
    visible = [character for character in text if not character.isspace()]
    words = WORD.findall(text.lower())
    if not visible or not words:
        return 0.0
    letter_share = sum(character.isalpha() for character in visible) / len(visible)
    sample = words[:200]
    variety = len(set(sample)) / len(sample)
    encoded = text.encode("utf-8")
    compressibility = len(zlib.compress(encoded, 6)) / len(encoded)
    mean_length = sum(map(len, words)) / len(words)
    shape = 1.0 if 2 <= mean_length <= 12 else math.exp(-abs(mean_length - (2 if mean_length < 2 else 12)) / 3)
    signals = (
        min(1.0, letter_share / 0.55),
        min(1.0, variety / 0.35),
        min(1.0, compressibility / 0.3),
        shape,
    )
    return round(math.prod(signals) ** (1 / len(signals)), 4)
