"""benchmarks/calibrated_judge_threshold.py: a rule is chosen by how it transfers to a corpus its
threshold was not chosen on, and a run over a test-half corpus is refused."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def script():
    import sys

    sys.path.insert(0, str(BENCHMARKS))  # the script imports its folder's corpus kit, as when run from there
    try:
        spec = importlib.util.spec_from_file_location(
            "calibrated_judge_threshold", BENCHMARKS / "calibrated_judge_threshold.py"
        )
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclass resolves annotations through it
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(BENCHMARKS))
        sys.modules.pop("calibrated_judge_threshold", None)


def corpus(script, name, window, similarity):
    """Four gold pairs then four non-gold ones, over four questions, with these L and D (B is 0.5)."""
    human = np.array([True] * 4 + [False] * 4)
    questions = np.array([f"q{index % 4}" for index in range(8)])
    sentence = np.full(8, 0.5)
    return script.JudgedPairs(name, human, questions, [False] * 8, np.array(window), np.array(similarity), sentence)


def test_the_rule_whose_threshold_transfers_is_chosen_over_one_that_fits_each_corpus_apart(script):
    # L separates each corpus's gold perfectly but at 0.6 on a and 0.3 on b; D misses one gold on
    # each, at the same 0.6 on both.
    dense = [0.6, 0.6, 0.6, 0.4] + [0.4] * 4
    a = corpus(script, "a", [0.6, 0.7, 0.8, 0.9, 0.1, 0.2, 0.35, 0.4], dense)
    b = corpus(script, "b", [0.3, 0.4, 0.45, 0.5, 0.0, 0.05, 0.1, 0.2], dense)
    rules = {"L": lambda lexical, whole, sentence: lexical, "D": lambda lexical, whole, sentence: whole}
    held_out = script.leave_one_corpus_out([a, b], rules)
    # L chosen on b (0.3) also calls two of a's non-gold relevant; chosen on a (0.6), none of b's gold.
    assert held_out["L"] == [(pytest.approx(0.3), pytest.approx(0.5)), (pytest.approx(0.6), pytest.approx(0.0))]
    assert held_out["D"] == [(pytest.approx(0.6), pytest.approx(0.75))] * 2
    assert script.worst_held_out(held_out["L"]) == (1, pytest.approx(0.0))
    assert script.transferring_rule(held_out) == "D"


def test_a_gain_within_the_noise_of_few_questions_has_an_interval_that_reaches_zero(script):
    pairs = corpus(script, "a", [0.6, 0.7, 0.8, 0.9, 0.1, 0.2, 0.35, 0.4], [0.5] * 8)
    perfect = pairs.window >= 0.5
    one_more_wrong = pairs.window >= 0.4
    gain, low, high = script.gain_interval(pairs, perfect, one_more_wrong, resamples=200)
    assert gain == pytest.approx(1.0 - 0.75)
    # The one wrong verdict is question q3's: resamples without it gain nothing.
    assert low == pytest.approx(0.0) and low <= gain <= high
    same = script.gain_interval(pairs, perfect, perfect, resamples=50)
    assert same == (0.0, 0.0, 0.0)


def test_a_run_over_a_test_half_corpus_stops_the_script(script, tmp_path, capsys):
    runs = tmp_path / "runs"
    for name, collection in (("flask-bench", "flask"), ("werkzeug-bench", "werkzeug")):
        (runs / name).mkdir(parents=True)
        (runs / name / "run.json").write_text(json.dumps({"config": {"collection": collection}}))
    for name, synthetic in (("judge-flask", "flask-bench"), ("judge-werkzeug", "werkzeug-bench")):
        (runs / name).mkdir()
        (runs / name / "run.json").write_text(json.dumps({"config": {"synthetic": synthetic}}))
    assert script.development_corpus(runs / "judge-werkzeug") == "werkzeug"
    with pytest.raises(SystemExit) as stopped:
        script.development_corpus(runs / "judge-flask")
    assert stopped.value.code == 2
    assert "judge-flask: flask is a test-half corpus" in capsys.readouterr().err
