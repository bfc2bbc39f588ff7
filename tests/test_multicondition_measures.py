"""The MultiConIR measures on small score tables worked out by hand: ties lose, a perfect model
wins everything, a reversed model nothing; and against a line-by-line transcription of the
reference's Task 3 loop on random tables."""

from __future__ import annotations

import numpy as np
import pytest

from benchsmith.evals.measures import multicondition as mc
from benchsmith.evals.measures.intervals import bootstrap_interval

# Three rows, K = 3. Worked by hand:
# k=1: 0.9>0.1 win, 0.7>0.2 win, 0.4<0.5 loss                 → 2/3; diffs 0.8, 0.5, -0.1 → mean 0.4
# k=2: 0.8=0.8 TIE (loss), 0.7>0.3 win, 0.9>0.1 win           → 2/3; diffs 0, 0.4, 0.8    → mean 0.4
# k=3: 0.5<0.6 loss, 0.6=0.6 TIE (loss), 0.2>0.1 win          → 1/3; diffs -0.1, 0, 0.1   → mean 0
POSITIVE = [[0.9, 0.8, 0.5], [0.7, 0.7, 0.6], [0.4, 0.9, 0.2]]
NEGATIVE = [[0.1, 0.8, 0.6], [0.2, 0.3, 0.6], [0.5, 0.1, 0.1]]

# Ladders, N = 3 (columns Positive, HN1, HN2, HN3). Worked by hand:
# row 0 [4,3,2,1]: W W W;  row 1 [4,4,2,3]: tie→L, W, L;  row 2 [1,2,3,4] reversed: L L L
INSTRUCTION = [[4, 3, 2, 1], [4, 4, 2, 3], [1, 2, 3, 4]]
# Descriptive: row 0 W W W (no flip); row 1 [5,4,3,3]: W W tie→L, one flip (pair 1);
# row 2 [4,3,2,1]: W W W, three flips. Change rate 4 / (3 rows × 3 pairs) = 4/9.
DESCRIPTIVE = [[4, 3, 2, 1], [5, 4, 3, 3], [4, 3, 2, 1]]


def test_task1_win_rate_counts_a_tie_as_a_loss():
    assert mc.task1_win_rates(POSITIVE, NEGATIVE) == pytest.approx([2 / 3, 2 / 3, 1 / 3])
    assert mc.task1_wins(POSITIVE, NEGATIVE).tolist() == [[1, 0, 0], [1, 1, 0], [0, 1, 1]]


def test_task1_mean_difference_by_hand():
    assert mc.task1_mean_differences(POSITIVE, NEGATIVE) == pytest.approx([0.4, 0.4, 0.0], abs=1e-12)


def test_perfect_reversed_and_constant_models():
    rng = np.random.default_rng(1)
    negative = rng.uniform(0, 1, size=(20, 10))
    perfect = negative + rng.uniform(0.01, 1, size=negative.shape)
    assert mc.task1_win_rates(perfect, negative) == [1.0] * 10
    assert mc.task1_win_rates(negative, perfect) == [0.0] * 10
    differences = mc.task1_mean_differences(perfect, negative)
    assert differences and all(difference > 0 for difference in differences)
    constant = np.full((20, 10), 0.5)
    assert mc.task1_win_rates(constant, constant) == [0.0] * 10  # every pair tied: no win at all

    ladder = np.sort(rng.uniform(0, 1, size=(20, 11)), axis=1)[:, ::-1]  # strictly decreasing: perfect order
    assert set(mc.monotonicity_win_rates(ladder).values()) == {1.0}
    assert set(mc.monotonicity_win_rates(ladder[:, ::-1]).values()) == {0.0}
    assert set(mc.monotonicity_win_rates(np.ones((20, 11))).values()) == {0.0}
    assert mc.change_rate(ladder, ladder) == 0.0
    assert mc.change_rate(ladder, ladder[:, ::-1]) == 1.0  # every outcome flips


def test_task2_pairs_by_hand_with_the_reference_names():
    rates = mc.monotonicity_win_rates(INSTRUCTION)
    assert list(rates) == ["Positive_vs_HN1", "HN1_vs_HN2", "HN2_vs_HN3"]
    assert rates == pytest.approx({"Positive_vs_HN1": 1 / 3, "HN1_vs_HN2": 2 / 3, "HN2_vs_HN3": 1 / 3})
    assert mc.ladder_pair_names(10)[-1] == "HN9_vs_HN10" and len(mc.ladder_pair_names(10)) == 10


def test_task3_change_rate_by_hand():
    assert mc.change_rate(INSTRUCTION, DESCRIPTIVE) == pytest.approx(4 / 9)
    assert mc.row_flip_rates(INSTRUCTION, DESCRIPTIVE).tolist() == pytest.approx([0, 1 / 3, 1])
    summary = mc.task3_summary(INSTRUCTION, DESCRIPTIVE)
    assert summary["change_rate"]["mean"] == pytest.approx(4 / 9)
    assert summary["pairs"] == pytest.approx({"Positive_vs_HN1": 2 / 3, "HN1_vs_HN2": 1 / 3, "HN2_vs_HN3": 1 / 3})


def reference_change_rate(instruction: list[list[float]], descriptive: list[list[float]]) -> float:
    """task3_format_invariant.py's compute_change_rate, transcribed loop for loop (lists for columns)."""
    count = len(instruction[0]) - 1
    columns = ["Positive", *[f"HN{i}" for i in range(1, count + 1)]]
    inst = {name: [row[i] for row in instruction] for i, name in enumerate(columns)}
    desc = {name: [row[i] for row in descriptive] for i, name in enumerate(columns)}
    total = changed = 0
    for col in ["Positive", *columns[1:-1]]:
        next_col = columns[columns.index(col) + 1]
        inst_comparison = [a > b for a, b in zip(inst[col], inst[next_col])]
        desc_comparison = [a > b for a, b in zip(desc[col], desc[next_col])]
        changed += sum(a != b for a, b in zip(inst_comparison, desc_comparison))
        total += len(instruction)
    return changed / total


def test_change_rate_matches_the_reference_loop_on_random_tables_with_ties():
    rng = np.random.default_rng(7)
    for _ in range(20):
        instruction = rng.integers(0, 4, size=(15, 11)).astype(float)  # small integers: many ties
        descriptive = rng.integers(0, 4, size=(15, 11)).astype(float)
        assert mc.change_rate(instruction, descriptive) == pytest.approx(
            reference_change_rate(instruction.tolist(), descriptive.tolist())
        )


def test_reference_json_has_exactly_the_reference_keys():
    result = mc.reference_json(task1=(POSITIVE, NEGATIVE), task2=INSTRUCTION, task3=(INSTRUCTION, DESCRIPTIVE))
    assert set(result) == {"task1", "task2", "task3"}
    assert set(result["task1"]) == {"win_rate", "avg_diff"} and list(result["task1"]["win_rate"]) == ["1", "2", "3"]
    assert list(result["task2"]) == ["pairs"] and list(result["task3"]) == ["change_rate"]
    assert mc.reference_json(task2=INSTRUCTION) == {"task2": {"pairs": mc.monotonicity_win_rates(INSTRUCTION)}}


def test_summaries_put_bootstrap_intervals_around_every_rate():
    rng = np.random.default_rng(3)
    positive, negative = rng.normal(size=(40, 5)), rng.normal(size=(40, 5))
    summary = mc.task1_summary(positive, negative)
    for k, interval in summary["win_rate"].items():
        assert interval["low"] <= interval["mean"] <= interval["high"] and interval["n"] == 40
        assert interval["mean"] == pytest.approx(mc.task1_win_rates(positive, negative)[int(k) - 1])
    assert summary["win_rate"] == mc.task1_summary(positive, negative)["win_rate"]  # seeded: reproducible


def test_worst_cells_name_the_row_and_k_that_fooled_the_scorer():
    # Row 0 loses at k=3 by 0.1 (and ties at k=2: its worst k counts); row 1 ties at k=3; row 2 loses at k=1 by 0.1.
    assert mc.worst_task1_cells(POSITIVE, NEGATIVE, 5) == [
        (0, 3, pytest.approx(0.1)),
        (2, 1, pytest.approx(0.1)),
        (1, 3, pytest.approx(0.0)),
    ]
    assert mc.worst_ladder_cells(INSTRUCTION, 2) == [(1, 2, 1.0), (2, 0, 1.0)]


def test_bad_tables_are_refused():
    with pytest.raises(ValueError, match="NaN"):
        mc.task1_win_rates([[1.0, float("nan")]], [[0.0, 0.0]])
    with pytest.raises(ValueError, match="shapes"):
        mc.task1_win_rates([[1.0, 2.0]], [[0.0]])


def test_bootstrap_interval():
    assert bootstrap_interval([1, 1, 1, 1]).to_json() == {"mean": 1.0, "low": 1.0, "high": 1.0, "n": 4}
    assert bootstrap_interval([0.5]).low is None and bootstrap_interval([]).mean is None
    values = np.random.default_rng(0).normal(10, 2, size=200)
    interval = bootstrap_interval(values)
    # For a sample mean the bootstrap interval is close to the t interval ±1.97·s/√n.
    half = 1.97 * values.std(ddof=1) / np.sqrt(len(values))
    assert interval.low == pytest.approx(values.mean() - half, abs=0.1)
    assert interval.high == pytest.approx(values.mean() + half, abs=0.1)
    assert bootstrap_interval(values, seed=1).low != interval.low  # the seed is used


def test_tie_rates_by_hand():
    # k=2 ties in row 0, k=3 in row 1: one row of three each.
    assert mc.task1_tie_rates(POSITIVE, NEGATIVE) == pytest.approx([0.0, 1 / 3, 1 / 3])
    assert mc.task1_summary(POSITIVE, NEGATIVE)["tie_rate"] == pytest.approx({"1": 0.0, "2": 1 / 3, "3": 1 / 3})
