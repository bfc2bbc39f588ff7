"""Confidence intervals for the means an audit reports from a sample of benchmark instances.

* Mean of per-instance values: Student's t interval.
* Mean of per-row values without a distributional assumption (win rates of 0/1 outcomes,
  score differences): the percentile bootstrap (:func:`bootstrap_interval`).
* Proportion (e.g. the share of instances whose gold passage a judge confirms): Wilson score
  interval (Wilson, 1927, "Probable inference, the law of succession, and statistical
  inference", JASA 22(158):209–212), which keeps its coverage near 0 and 1 where the Wald
  interval p̂ ± z·√(p̂(1 − p̂)/n) collapses.

An audit usually checks n instances drawn without replacement from a benchmark of N, so both
take a finite population correction (FPC) on the standard error (Cochran, 1977, Sampling
Techniques, 3rd ed., Wiley, ch. 2 for means, ch. 3 for proportions). Its form follows the variance
it corrects: √(1 − n/N) on the sample standard deviation s (divisor n − 1, unbiased for the
population S² with divisor N − 1), √((N − n)/(N − 1)) on a variance P(1 − P)/n written with the
population proportion P. At n = N the whole benchmark was checked and the interval has zero width:
it covers the sampling uncertainty only, not the judges' own errors or the disagreement between
them (see evals.measures.agreement).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

from benchsmith.evals.defaults import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES


@dataclass(frozen=True)
class Interval:
    mean: float | None  # None without data (n = 0)
    low: float | None  # None where the interval is undefined (see each function)
    high: float | None
    n: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# Per-query values, in the queries' order: a list, or a column of an array.
Values = Sequence[float] | np.ndarray


def mean_interval(
    values: Sequence[float], population: int | None = None, confidence: float = DEFAULT_CONFIDENCE
) -> Interval:
    """Student's t interval for the mean of ``values``, a sample of n from a population of N
    instances when ``population`` is given:

        x̄ ± t_{(1+c)/2, n−1} · s/√n · FPC,   s² = Σ (x_i − x̄)² / (n − 1),

    where FPC = √(1 − n/N) = √((N − n)/N) with a population of N, 1 without one (an infinite
    population, or sampling with replacement): Cochran (1977, Theorems 2.2 and 2.4) has
    V(x̄) = (1 − n/N) S²/n with s² unbiased for S². (√((N − n)/(N − 1)) is the same correction
    written for the population variance with divisor N; applied to s it would be too narrow by
    √(N/(N − 1)).) For n < 2 the sample standard deviation is undefined and so are the bounds
    (None): one value says nothing about spread, and a zero-width interval would claim certainty.
    At n = N the width is 0 (sampling uncertainty only).
    """
    _check_confidence(confidence)
    sample = np.asarray(values, dtype=float)
    if len(sample) < 2:
        return _without_spread(sample)
    n, mean = len(sample), float(sample.mean())
    fpc = math.sqrt(1 - n / _checked_population(n, population)) if population is not None else 1.0
    half_width = float(stats.t.ppf((1 + confidence) / 2, n - 1) * sample.std(ddof=1) / math.sqrt(n) * fpc)
    return Interval(mean, mean - half_width, mean + half_width, n)


def proportion_interval(
    successes: int, n: int, population: int | None = None, confidence: float = DEFAULT_CONFIDENCE
) -> Interval:
    """Wilson score interval (Wilson, 1927) for the proportion p̂ = k/n, with z = Φ⁻¹((1 + c)/2):

        (p̂ + z²/(2n) ± z · √(p̂(1 − p̂)/n + z²/(4n²))) / (1 + z²/n).

    Wilson's interval is the set of P that a z test accepts, |p̂ − P| ≤ z · √(V(P)), so with a
    population of N the exact variance of p̂ under sampling without replacement, V(P) =
    (P(1 − P)/n) · (N − n)/(N − 1) (Cochran, 1977, ch. 3), gives FPC = √((N − n)/(N − 1)), and it
    enters by scaling z to z' = z · FPC everywhere in the formula. That equals the Wilson interval
    at the effective sample size n / FPC² (the design-effect approach of Kish, 1965, Survey
    Sampling; used with survey data by Korn and Graubard, 1998, Survey Methodology 24(2):193–201):
    a common approximation, which treats p̂ as normal, not an exact hypergeometric interval. At
    n = N it has zero width at p̂ (sampling uncertainty only). n = 0: mean and bounds None.
    """
    _check_confidence(confidence)
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 ≤ successes ≤ n, got {successes} of {n}")
    if n == 0:
        return Interval(None, None, None, 0)
    p = successes / n
    fpc = 1.0
    if population is not None:
        population = _checked_population(n, population)
        fpc = math.sqrt((population - n) / (population - 1)) if population > n else 0.0
    z = float(stats.norm.ppf((1 + confidence) / 2)) * fpc
    denominator = 1 + z**2 / n
    center = (p + z**2 / (2 * n)) / denominator
    half_width = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denominator
    low = 0.0 if successes == 0 else center - half_width  # exact at the ends: the formula gives 0 and 1 up to rounding
    high = 1.0 if successes == n else center + half_width
    return Interval(p, low, high, n)


def _checked_population(n: int, population: int) -> int:
    if population < n:
        raise ValueError(f"a sample of {n} cannot come from a population of {population}")
    return population


def _without_spread(sample: np.ndarray) -> Interval:
    """The interval of fewer than 2 values: no mean without data; with one value, its mean and
    no bounds (one value says nothing about spread, and a zero-width interval would claim certainty)."""
    return Interval(float(sample.mean()) if len(sample) else None, None, None, len(sample))


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")


# The percentile bootstrap (Efron and Tibshirani, 1993, An Introduction to the Bootstrap, Chapman &
# Hall, ch. 13), in two steps that every bootstrap of this package shares: draw B resamples of the
# n rows with replacement and compute the statistic θ*_b on each; the interval is the empirical
# (1 − c)/2 and (1 + c)/2 quantiles of θ*_1..θ*_B (:func:`percentile_interval`). The draw is
# scipy.stats.bootstrap's for a statistic of one sample (:func:`bootstrap_interval`) and for τ over
# two samples (evals/measures/validity.py); :func:`resample_weights` where several statistics must share
# the resamples, so that they are paired (select's configurations, evals/measures/selection_measures.py).
# One default number of resamples, DEFAULT_RESAMPLES (2,000, evals/defaults.py): the percentile
# interval reads the tails, 2.5% of B resamples each at 95%, and B = 2,000 leaves 50 resamples in
# each (Efron and Tibshirani advise B of 1,000 or more for percentile intervals, where 25 to 200
# suffice for a standard error, ch. 6).
# Select (1,000) and validate's τ (1,000) keep their own, explicit, because README figures and
# their recorded runs were computed with them.


def resample_weights(rows: int, resamples: int, seed: int) -> np.ndarray:
    """(B, n) counts of each of n rows in B resamples drawn with replacement: a statistic of each
    resample is then a weighted one (``weights @ per_row_values``), and every statistic computed
    from the same weights is paired with the others resample by resample."""
    if rows == 0:
        return np.zeros((resamples, 0))
    rng = np.random.default_rng(seed)
    return rng.multinomial(rows, np.full(rows, 1.0 / rows), size=resamples).astype(float)


def percentile_interval(
    point: float | None, resampled: np.ndarray, n: int, confidence: float = DEFAULT_CONFIDENCE
) -> Interval:
    """The percentile bootstrap interval around ``point`` (the statistic of the sample of n rows):
    the α = (1 − c)/2 and 1 − α quantiles of the ``resampled`` statistics, linear interpolation
    between order statistics (as scipy.stats.bootstrap's percentile method, to the last digit).
    For n < 2 or no resample the bounds are None: one row says nothing about spread."""
    _check_confidence(confidence)
    resampled = np.asarray(resampled, dtype=float)
    if n < 2 or not len(resampled):
        return Interval(point, None, None, n)
    alpha = np.asarray((1 - confidence) / 2)
    low, high = stats.quantile(resampled, np.stack([alpha, 1 - alpha]))
    return Interval(point, float(low), float(high), n)


def bootstrap_interval(
    values: Values,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap interval for the mean of ``values`` (Efron and Tibshirani, 1993, An
    Introduction to the Bootstrap, Chapman & Hall, ch. 13): draw B resamples of the n values with
    replacement, take each one's mean x̄*_b; the interval is the empirical (1 − c)/2 and (1 + c)/2
    quantiles of x̄*_1..x̄*_B. The resamples are drawn by ``scipy.stats.bootstrap`` with a seeded
    generator, so the same values give the same interval; the quantiles by
    :func:`percentile_interval`.

    Resampling the rows keeps each row's values together, which is what a benchmark of rows
    (source documents) is a sample of. Values that are all equal give a zero-width interval at
    their mean (every resample has that mean); for n < 2 the bounds are None, as for
    :func:`mean_interval`.
    """
    _check_confidence(confidence)
    sample = np.asarray(values, dtype=float)
    if len(sample) < 2:
        return _without_spread(sample)
    n, mean = len(sample), float(sample.mean())
    if np.all(sample == sample[0]):  # scipy warns on degenerate data; every resample has this mean
        return Interval(mean, mean, mean, n)
    result = stats.bootstrap(
        (sample,),
        np.mean,
        confidence_level=confidence,
        n_resamples=resamples,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return percentile_interval(mean, result.bootstrap_distribution, n, confidence)
