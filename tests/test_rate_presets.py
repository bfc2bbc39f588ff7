"""Recommended turn-type rates a newcomer can name: ``--rates demo`` (the demo's, its source in
``--help``), a rate given beside it overriding the preset's, and the rates a run uses printed."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from benchsmith.cli import app
from benchsmith.graphs.contexts.synthesize import SynthesisContext, turn_type_rates, with_preset_rates
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.benchmark.turn_type_presets import TURN_TYPE_PRESETS
from tests.synthesis_fixtures import COLLECTION, build_collection

runner = CliRunner(env={"COLUMNS": "200"})


def test_a_preset_sets_the_rates_left_at_their_defaults_and_names_its_source():
    demo = TURN_TYPE_PRESETS["demo"]
    assert demo.source and "demo" in demo.source
    rates = turn_type_rates(SynthesisContext(rates="demo", partial_rate=0.2))
    assert rates["unanswerable_rate"] == demo.unanswerable_rate and rates["partial_rate"] == 0.2
    assert rates["question_types"] == demo.question_types
    assert turn_type_rates(SynthesisContext())["unanswerable_rate"] == 0.0  # no preset: the defaults
    once = with_preset_rates(SynthesisContext(rates="demo"))
    assert with_preset_rates(once) == once
    with pytest.raises(InputError, match="choose one of demo"):
        with_preset_rates(SynthesisContext(rates="mtrag"))


def test_help_lists_each_preset_with_its_rates_and_source():
    result = runner.invoke(app, ["synthesize", "--help"])
    text = " ".join(result.output.replace("│", " ").split())
    assert "--rates" in text and "demo: unanswerable 0.1, partial 0.05" in text and "benchsmith demo's rates" in text


def test_a_run_with_a_preset_prints_and_records_the_rates_it_uses(tmp_path):
    workspace = Workspace.resolve(tmp_path / "ws")
    build_collection(workspace, tmp_path / "pages", documents=24)
    arguments = [
        "synthesize",
        "--collection",
        COLLECTION,
        "--conversations",
        "2",
        "--turns",
        "3",
        "--cluster-size",
        "4",
        "-w",
        str(workspace.root),
    ]
    result = runner.invoke(app, [*arguments, "--rates", "demo", "--partial-rate", "0.2", "--run-id", "preset"])
    assert result.exit_code == 0, result.output
    printed = " ".join(result.output.split())
    assert (
        "turn types: answerable 50%, unanswerable 10%, partial 20%, underspecified 10%, multi-gold 10% · "
        "question types: factoid=0.3"
    ) in printed and "(--rates demo)" in printed
    recorded = RunDirectory(workspace, "preset").load().config
    assert (recorded["rates"], recorded["unanswerable_rate"], recorded["partial_rate"]) == ("demo", 0.1, 0.2)
    plain = runner.invoke(app, [*arguments, "--dry-run"])
    assert "turn types: answerable 100% · question types: not asked for" in " ".join(plain.output.split())
    wrong = runner.invoke(app, [*arguments, "--rates", "mtrag", "--run-id", "wrong"])
    assert wrong.exit_code == 2 and "choose one of demo" in wrong.output
    assert not RunDirectory(workspace, "wrong").exists()
