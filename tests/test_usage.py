"""A run's usage: model calls apart from the offline baseline's, as the ledger and the CLI report them."""

from __future__ import annotations

from rich.console import Console

from benchsmith.cli import console as console_module
from benchsmith.jobs.common import Usage
from benchsmith.stores.persistence.usage import UsageLedger


def ledger_with(tmp_path, calls) -> UsageLedger:
    ledger = UsageLedger(tmp_path / "usage.jsonl")
    for call in calls:
        ledger.record(call)
    return ledger


def call(model: str, cached: bool = False, tokens: int = 0) -> dict:
    return {
        "model": model,
        "agent": "judge",
        "input_tokens": tokens,
        "output_tokens": tokens,
        "cost_usd": 0.0,
        "retries": 0,
        "cached": cached,
    }


def printed(usage: Usage, monkeypatch) -> str:
    capture = Console(record=True, width=200)
    monkeypatch.setattr(console_module, "console", capture)
    console_module.print_usage(usage)
    return capture.export_text()


def test_offline_calls_are_counted_apart(tmp_path):
    totals = ledger_with(
        tmp_path, [call("baseline"), call("baseline"), call("gpt-4o-mini", tokens=10), call("gpt-4o-mini", cached=True)]
    ).totals()
    assert (totals["calls"], totals["offline_calls"], totals["cached_calls"]) == (4, 2, 1)
    assert totals["input_tokens"] == 10


def test_a_run_of_the_offline_baseline_alone_made_no_model_call(tmp_path, monkeypatch):
    usage = Usage.from_totals(ledger_with(tmp_path, [call("baseline")] * 3).totals())
    assert printed(usage, monkeypatch).strip() == "model calls: none (3 answered by the offline baseline)"


def test_model_calls_exclude_the_offline_ones(tmp_path, monkeypatch):
    usage = Usage.from_totals(ledger_with(tmp_path, [call("baseline"), call("m"), call("m", cached=True)]).totals())
    text = printed(usage, monkeypatch)
    assert text.startswith("model calls: 2 (1 from the cache") and "; 1 answered by the offline baseline" in text


def test_no_calls_at_all(tmp_path, monkeypatch):
    assert printed(Usage.from_totals(ledger_with(tmp_path, []).totals()), monkeypatch).strip() == "model calls: none"
