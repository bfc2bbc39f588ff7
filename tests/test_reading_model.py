"""The quality gate's reading model: its trees evaluated as scikit-learn evaluates them, the shipped
fit made from the development half's readings only, and the gate asking it only where it was fitted."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.utils.class_weight import compute_sample_weight

from benchsmith.evals.quality_gate import TurnEvidence, judge_turn
from benchsmith.evals.quality_gate.reading_model import (
    MODELLED_TURN_TYPES,
    ReadingModel,
    trained_reading_model,
    turn_features,
)
from benchsmith.stores.persistence.workspace import Workspace
from tests.embedders import HashingEmbedder
from tests.ingest_fixtures import ingest, write_corpus

READINGS = Path(__file__).resolve().parent.parent / "data" / "readings"
TEST_HALF = {json.loads(line)["corpus"] for path in (READINGS / "test").glob("*.jsonl") for line in path.open()}
# A question scoped by a section title that names no entry, with a reply the rules let pass.
SCOPED = TurnEvidence(
    "In List of Builtin Filters, what happens if I specify no test?",
    "If no test is specified, each object will be evaluated as a boolean.",
    gold=[
        (
            "Template Designer Documentation › List of Builtin Filters",
            "reject(value, *args) Filters a sequence of objects by applying a test to each object, and rejecting "
            "the objects with the test succeeding. If no test is specified, each object will be evaluated as a boolean.",
        )
    ],
)


def test_the_gates_evaluation_of_the_trees_gives_scikit_learns_probabilities():
    generator = np.random.default_rng(7)
    matrix = generator.normal(size=(400, 5))
    labels = (matrix[:, 0] + matrix[:, 1] * matrix[:, 2] + generator.normal(scale=0.5, size=400)) > 0.8
    model = GradientBoostingClassifier(max_depth=2, n_estimators=40, learning_rate=0.1, random_state=0)
    model.fit(matrix, labels, sample_weight=compute_sample_weight("balanced", labels))
    names = [f"f{index}" for index in range(5)]
    ours = ReadingModel.from_fitted(model, names, matrix[0], 0.5, {"synthetic": 400})
    reloaded = ReadingModel(**{**ours.__dict__, "trees": tuple(json.loads(ours.to_json())["trees"])})
    for model_under_test in (ours, reloaded):
        probabilities = [model_under_test.judge(dict(zip(names, row)))[0] for row in matrix]
        assert np.allclose(probabilities, model.predict_proba(matrix)[:, 1], atol=1e-9)
    assert 0 < labels.sum() < len(labels)


def test_the_shipped_model_reads_the_gates_features_and_was_fitted_on_the_development_half_only():
    model = trained_reading_model()
    assert list(model.features) == list(turn_features(SCOPED))
    development = [
        row
        for name in model.readings
        for row in map(json.loads, (READINGS / "development" / name).open())
        if row["turn_type"] in MODELLED_TURN_TYPES
    ]
    fitted = {corpus: sum(row["corpus"] == corpus for row in development) for corpus in model.fitted_on}
    assert model.fitted_on == fitted and sum(fitted.values()) == len(development) > 1000
    assert all(row["half"] == "development" for row in development)
    assert TEST_HALF and not TEST_HALF & set(model.fitted_on)
    assert 0.0 < model.threshold < 1.0


# A verb's section as the question's scope (drf, development round 12, read broken): the model gives 0.85.
VERB_AS_SCOPE = TurnEvidence(
    "In quit, can you explain what Httpie is?",
    "Httpie is a user friendly http client that's written in Python.",
    gold=[
        (
            "Tutorial 1: Serialization › Testing our first attempt at a Web API",
            "In another terminal window, we can test the server.\n\nWe can test our API using curl or httpie. "
            "Httpie is a user friendly http client that's written in Python. Let's install that.",
        )
    ],
)


def test_the_gate_asks_the_reading_model_only_when_told_to():
    assert judge_turn(VERB_AS_SCOPE).flags == {}  # no rule names this
    flags = judge_turn(VERB_AS_SCOPE, reading_model=True).flags
    assert len(flags) == 1
    ((klass, why),) = flags.items()
    assert klass in ("unaskable", "reply_mismatch") and "reading model" in why


def test_turns_that_refuse_or_ask_back_are_left_to_the_rules():
    refusal = TurnEvidence(SCOPED.question, "The documentation does not say.", "unanswerable", gold=SCOPED.gold)
    assert "reading model" not in str(judge_turn(refusal, reading_model=True).flags)


@pytest.mark.parametrize("turn_type", ["answerable", "unanswerable"])
def test_features_are_finite_numbers_for_any_turn(turn_type):
    features = turn_features(TurnEvidence("", "", turn_type))
    assert features and all(np.isfinite(value) for value in features.values())


def _benchmark_script(name: str):
    import importlib.util

    script = Path(__file__).resolve().parent.parent / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, script)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_threshold_is_the_lowest_whose_worst_corpus_agrees_at_the_bound():
    gate_model = _benchmark_script("gate_model")
    # Corpus a: its broken turns score 0.9, its ok turns 0.1. Corpus b: broken 0.8, ok 0.6. Flagging
    # from 0.9 keeps recall 5 of 7 (the bound) and leaves b at 0.8; from 0.8 both agree fully; from
    # 0.6 every turn of b is flagged.
    probabilities = np.array([0.9] * 5 + [0.1] * 5 + [0.8] * 2 + [0.6] * 8)
    labels = np.array([True] * 5 + [False] * 5 + [True] * 2 + [False] * 8)
    corpora = ["a"] * 10 + ["b"] * 10
    nothing_ruled = np.zeros(20, dtype=bool)
    assert gate_model.worst_corpus_threshold(probabilities, labels, nothing_ruled, corpora) == 0.8
    assert gate_model.worst_corpus_threshold(probabilities, ~labels & False, nothing_ruled, corpora) is None
    # Where no threshold keeps recall 0.7 with every corpus agreeing 0.8, agreement goes first: one broken
    # turn scores 0.9, the other 0.5 with eight ok turns; from 0.5 the corpus agrees 0.2, from 0.9 0.9.
    lone = np.array([0.9, 0.5] + [0.5] * 8)
    lone_labels = np.array([True, True] + [False] * 8)
    assert gate_model.worst_corpus_threshold(lone, lone_labels, np.zeros(10, dtype=bool), ["a"] * 10) == 0.9


def test_the_threshold_is_chosen_on_the_newest_rounds_ungated_sheets():
    gate_model = _benchmark_script("gate_model")
    sheets = ["a-offline-r12-ungated.jsonl", "a-offline-r14-ungated.jsonl", "a-offline-r14.jsonl", "b-offline-r8.jsonl"]
    assert gate_model.newest_ungated(sheets).tolist() == [False, True, False, False]


def test_each_sheet_is_read_against_the_collection_that_holds_its_chunks(tmp_path):
    """A corpus ingested again under a longer name after its chunking changed keeps an older sheet's
    chunk ids only in the collection that sheet was drawn from; a fact sheet's rows read no turn."""
    agreement = _benchmark_script("gate_agreement")
    workspace = Workspace.resolve(tmp_path / "ws")
    first = write_corpus(tmp_path / "first", documents=4, seed=1)
    again = write_corpus(tmp_path / "again", documents=4, seed=2)
    for page in again.iterdir():
        page.rename(again / f"moved-{page.name}")  # ids of their own: the file paths name the chunks
    ingest(workspace, "first", [str(first)], HashingEmbedder(), collection="corpus")
    ingest(workspace, "again", [str(again)], HashingEmbedder(), collection="corpus21")
    collections = agreement.Collections(workspace)
    ids = {name: collections.client.get_collection(name).get(include=[])["ids"] for name in ("corpus", "corpus21")}
    assert ids["corpus"] and ids["corpus21"] and not set(ids["corpus"]) & set(ids["corpus21"])

    def sheet(gold_ids: list[str]) -> list[dict]:
        return [{"corpus": "corpus", "gold_ids": gold_ids, "verdict": "ok", "turn_type": "answerable"}]

    assert collections.of_sheet("corpus", sheet(ids["corpus21"][:2])).name == "corpus21"
    assert collections.of_sheet("corpus", sheet(ids["corpus"][:2])).name == "corpus"
    assert collections.of_sheet("corpus", sheet([])).name == "corpus"  # nothing to tell by: the corpus's own name
    # a turn whose chunks no collection holds (read before the chunker changed) is not judged without them
    opened = collections.of_sheet("corpus", sheet(ids["corpus"][:2]))
    assert opened.holds(sheet(ids["corpus"][:2])[0])
    assert not opened.holds(sheet([ids["corpus"][0], "page.html:0-99"])[0])
    assert not opened.holds({**sheet([])[0], "held_out_ids": ["page.html:0-99"]})

    readings = tmp_path / "round-facts.jsonl"
    turn = {"corpus": "corpus", "verdict": "broken", "turn_type": "answerable", "question": "Q?"}
    fact = {"corpus": "corpus", "verdict": "ok", "chunk": ids["corpus"][0], "question": "Q?"}
    other = {**turn, "corpus": "another"}  # a sheet of the turns a change made holds several corpora's
    readings.write_text("".join(json.dumps(row) + "\n" for row in (turn, fact, other)), encoding="utf-8")
    assert agreement.sheets_of([readings]) == {(readings, "corpus"): [turn], (readings, "another"): [other]}
