"""Confidence intervals for audit means: Student's t and Wilson, with the finite population correction.

Checked against scipy.stats (t.interval, binomtest(...).proportion_ci(method="wilson")), against
hand-computed values, and against identities the finite population correction must satisfy.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from benchsmith.evals.measures.intervals import (
    Interval,
    bootstrap_interval,
    mean_interval,
    percentile_interval,
    proportion_interval,
    resample_weights,
)

SAMPLE = [0.62, 0.71, 0.55, 0.80, 0.67, 0.74, 0.59, 0.70, 0.66, 0.77, 0.61, 0.69]


def width(interval: Interval) -> float:
    return interval.high - interval.low


# --- Mean ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("confidence", [0.90, 0.95, 0.99])
def test_mean_interval_matches_scipy_t_interval(confidence):
    expected = stats.t.interval(confidence, len(SAMPLE) - 1, loc=np.mean(SAMPLE), scale=stats.sem(SAMPLE))
    interval = mean_interval(SAMPLE, confidence=confidence)
    assert interval.mean == pytest.approx(np.mean(SAMPLE))
    assert (interval.low, interval.high) == pytest.approx(expected)
    assert interval.n == len(SAMPLE)


def test_mean_interval_by_hand():
    # x̄ = 3, s = √2.5, s/√5 = 0.70711, t_{0.975, 4} = 2.776445 → 3 ∓ 1.96324
    interval = mean_interval([1, 2, 3, 4, 5])
    assert (interval.low, interval.high) == pytest.approx((1.036757, 4.963243), abs=1e-6)


@pytest.mark.parametrize("population", [13, 20, 100, 10_000])
def test_finite_population_correction_shrinks_the_mean_interval_by_sqrt_one_minus_n_over_N(population):
    n = len(SAMPLE)
    corrected, uncorrected = mean_interval(SAMPLE, population=population), mean_interval(SAMPLE)
    assert corrected.mean == uncorrected.mean
    assert width(corrected) / width(uncorrected) == pytest.approx(math.sqrt(1 - n / population))
    assert (corrected.low + corrected.high) / 2 == pytest.approx(corrected.mean)


def test_mean_interval_of_the_whole_population_has_zero_width():
    interval = mean_interval(SAMPLE, population=len(SAMPLE))
    assert interval.low == interval.high == interval.mean


def test_mean_interval_without_enough_values():
    assert mean_interval([]) == Interval(None, None, None, 0)
    assert mean_interval([0.4]) == Interval(0.4, None, None, 1)
    assert mean_interval([0.4], population=1) == Interval(0.4, None, None, 1)
    assert mean_interval([0.5, 0.5, 0.5]) == Interval(0.5, 0.5, 0.5, 3)  # no spread observed


def test_mean_interval_rejects_bad_arguments():
    with pytest.raises(ValueError, match="population"):
        mean_interval(SAMPLE, population=len(SAMPLE) - 1)
    with pytest.raises(ValueError, match="confidence"):
        mean_interval(SAMPLE, confidence=95)


# --- Proportion ----------------------------------------------------------------------------------
def test_wilson_interval_by_hand():
    # 8 of 10, z = 1.959964: centre (0.8 + 0.19207)/1.38415 = 0.71674,
    # half-width 1.959964 · √(0.016 + 0.0096036)/1.38415 = 0.22658 → [0.4902, 0.9433]
    interval = proportion_interval(8, 10)
    assert interval.mean == 0.8
    assert (interval.low, interval.high) == pytest.approx((0.4902, 0.9433), abs=5e-5)


@pytest.mark.parametrize(("successes", "n"), [(8, 10), (0, 7), (7, 7), (1, 1), (13, 40), (199, 200)])
@pytest.mark.parametrize("confidence", [0.90, 0.95, 0.99])
def test_wilson_interval_matches_scipy(successes, n, confidence):
    expected = stats.binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    interval = proportion_interval(successes, n, confidence=confidence)
    assert (interval.low, interval.high) == pytest.approx((expected.low, expected.high), abs=1e-12)


def test_wilson_interval_with_population_is_wilson_at_the_effective_sample_size():
    # n = 10 of N = 19: FPC² = (19 − 10)/18 = 1/2, so n_eff = n/FPC² = 20 and 8 of 10 acts as 16 of 20
    interval = proportion_interval(8, 10, population=19)
    expected = stats.binomtest(16, 20).proportion_ci(method="wilson")
    assert (interval.low, interval.high) == pytest.approx((expected.low, expected.high), abs=1e-12)
    assert interval.mean == 0.8 and interval.n == 10


@pytest.mark.parametrize(("successes", "n", "population"), [(8, 10, 50), (3, 30, 31), (57, 120, 4_000)])
def test_wilson_interval_with_population_scales_z_by_the_fpc(successes, n, population):
    # z' = z·FPC is the z of a lower confidence c' = 2Φ(z·FPC) − 1: the same interval without a population
    z = stats.norm.ppf(0.975)
    fpc = math.sqrt((population - n) / (population - 1))
    scaled = stats.binomtest(successes, n).proportion_ci(
        confidence_level=2 * stats.norm.cdf(z * fpc) - 1, method="wilson"
    )
    interval = proportion_interval(successes, n, population=population)
    assert (interval.low, interval.high) == pytest.approx((scaled.low, scaled.high), abs=1e-12)
    assert width(interval) < width(proportion_interval(successes, n))


def test_wilson_interval_of_the_whole_population_has_zero_width():
    assert proportion_interval(8, 10, population=10) == Interval(0.8, 0.8, 0.8, 10)


def test_wilson_interval_bounds_and_empty_sample():
    assert proportion_interval(0, 12).low == 0.0
    assert proportion_interval(12, 12).high == 1.0
    assert proportion_interval(0, 0) == Interval(None, None, None, 0)
    assert proportion_interval(0, 0, population=100) == Interval(None, None, None, 0)


def test_wilson_interval_rejects_bad_arguments():
    with pytest.raises(ValueError, match="successes"):
        proportion_interval(11, 10)
    with pytest.raises(ValueError, match="successes"):
        proportion_interval(-1, 10)
    with pytest.raises(ValueError, match="population"):
        proportion_interval(5, 10, population=9)
    with pytest.raises(ValueError, match="confidence"):
        proportion_interval(5, 10, confidence=1.0)


def test_interval_to_json():
    assert proportion_interval(0, 0).to_json() == {"mean": None, "low": None, "high": None, "n": 0}


# The one percentile bootstrap: its two steps, and bootstrap_interval built on them.


def test_percentile_interval_by_hand():
    # θ*_b = 1..100; at c = 0.9 the 0.05 and 0.95 quantiles with linear interpolation between
    # order statistics sit at positions 0.05 · 99 = 4.95 and 0.95 · 99 = 94.05 (0-based):
    # 5 + 0.95 · (6 − 5) = 5.95 and 95 + 0.05 · (96 − 95) = 95.05.
    interval = percentile_interval(50.0, np.arange(1, 101), n=10, confidence=0.9)
    assert interval == Interval(50.0, pytest.approx(5.95), pytest.approx(95.05), 10)
    assert percentile_interval(50.0, np.arange(1, 101), n=1) == Interval(50.0, None, None, 1)  # one row: no spread
    assert percentile_interval(0.5, np.array([]), n=0) == Interval(0.5, None, None, 0)
    with pytest.raises(ValueError, match="confidence"):
        percentile_interval(0.5, np.arange(10), n=10, confidence=1.0)


@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.5])
def test_bootstrap_interval_is_scipys_percentile_bootstrap_to_the_last_digit(confidence):
    values = np.random.default_rng(7).exponential(size=43)
    reference = stats.bootstrap(
        (values,),
        np.mean,
        confidence_level=confidence,
        n_resamples=500,
        method="percentile",
        rng=np.random.default_rng(11),
    ).confidence_interval
    interval = bootstrap_interval(values, confidence=confidence, resamples=500, seed=11)
    assert (interval.low, interval.high) == (reference.low, reference.high)
    assert interval.mean == pytest.approx(values.mean()) and interval.n == 43


def test_resample_weights_draw_every_row_n_times_per_resample_and_pair_statistics():
    weights = resample_weights(6, 400, seed=2)
    assert weights.shape == (400, 6) and (weights.sum(axis=1) == 6).all()
    assert (weights == resample_weights(6, 400, seed=2)).all() and (weights != resample_weights(6, 400, seed=3)).any()
    # Each row is drawn 1 time per resample on average (binomial(6, 1/6)).
    assert weights.mean(axis=0) == pytest.approx(np.ones(6), abs=0.15)
    assert resample_weights(0, 5, seed=0).shape == (5, 0)
    # Weighted means over the shared weights: the mean's bootstrap distribution, resample by resample.
    values = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    means = weights @ values / 6
    interval = percentile_interval(float(values.mean()), means, n=6)
    assert interval.low < values.mean() < interval.high
