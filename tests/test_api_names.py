"""The Python API speaks its own names: an error raised through it names the keyword to change, not
the command line's flag; each setting has one name in both (the old keyword still works, with a
warning); and the runs of a workspace are listed by ``benchsmith.runs``."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import warnings
from unittest.mock import patch

import pytest
from typer.testing import CliRunner

import benchsmith
import benchsmith.graphs.contexts as contexts
from benchsmith.cli import app
from benchsmith.graphs.runtime.runner import check_same_settings
from benchsmith.graphs.runtime.settings import accepts_old_setting_names, flags_of, user_settings
from benchsmith.jobs.api_names import api_message
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from tests.evaluate_fixtures import write_benchmark


def validate_like(synthetic, *, human, retrievers=(), histories=(), run_id=None):
    """A job's signature (its own keywords) for api_message."""


def test_a_flag_becomes_the_keyword_of_the_function_called():
    assert (
        api_message("--human /x/y.jsonl: not a BEIR directory", validate_like)
        == "human=/x/y.jsonl: not a BEIR directory"
    )
    assert (
        api_message("rank at least 3 configurations (--retriever, --history, --run)", validate_like)
        == "rank at least 3 configurations (retrievers, histories, --run)"
    )
    assert api_message("choose another --run-id", validate_like) == "choose another run_id"
    assert api_message("each --human must be given once", validate_like) == "each human must be given once"
    # A command quoted whole is left as a command.
    assert (
        api_message("run `benchsmith ingest --human x` first", validate_like)
        == "run `benchsmith ingest --human x` first"
    )


def test_an_error_raised_through_the_api_names_its_keyword(tmp_path):
    synthetic = write_benchmark(tmp_path / "synthetic")
    with pytest.raises(benchsmith.InputError) as raised:
        benchsmith.validate(synthetic, human=tmp_path / "nowhere", workspace=tmp_path / "ws")
    assert str(raised.value).startswith(f"human={tmp_path / 'nowhere'}: ") and "--" not in str(raised.value)
    with pytest.raises(benchsmith.InputError, match=r"^significance_test must be one of"):
        benchsmith.evaluate(synthetic, retrievers=["bm25"], significance_test="coin", workspace=tmp_path / "ws")
    with pytest.raises(benchsmith.InputError, match=r"quality=llm asks a model .* llm=openai:<model>"):
        benchsmith.ingest([synthetic], quality="llm", workspace=tmp_path / "ws")


def test_every_setting_has_one_name_in_the_api_and_on_the_command_line():
    """A flag is the keyword's name, its singular for a repeated option (--judge, judges), or without
    the unit of a number of seconds (--timeout, timeout_s)."""
    for module in pkgutil.iter_modules(contexts.__path__):
        loaded = importlib.import_module(f"benchsmith.graphs.contexts.{module.name}")
        for context in (
            value
            for value in vars(loaded).values()
            if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__name__.endswith("Context")
        ):
            for item in user_settings(context):
                base = flags_of(item)[0].removeprefix("--").replace("-", "_")
                assert item.name in (base, f"{base}s", f"{base[:-1]}ies", f"{base}_s"), (context.__name__, item.name)


def test_an_old_keyword_still_works_with_a_warning_and_an_old_run_resumes(tmp_path):
    synthetic = write_benchmark(tmp_path / "synthetic")
    with pytest.warns(DeprecationWarning, match=r"\(requests_per_second=\.\.\.\) is deprecated: use rate_limit="):
        estimate = benchsmith.estimate_evaluation(
            synthetic, retrievers=["bm25"], requests_per_second=5.0, workspace=tmp_path / "ws"
        )
    assert estimate.calls == 0
    # A run recorded before the rename resumes: its settings compare under the new names.
    check_same_settings("old", {"switch_probability": 0.3, "rerank_model": None}, {"switch_rate": 0.3, "rerank": None})


def test_paraphrasings_bleu_limit_has_a_name_of_its_own_and_its_old_one_still_works(tmp_path):
    """max_overlap is synthesis's share of content words (0-1); paraphrasing's sentence BLEU/chrF limit
    (0-100) is max_sentence_score, and its old keyword, flag and recorded setting still work there."""
    assert "max_overlap" in inspect.signature(benchsmith.synthesize).parameters
    assert "max_overlap" not in inspect.signature(benchsmith.paraphrase).parameters

    @accepts_old_setting_names
    def paraphrase_like(*, max_sentence_score: float = 80.0) -> float:
        return max_sentence_score

    @accepts_old_setting_names
    def synthesize_like(*, max_overlap: float = 0.78) -> float:
        return max_overlap

    with pytest.warns(
        DeprecationWarning,
        match=r"paraphrase_like\(max_overlap=\.\.\.\) is deprecated: use "
        r"max_sentence_score=",
    ):
        assert paraphrase_like(max_overlap=70.0) == 70.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert synthesize_like(max_overlap=0.5) == 0.5  # synthesis's own setting: no rename, no warning
    check_same_settings("old", {"max_overlap": 70.0}, {"max_sentence_score": 70.0})
    with pytest.raises(benchsmith.InputError, match="max_overlap"):
        check_same_settings("synthesis", {"max_overlap": 0.5}, {"max_overlap": 0.7})

    help_text = CliRunner().invoke(app, ["paraphrase", "--help"], terminal_width=200).output
    assert "--max-sentence-score" in help_text and "--max-overlap" not in help_text
    seen = {}
    with (
        patch("benchsmith.cli.paraphrase.estimate_paraphrase", lambda *args, **settings: seen.update(settings)),
        patch(
            "benchsmith.cli.paraphrase.run_job_command",
            lambda *args, estimate, arguments, **kwargs: estimate(**arguments),
        ),
    ):
        result = CliRunner().invoke(app, ["paraphrase", str(tmp_path), "--max-overlap", "70", "--dry-run"])
    assert "--max-overlap is deprecated: use --max-sentence-score" in result.output
    assert seen["max_sentence_score"] == 70.0 and "max_overlap" not in seen


def test_the_api_lists_the_runs_of_a_workspace(tmp_path):
    synthetic = write_benchmark(tmp_path / "synthetic")
    benchsmith.evaluate(
        synthetic, retrievers=["bm25"], histories=["current"], workspace=tmp_path / "ws", run_id="listed"
    )
    (listed,) = benchsmith.runs(workspace=tmp_path / "ws")
    assert isinstance(listed, benchsmith.RunInfo)
    assert (listed.run_id, listed.job, listed.status) == ("listed", "evaluate", "finished")
    assert listed.run_dir == RunDirectory(Workspace.resolve(tmp_path / "ws"), "listed").path
    assert listed.usage.calls == 0 and listed.summary and listed.parent is None
    assert benchsmith.runs(workspace=tmp_path / "empty") == []
