"""Agreement between judges: Fleiss' kappa, Krippendorff's nominal alpha, score correlations.

Checked against published worked examples (Wikipedia's Fleiss' kappa table; Fleiss's own 1971
data with the value R's irr package gives; the nominal examples of Krippendorff, 2011), against
the values the fast-krippendorff reference package asserts in its tests, against statsmodels when
it is installed, against scipy.stats for the correlations, and against hand-worked small cases.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from benchsmith.evals.measures.agreement import (
    JudgePair,
    cohen_kappa,
    common_items,
    fleiss_kappa,
    item_agreement,
    krippendorff_alpha_nominal,
    pairwise_score_correlations,
    score_correlations,
)


def ratings_from_counts(counts: list[list[int]], categories: list[str]) -> list[list[str]]:
    """One row of ratings per item from its row of category counts n_ij."""
    return [[category for category, count in zip(categories, row) for _ in range(count)] for row in counts]


# --- Fleiss' kappa ---------------------------------------------------------------------------
# Wikipedia, "Fleiss' kappa", worked example: 10 items, 14 raters each, 5 categories. (The page's
# own illustration; Fleiss's 1971 example is the psychiatric data below.) Published per-item P_i,
# P̄ = 0.378, P̄_e = 0.213, κ = 0.210; column shares p_j = 0.143 0.200 0.279 0.150 0.229.
WIKIPEDIA_COUNTS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]
WIKIPEDIA_P_I = [1.000, 0.253, 0.308, 0.440, 0.330, 0.462, 0.242, 0.176, 0.286, 0.286]
WIKIPEDIA_CATEGORIES = ["doc-1", "doc-2", "doc-3", "doc-4", "doc-5"]  # categories may be any hashable, e.g. doc ids
WIKIPEDIA = ratings_from_counts(WIKIPEDIA_COUNTS, WIKIPEDIA_CATEGORIES)

# Fleiss (1971), Table 1: psychiatric diagnoses of 30 patients by 6 psychiatrists (not the same six
# for every patient), categories 1 depression, 2 personality disorder, 3 schizophrenia, 4 neurosis,
# 5 other; as R's irr package ships it (`diagnoses`), each row's diagnoses sorted. Fleiss reports
# κ = .430; irr::kappam.fleiss(diagnoses) gives 0.4302445 (quoted in statsmodels' test suite).
FLEISS_1971 = [
    [4, 4, 4, 4, 4, 4],
    [2, 2, 2, 5, 5, 5],
    [2, 3, 3, 3, 3, 5],
    [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4],
    [1, 1, 3, 3, 3, 3],
    [3, 3, 3, 3, 5, 5],
    [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4],
    [5, 5, 5, 5, 5, 5],
    [1, 4, 4, 4, 4, 4],
    [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3],
    [1, 4, 4, 4, 4, 4],
    [2, 2, 4, 4, 4, 5],
    [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5],
    [1, 1, 1, 1, 1, 2],
    [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5],
    [2, 4, 4, 4, 4, 4],
    [2, 2, 4, 5, 5, 5],
    [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5],
    [2, 2, 2, 2, 2, 4],
    [1, 1, 1, 1, 5, 5],
    [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3],
    [5, 5, 5, 5, 5, 5],
]


def test_fleiss_kappa_reproduces_the_wikipedia_worked_example():
    per_item = item_agreement(WIKIPEDIA)
    assert per_item == pytest.approx(WIKIPEDIA_P_I, abs=5e-4)
    p_bar = float(np.mean(per_item))
    assert p_bar == pytest.approx(0.378, abs=5e-4)
    kappa = fleiss_kappa(WIKIPEDIA)
    assert kappa == pytest.approx(0.210, abs=5e-4)
    # κ = (P̄ − P̄_e)/(1 − P̄_e), so the chance agreement implied by κ and P̄ is the published 0.213
    assert (p_bar - kappa) / (1 - kappa) == pytest.approx(0.213, abs=5e-4)
    shares = Counter(rating for item in WIKIPEDIA for rating in item)
    assert [shares[c] / 140 for c in WIKIPEDIA_CATEGORIES] == pytest.approx(
        [0.143, 0.200, 0.279, 0.150, 0.229], abs=5e-4
    )


def test_fleiss_kappa_reproduces_fleiss_1971_table_1():
    assert Counter(d for row in FLEISS_1971 for d in row) == {1: 26, 2: 26, 3: 30, 4: 55, 5: 43}  # transcription
    assert fleiss_kappa(FLEISS_1971) == pytest.approx(0.4302445, abs=5e-8)


def test_fleiss_kappa_on_a_hand_worked_example():
    # P_i = 1, 1/3, 1, 1/3 → P̄ = 2/3; p_gold = p_other = 6/12 → P̄_e = 1/2; κ = (2/3 − 1/2)/(1/2) = 1/3
    ratings = [
        ["gold", "gold", "gold"],
        ["gold", "gold", "other"],
        ["other", "other", "other"],
        ["gold", "other", "other"],
    ]
    assert item_agreement(ratings) == pytest.approx([1, 1 / 3, 1, 1 / 3])
    assert fleiss_kappa(ratings) == pytest.approx(1 / 3)


def test_fleiss_kappa_ignores_labels_and_rater_order():
    relabeled = [
        [{"doc-1": "x", "doc-2": 2, "doc-3": ("t", 3), "doc-4": 4.5, "doc-5": frozenset({5})}[r] for r in item]
        for item in WIKIPEDIA
    ]
    shuffled = [list(reversed(item)) for item in WIKIPEDIA]
    assert fleiss_kappa(relabeled) == pytest.approx(fleiss_kappa(WIKIPEDIA))
    assert fleiss_kappa(shuffled) == pytest.approx(fleiss_kappa(WIKIPEDIA))


def test_fleiss_kappa_perfect_and_undefined():
    assert fleiss_kappa([["a", "a"], ["b", "b"], ["a", "a"]]) == pytest.approx(1.0)
    assert fleiss_kappa([["gold"] * 3] * 4) is None  # every rating identical: P̄_e = 1
    assert fleiss_kappa([["gold"], ["other"]]) is None  # one rater
    assert fleiss_kappa([]) is None


def test_fleiss_kappa_rejects_unequal_or_missing_ratings():
    with pytest.raises(ValueError, match="same number of raters"):
        fleiss_kappa([["a", "b"], ["a", "b", "a"]])
    with pytest.raises(ValueError, match="krippendorff"):
        fleiss_kappa([["a", None], ["a", "b"]])


# --- Krippendorff's alpha, nominal -------------------------------------------------------------
# Krippendorff (2011), "nominal data, any number of observers, missing data": 4 coders (A–D) ×
# 12 units, values 1–5, None where the paper has "."; α = 0.743.
KRIPPENDORFF_CODERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],  # A
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],  # B
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],  # C
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],  # D
]
KRIPPENDORFF_UNITS = [list(unit) for unit in zip(*KRIPPENDORFF_CODERS)]


def test_krippendorff_alpha_reproduces_the_2011_nominal_example():
    assert krippendorff_alpha_nominal(KRIPPENDORFF_UNITS) == pytest.approx(0.743, abs=5e-4)
    # unit 12 has one value (B's 3): not pairable, so it cannot change alpha
    assert krippendorff_alpha_nominal(KRIPPENDORFF_UNITS[:11]) == krippendorff_alpha_nominal(KRIPPENDORFF_UNITS)


def test_krippendorff_alpha_reproduces_the_2011_binary_example():
    # Krippendorff (2011), "binary data, two observers, no missing data": o_01 = o_10 = 4,
    # n_0 = 14, n_1 = 6, n = 20, α = 1 − 19·8/(2·14·6) = 0.095
    first = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    second = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    assert krippendorff_alpha_nominal(list(zip(first, second))) == pytest.approx(1 - 19 * 8 / (2 * 14 * 6))
    assert krippendorff_alpha_nominal(list(zip(first, second))) == pytest.approx(0.095, abs=5e-4)


def test_krippendorff_alpha_matches_the_reference_package_values():
    # The values fast-krippendorff (pln-fing-udelar/fast-krippendorff, tests/test_krippendorff.py)
    # asserts; its data are coders × units with NaN for missing, transposed here to units × coders.
    nan = float("nan")
    coders = [
        [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
        [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
        [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
    ]
    assert round(krippendorff_alpha_nominal(list(zip(*coders))), 6) == 0.691358
    labels = [["pos", "neg", "neu", None], ["pos", "neg", "neu", "pos"], ["pos", "neg", "pos", "pos"]]
    assert round(krippendorff_alpha_nominal(list(zip(*labels))), 6) == 0.722222


@pytest.mark.parametrize("ratings", [WIKIPEDIA, FLEISS_1971], ids=["wikipedia", "fleiss-1971"])
def test_krippendorff_alpha_on_complete_data_is_fleiss_kappa_with_a_small_sample_correction(ratings):
    # Without missing data, n raters × N items: 1 − α = (1 − 1/(nN)) (1 − κ), which follows from
    # Σ_{c≠k} o_ck = nN(1 − P̄) and Σ_{c≠k} n_c n_k = (nN)²(1 − P̄_e).
    total = len(ratings) * len(ratings[0])
    assert 1 - krippendorff_alpha_nominal(ratings) == pytest.approx((1 - 1 / total) * (1 - fleiss_kappa(ratings)))


def test_krippendorff_alpha_perfect_and_undefined():
    assert krippendorff_alpha_nominal([["a", "a", None], ["b", "b", "b"], [None, "c", "c"]]) == pytest.approx(1.0)
    assert krippendorff_alpha_nominal([["a", "a"], ["a", None, "a"]]) is None  # one value: no variation
    assert krippendorff_alpha_nominal([["a", None], [None, "b"]]) is None  # no unit with 2 values
    assert krippendorff_alpha_nominal([]) is None


# --- Cohen's kappa -------------------------------------------------------------------------------
# Wikipedia, "Cohen's kappa", worked example: 50 grant proposals read by A and B; both yes 20,
# A yes B no 5, A no B yes 10, both no 15. p_o = 35/50 = 0.7, A says yes on 25/50 and B on 30/50,
# p_e = 0.5·0.6 + 0.5·0.4 = 0.5, κ = (0.7 − 0.5)/(1 − 0.5) = 0.4.
COHEN_PAIRS = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15


def test_cohen_kappa_reproduces_the_wikipedia_worked_example():
    first, second = zip(*COHEN_PAIRS)
    assert math.isclose(cohen_kappa(first, second), 0.4)


def test_cohen_kappa_on_a_hand_worked_three_category_example():
    # Items 1, 2, 4 and 6 agree: p_o = 4/6. Shares, a: x 3, y 2, z 1; b: x 3, y 2, z 1;
    # p_e = (3·3 + 2·2 + 1·1)/36 = 14/36; κ = (24/36 − 14/36)/(22/36) = 5/11.
    first = ["x", "x", "x", "y", "y", "z"]
    second = ["x", "x", "y", "y", "x", "z"]
    assert math.isclose(cohen_kappa(first, second), 5 / 11)


def test_cohen_kappa_perfect_chance_and_undefined():
    labels = [1, 0, 1, 1, 0, 0]
    assert cohen_kappa(labels, list(labels)) == 1.0
    assert cohen_kappa(labels, [1 - label for label in labels]) == -1.0
    assert cohen_kappa([1, 1, 0, 0], [1, 0, 1, 0]) == 0.0  # p_o = p_e = 0.5
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) is None  # p_e = 1: nothing varies
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError):
        cohen_kappa([1, 0], [1])
    with pytest.raises(ValueError):
        cohen_kappa([1, None], [1, 0])


def test_cohen_kappa_with_two_raters_is_close_to_krippendorff_alpha():
    # Krippendorff (2011): for two coders and complete nominal data, α = 1 − (n − 1)(1 − p_o)/(n − Σ n_c²/n)
    # differs from κ only by pooling the two raters' shares and a small-sample factor.
    first, second = zip(*COHEN_PAIRS)
    alpha = krippendorff_alpha_nominal([[a, b] for a, b in COHEN_PAIRS])
    pooled = Counter(first) + Counter(second)
    n = 2 * len(COHEN_PAIRS)
    p_o = sum(a == b for a, b in COHEN_PAIRS) / len(COHEN_PAIRS)
    assert math.isclose(alpha, 1 - (n - 1) * (1 - p_o) / (n - sum(c * c for c in pooled.values()) / n))
    assert abs(alpha - cohen_kappa(first, second)) < 0.02


# --- Score correlations --------------------------------------------------------------------------
SCORES = {
    "judge-a": {"q1": 0.9, "q2": 0.1, "q3": 0.5, "q4": 0.7, "q5": 0.3, "q6": 0.8, "only-a": 0.0},
    "judge-b": {"q1": 0.8, "q2": 0.3, "q3": 0.4, "q4": 0.9, "q5": 0.2, "q6": 0.6},
    "judge-c": {"q1": 0.5, "q2": 0.2, "q3": 0.9, "q4": 0.6, "q5": 0.1, "q6": 0.7, "only-c": 1.0},
}


def test_score_correlations_match_scipy():
    items = ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert common_items(SCORES) == items
    vectors = {judge: [SCORES[judge][item] for item in items] for judge in SCORES}
    pairs = list(itertools.combinations(SCORES, 2))
    pearson = [stats.pearsonr(vectors[a], vectors[b]).statistic for a, b in pairs]
    spearman = [stats.spearmanr(vectors[a], vectors[b]).statistic for a, b in pairs]
    assert pairwise_score_correlations(SCORES) == [
        JudgePair(a, b, pytest.approx(r), pytest.approx(rho)) for (a, b), r, rho in zip(pairs, pearson, spearman)
    ]
    result = score_correlations(SCORES)
    assert result == {
        "pearson": pytest.approx(np.mean(pearson)),
        "spearman": pytest.approx(np.mean(spearman)),
        "pairs": 3,
        "items": 6,
    }


def test_score_correlations_of_a_constant_judge_are_none_without_warnings():
    scores = {**SCORES, "constant": {item: 1.0 for item in SCORES["judge-b"]}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = score_correlations(scores)
        pairs = pairwise_score_correlations(scores)
    assert result == {"pearson": None, "spearman": None, "pairs": 6, "items": 6}
    assert [(p.pearson is None, p.spearman is None) for p in pairs if "constant" in (p.first, p.second)] == [
        (True, True)
    ] * 3
    assert all(p.pearson is not None and p.spearman is not None for p in pairs if "constant" not in (p.first, p.second))


def test_score_correlations_need_three_common_items_and_two_judges():
    two_items = {"a": {"q1": 1.0, "q2": 2.0, "q3": 3.0}, "b": {"q1": 2.0, "q2": 1.0}}
    assert score_correlations(two_items) == {"pearson": None, "spearman": None, "pairs": 1, "items": 2}
    assert score_correlations({"a": {"q1": 1.0}}) == {"pearson": None, "spearman": None, "pairs": 0, "items": 1}
    assert score_correlations({}) == {"pearson": None, "spearman": None, "pairs": 0, "items": 0}


def test_score_correlations_of_identical_and_reversed_judges():
    forward = {f"q{i}": float(i) for i in range(5)}
    result = score_correlations({"a": forward, "b": dict(forward), "c": {k: -v for k, v in forward.items()}})
    # pairs (a, b) = 1, (a, c) = −1, (b, c) = −1
    assert math.isclose(result["pearson"], -1 / 3) and math.isclose(result["spearman"], -1 / 3)
