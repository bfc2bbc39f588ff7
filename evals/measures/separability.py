"""Can a set of queries tell two retrieval configurations apart? A paired bootstrap interval of
their mean per-query difference.

For configurations A and B measured on the same n queries, with per-query values x_i(A) and
x_i(B) of one measure,

    d_i = x_i(A) − x_i(B),   d̄ = (1/n) Σ_i d_i.

Draw B resamples of the n queries with replacement, the same queries for both configurations
(paired), and take each resample's mean difference d̄*_b; the interval is the percentile
bootstrap interval, the (1 − c)/2 and (1 + c)/2 empirical quantiles of d̄*_1..d̄*_B (Efron and
Tibshirani, 1993, An Introduction to the Bootstrap, Chapman & Hall, ch. 13). The queries
*separate* A from B when the interval excludes 0 (low > 0 or high < 0); an interval that
contains 0 says the queries cannot tell which is better. Resampling the queries of a test
collection, paired, to ask which system pairs it can tell apart is Sakai's (2006, "Evaluating
evaluation metrics based on the bootstrap", SIGIR 2006, 525–532) bootstrap measure of
discriminative power; this is its percentile-interval form, one pair at a time, at no fixed
significance level and with no correction for the number of pairs.

The draw is evals.measures.intervals.bootstrap_interval's (``scipy.stats.bootstrap``, percentile method,
a generator seeded with ``seed``), the same resampling as τ's interval in evals/measures/validity.py: the
same seed and resamples give the same interval, and every pair of one set is drawn with the same
resamples of its queries. Fewer than 2 queries: no bounds, not separated. Identical per-query
values: every resample's difference is 0, the interval [0, 0], not separated.

Worked example (tests/test_separability.py): d = (1, 2, 3). Every resample mean lies in [1, 3]
and both ends have probability 1/27 ≈ 3.7% > 2.5% of the resamples, so the 95% interval is
[1, 3]: separated. d = (0, 1): the resample means are 0, ½ and 1 with probabilities ¼, ½, ¼, so
the interval is [0, 1], which contains 0: not separated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from benchsmith.evals.defaults import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES
from benchsmith.evals.measures.intervals import Interval, Values, bootstrap_interval


@dataclass(frozen=True)
class Separation:
    """One pair of configurations on one set of queries (module docstring)."""

    first: str  # the configuration ranked above
    second: str
    ranking: str  # which ranking made them a pair (an adjacent pair, a set's top pair)
    difference: float | None  # d̄: the mean over the queries of first − second
    low: float | None
    high: float | None
    queries: int

    @property
    def separated(self) -> bool:
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "separated": self.separated}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Separation:
        return cls(**{key: data[key] for key in ("first", "second", "ranking", "difference", "low", "high", "queries")})


def difference_interval(
    first: Values,
    second: Values,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Interval:
    """The paired percentile bootstrap interval of d̄, the mean of ``first − second`` over the
    same queries (module docstring)."""
    first_values, second_values = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if first_values.shape != second_values.shape:
        raise ValueError(
            f"per-query values of the same queries needed, got {first_values.shape} and {second_values.shape}"
        )
    return bootstrap_interval(first_values - second_values, confidence, resamples, seed)


def adjacent_pairs(means: Mapping[str, float]) -> list[tuple[str, str]]:
    """Each configuration and the one ranked just below it, best first (equal means by name)."""
    order = sorted(means, key=lambda name: (-means[name], name))
    return list(pairwise(order))


def separations(
    per_query: Mapping[str, Values],
    pairs: Sequence[tuple[str, str, str]],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> list[Separation]:
    """The interval of each ``(first, second, ranking)`` pair over ``per_query`` (``{configuration:
    its values on the same queries, in one order}``)."""
    found = []
    for first, second, ranking in pairs:
        interval = difference_interval(per_query[first], per_query[second], resamples, seed, confidence)
        found.append(Separation(first, second, ranking, interval.mean, interval.low, interval.high, interval.n))
    return found
