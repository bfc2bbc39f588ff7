"""Whether a set of queries separates two configurations (evals/measures/separability.py): the paired
bootstrap interval of the mean per-query difference on worked examples and constructed cases,
the pairs validate compares, and the verdict's mention of a top pair not separated."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchsmith.evals.measures.intervals import Interval, bootstrap_interval
from benchsmith.evals.measures.separability import Separation, adjacent_pairs, difference_interval, separations
from benchsmith.evals.measures.validity import separation_pairs, top_not_separated, verdict
from benchsmith.evals.reports.validity_report import separability_section


def test_worked_examples_from_the_docstring():
    # d = (1, 2, 3): each end of [1, 3] holds 1/27 of the resamples, above the 2.5% tails: separated.
    spread = difference_interval([1.0, 2.0, 3.0], [0.0, 0.0, 0.0], resamples=1000, seed=0)
    assert (spread.mean, spread.low, spread.high, spread.n) == (2.0, 1.0, 3.0, 3)
    # d = (0, 1): resample means 0, 1/2, 1 with probabilities 1/4, 1/2, 1/4: [0, 1] contains 0.
    close = difference_interval([0.0, 1.0], [0.0, 0.0], resamples=1000, seed=0)
    assert (close.mean, close.low, close.high) == (0.5, 0.0, 1.0)


def test_identical_per_query_scores_are_not_separated_and_far_apart_ones_are():
    rng = np.random.default_rng(3)
    same = rng.random(30)
    found = separations(
        {"a": same, "b": same.copy(), "c": same + 0.5, "d": rng.random(30)},
        [("a", "b", "yours 1–2"), ("c", "a", "yours 2–3"), ("a", "d", "synthetic 1–2")],
        resamples=500,
        seed=1,
    )
    by_pair = {(pair.first, pair.second): pair for pair in found}
    identical = by_pair[("a", "b")]
    assert (identical.difference, identical.low, identical.high) == (0.0, 0.0, 0.0) and not identical.separated
    apart = by_pair[("c", "a")]
    assert apart.difference == pytest.approx(0.5) and apart.low == pytest.approx(0.5) and apart.separated
    noisy = by_pair[("a", "d")]  # two draws of the same distribution: the interval straddles 0
    assert noisy.low < 0 < noisy.high and not noisy.separated
    assert found
    assert all(pair.queries == 30 for pair in found)


def test_the_interval_is_the_shared_percentile_bootstrap_of_the_differences_seeded():
    rng = np.random.default_rng(7)
    first, second = rng.random(25), rng.random(25)
    interval = difference_interval(first, second, resamples=400, seed=5)
    assert interval == bootstrap_interval(first - second, resamples=400, seed=5)
    assert interval == difference_interval(first, second, resamples=400, seed=5)
    assert interval != difference_interval(first, second, resamples=400, seed=6)
    assert difference_interval([0.3], [0.1]).low is None  # one question: no bounds, not separated
    assert not Separation("a", "b", "yours 1–2", 0.2, None, None, 1).separated
    with pytest.raises(ValueError):
        difference_interval([1.0, 2.0], [1.0])


def test_validate_compares_adjacent_pairs_of_the_human_ranking_and_the_synthetic_top_two():
    human = {"bm25": 0.7, "dense": 0.5, "rrf": 0.6, "wsum": 0.6}
    assert adjacent_pairs(human) == [("bm25", "rrf"), ("rrf", "wsum"), ("wsum", "dense")]  # equal means by name
    assert separation_pairs(human, ["dense", "bm25", "rrf", "wsum"]) == [
        ("bm25", "rrf", "yours 1–2"),
        ("rrf", "wsum", "yours 2–3"),
        ("wsum", "dense", "yours 3–4"),
        ("dense", "bm25", "synthetic 1–2"),
    ]
    # The synthetic top two already adjacent on the human ranking: compared once.
    assert len(separation_pairs(human, ["wsum", "rrf", "bm25", "dense"])) == 3


def test_the_verdict_says_when_a_top_pair_is_not_separated():
    human = {"bm25": 0.5, "dense": 0.3, "rrf": 0.4}
    synthetic = {"bm25": 0.7, "dense": 0.5, "rrf": 0.6}
    found = [
        Separation("bm25", "rrf", "yours 1–2", 0.1, -0.02, 0.2, 12),
        Separation("rrf", "dense", "yours 2–3", 0.1, 0.05, 0.15, 12),
    ]
    unseparated = top_not_separated(found, human, ["bm25", "rrf", "dense"])
    assert unseparated == [found[0]]
    said = verdict(human, synthetic, 1.0, Interval(1.0, 0.6, 1.0, 100), unseparated)
    assert said.label == "agrees"
    assert "your 12 questions do not separate your questions' top two, bm25 and rrf" in said.text
    assert "[-0.020, +0.200]" in said.text
    assert "do not separate" not in verdict(human, synthetic, 1.0, Interval(1.0, 0.6, 1.0, 100)).text


def test_the_report_lists_the_pairs_not_separated():
    pairs = [
        Separation("bm25", "rrf", "yours 1–2", 0.1, -0.02, 0.2, 12).to_json(),
        Separation("rrf", "dense", "yours 2–3", 0.1, 0.05, 0.15, 12).to_json(),
    ]
    assert Separation.from_json(json.loads(json.dumps(pairs[0]))).to_json() == pairs[0]
    results = {
        "measure": "nDCG@10",
        "separability": {"queries": 12, "resamples": 100, "seed": 0, "confidence": 0.95, "pairs": pairs},
    }
    section = separability_section(results)
    assert section.blocks[0] == "Not separated by your 12 questions: bm25 and rrf (yours 1–2)."
    assert [row[-1].text for row in section.blocks[2].rows] == ["no", "yes"]
