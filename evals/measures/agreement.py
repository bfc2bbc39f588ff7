"""Agreement between the LLM judges of a benchmark audit.

* Fleiss' kappa (Fleiss, 1971, "Measuring nominal scale agreement among many raters",
  Psychological Bulletin 76(5):378–382): chance-corrected agreement of a fixed number of raters
  per item on a nominal scale; every rater must rate every item.
* Cohen's kappa (Cohen, 1960, "A coefficient of agreement for nominal scales", Educational and
  Psychological Measurement 20(1):37–46): chance-corrected agreement of exactly two raters who
  rate the same items, each with their own category shares (a judge against human labels).
* Krippendorff's alpha, nominal (Krippendorff, 2011, "Computing Krippendorff's
  Alpha-Reliability", Annenberg School for Communication, University of Pennsylvania): the same
  idea built on a coincidence matrix, so it tolerates missing ratings and any number of raters
  per item.
* Mean pairwise Pearson and Spearman correlation of the judges' numeric scores
  (scipy.stats.pearsonr / spearmanr) over the items that every judge scored.

Per-item (or per-pair) values come first and are aggregated after, so an audit can point at the
contested items as well as report one number. Categories are any hashable values ("gold" /
"other", document ids, grades).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

MIN_CORRELATION_ITEMS = 3  # pearsonr needs 2; with 2 items |r| = 1 always, which says nothing


def item_agreement(ratings: Sequence[Sequence[Hashable]]) -> list[float]:
    """Fleiss' per-item agreement P_i: the proportion of pairs of raters that agree on item i,

        P_i = (Σ_j n_ij² − n) / (n (n − 1)),

    with n_ij the number of raters who put item i in category j and n the raters per item
    (Fleiss, 1971). 1 when all raters agree; its mean over items is the P̄ of Fleiss' kappa.
    Needs at least 2 raters per item, the same number on every item."""
    raters = _raters_per_item(ratings)
    if ratings and raters < 2:
        raise ValueError("agreement between raters needs at least 2 raters per item")
    result: list[float] = _item_agreement(_category_counts(ratings), raters).tolist()
    return result


def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> float | None:
    """Fleiss' kappa (Fleiss, 1971). ``ratings[i]``: the categories the raters gave item i, the same
    number of raters n on each of the N items (no missing ratings: use
    :func:`krippendorff_alpha_nominal` for those). With n_ij the count of category j on item i,

        P_i = (Σ_j n_ij² − n) / (n (n − 1)),   P̄ = (1/N) Σ_i P_i,
        p_j = Σ_i n_ij / (N n),               P̄_e = Σ_j p_j²,
        κ = (P̄ − P̄_e) / (1 − P̄_e).

    None when undefined: no items, fewer than 2 raters, or P̄_e = 1, which happens exactly when
    every rating is the same category. Agreement is then perfect (P̄ = 1) but chance-corrected
    agreement is 0/0: no variation was observed, so nothing distinguishes agreement from chance;
    returning 1 would credit raters who cannot disagree.
    """
    raters = _raters_per_item(ratings)
    if not ratings or raters < 2:
        return None
    counts = _category_counts(ratings)
    if counts.shape[1] == 1:  # one category in all: P̄_e = 1 (tested on counts, not on a rounded float)
        return None
    observed = float(_item_agreement(counts, raters).mean())  # P̄
    shares = counts.sum(axis=0) / counts.sum()  # p_j
    chance = float((shares**2).sum())  # P̄_e
    return (observed - chance) / (1.0 - chance)


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> float | None:
    """Cohen's kappa (Cohen, 1960) between two raters who rated the same N items:
    ``first[i]`` and ``second[i]`` are their categories for item i. With a_i = [first_i = second_i]
    (per item), p_1k and p_2k the shares of items each rater put in category k,

        p_o = (1/N) Σ_i a_i,   p_e = Σ_k p_1k p_2k,   κ = (p_o − p_e) / (1 − p_e).

    Unlike Fleiss' kappa, chance agreement p_e uses each rater's own shares. None when undefined:
    no items, or p_e = 1, which happens exactly when both raters put every item in one and the
    same category (nothing varies, so agreement cannot be told apart from chance)."""
    if len(first) != len(second):
        raise ValueError(f"Cohen's kappa needs both raters on the same items, got {len(first)} and {len(second)}")
    if any(_is_missing(value) for value in (*first, *second)):
        raise ValueError("Cohen's kappa needs every rating; use krippendorff_alpha_nominal for missing ones")
    n = len(first)
    if n == 0:
        return None
    agreements = [a == b for a, b in zip(first, second)]  # a_i, per item
    observed = sum(agreements) / n  # p_o
    shares_first, shares_second = Counter(first), Counter(second)
    chance_count = sum(count * shares_second[category] for category, count in shares_first.items())
    if chance_count == n * n:  # p_e = 1, tested on counts rather than a rounded float
        return None
    chance = chance_count / (n * n)  # p_e
    return (observed - chance) / (1.0 - chance)


def krippendorff_alpha_nominal(ratings: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Krippendorff's alpha for nominal data with missing ratings (Krippendorff, 2011, "nominal data,
    any number of observers, missing data").
    ``ratings[u]``: the values the coders gave unit u, None (or a float NaN) where a coder gave
    none. Only the values of a unit enter alpha, not which coder gave them, so rows may differ in
    length. With m_u the number of values in unit u and n_uc the number of them equal to c, units
    with m_u ≥ 2 ("pairable") fill the coincidence matrix

        o_ck = Σ_u n_uc (n_uk − [c = k]) / (m_u − 1),   n_c = Σ_k o_ck,   n = Σ_c n_c,

    and  α = 1 − (n − 1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k.

    None when undefined: no pairable unit, or a single value among all pairable values, where the
    expected disagreement Σ_{c≠k} n_c n_k is 0 and α = 1 − 0/0: the data show no variation for
    agreement to be told apart from chance (as for Fleiss' kappa above).
    """
    units = [[value for value in unit if not _is_missing(value)] for unit in ratings]
    pairable = [unit for unit in units if len(unit) >= 2]
    categories = _categories(pairable)
    if len(categories) < 2:
        return None
    index = {category: position for position, category in enumerate(categories)}
    coincidences = np.zeros((len(categories), len(categories)))
    for unit in pairable:  # each unit's pairs, weighted 1/(m_u − 1) so a unit contributes m_u values in all
        counts = np.zeros(len(categories))
        for value, count in Counter(unit).items():
            counts[index[value]] = count
        coincidences += (np.outer(counts, counts) - np.diag(counts)) / (len(unit) - 1)
    marginals = coincidences.sum(axis=1)  # n_c
    total = marginals.sum()  # n
    observed = coincidences.sum() - np.trace(coincidences)  # Σ_{c≠k} o_ck
    expected = marginals.sum() ** 2 - (marginals**2).sum()  # Σ_{c≠k} n_c n_k
    return float(1.0 - (total - 1.0) * observed / expected)


@dataclass(frozen=True)
class JudgePair:
    first: str
    second: str
    pearson: float | None  # None when undefined (too few items, or a judge's scores constant)
    spearman: float | None


def pairwise_score_correlations(scores: Mapping[str, Mapping[str, float]]) -> list[JudgePair]:
    """Pearson's r and Spearman's ρ (scipy.stats.pearsonr / spearmanr) for every pair of judges, in
    the order of ``scores``, over the items every judge scored (:func:`common_items`).
    ``scores[judge][item]``: the judge's score. A coefficient is None where it is undefined: fewer
    than 3 common items, or either judge's scores constant on them (scipy returns NaN there)."""
    judges = list(scores)
    items = common_items(scores)
    vectors = {judge: np.array([scores[judge][item] for item in items], dtype=float) for judge in judges}
    return [
        JudgePair(first, second, *_correlations(vectors[first], vectors[second]))
        for first, second in itertools.combinations(judges, 2)
    ]


def score_correlations(scores: Mapping[str, Mapping[str, float]]) -> dict[str, float | None]:
    """``{"pearson": r̄, "spearman": ρ̄, "pairs": judge pairs, "items": common items}``: the plain
    mean over judge pairs of :func:`pairwise_score_correlations` (r̄ = (1/P) Σ_pairs r). A mean is
    None when there is no pair or any pair's coefficient is undefined, rather than a mean over the
    defined pairs only, which would silently drop the judge that failed to discriminate."""
    pairs = pairwise_score_correlations(scores)
    return {
        "pearson": _mean_or_none([pair.pearson for pair in pairs]),
        "spearman": _mean_or_none([pair.spearman for pair in pairs]),
        "pairs": len(pairs),
        "items": len(common_items(scores)),
    }


def common_items(scores: Mapping[str, Mapping[str, float]]) -> list[str]:
    """The items every judge scored, sorted (empty without judges)."""
    item_sets = [set(by_item) for by_item in scores.values()]
    return sorted(set.intersection(*item_sets)) if item_sets else []


def _correlations(first: np.ndarray, second: np.ndarray) -> tuple[float | None, float | None]:
    if len(first) < MIN_CORRELATION_ITEMS or np.ptp(first) == 0 or np.ptp(second) == 0:
        return None, None
    with warnings.catch_warnings():  # near-constant input: scipy may still warn and return NaN
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        pearson = float(stats.pearsonr(first, second).statistic)
        spearman = float(stats.spearmanr(first, second).statistic)
    return (None if math.isnan(pearson) else pearson), (None if math.isnan(spearman) else spearman)


def _mean_or_none(values: Sequence[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    if not values or len(present) < len(values):
        return None
    return float(np.mean(present))


def _item_agreement(counts: np.ndarray, raters: int) -> np.ndarray:
    result: np.ndarray = ((counts**2).sum(axis=1) - raters) / (raters * (raters - 1))
    return result


def _raters_per_item(ratings: Sequence[Sequence[Hashable]]) -> int:
    sizes = {len(item) for item in ratings}
    if len(sizes) > 1:
        raise ValueError(f"every item needs the same number of raters, got {sorted(sizes)}")
    if any(_is_missing(value) for item in ratings for value in item):
        raise ValueError("Fleiss' kappa needs every rating; use krippendorff_alpha_nominal for missing ones")
    return sizes.pop() if sizes else 0


def _category_counts(ratings: Sequence[Sequence[Hashable]]) -> np.ndarray:
    """n_ij: items × categories, categories in order of first appearance."""
    categories = _categories(ratings)
    index = {category: position for position, category in enumerate(categories)}
    counts = np.zeros((len(ratings), len(categories)), dtype=np.int64)
    for row, item in enumerate(ratings):
        for value in item:
            counts[row, index[value]] += 1
    return counts


def _categories(ratings: Sequence[Sequence[Hashable]]) -> list[Hashable]:
    return list(dict.fromkeys(value for item in ratings for value in item))


def _is_missing(value: Hashable | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
