"""The audit's verdict on a benchmark too small to rank retrievers (evals/defaults.py
``MIN_RANKING_QUERIES``): whatever its judges say, fewer queries than that are never a usable ranking."""

from __future__ import annotations

from benchsmith.evals.defaults import MIN_RANKING_QUERIES as MIN_QUERIES
from benchsmith.evals.measures.audit_verdicts import overall_verdict
from benchsmith.stores.persistence.workspace import Workspace
from tests.audit_fixtures import SUBSTANCES, write_audit_benchmark
from tests.audit_runs import audit, results_of

CLEAN = {"confirmed_missing_gold": 0, "gold_pick_rate": 1.0}


def clean_judgments(count: int) -> dict:
    return {
        f"q{index}": {
            "judge": {"alignment": {"score": 5, "rationale": ""}, "choice": {"slot": 1, "doc_id": "d", "rationale": ""}}
        }
        for index in range(count)
    }


def test_a_clean_benchmark_is_reliable_from_the_bound_and_unreliable_below_it():
    judgments = clean_judgments(MIN_QUERIES)
    assert overall_verdict(judgments, CLEAN, queries=MIN_QUERIES)["label"] == "reliable"
    small = overall_verdict(judgments, CLEAN, queries=MIN_QUERIES - 1)
    assert small["label"] == "unreliable"
    assert f"{MIN_QUERIES - 1} queries, fewer than {MIN_QUERIES}" in small["explanation"]
    # the benchmark's queries count, not the audited sample's: a sample of a large benchmark stays reliable
    assert overall_verdict(clean_judgments(6), CLEAN, queries=400)["label"] == "reliable"
    assert "fewer than" not in overall_verdict(clean_judgments(6), CLEAN)["explanation"]  # size unknown


def test_the_audit_calls_a_benchmark_of_too_few_queries_unreliable_and_says_why(tmp_path):
    turns, corpus = write_audit_benchmark(tmp_path / "bench")
    queries = 2 * len(SUBSTANCES)  # two turns per conversation
    assert queries < MIN_QUERIES
    results = results_of(audit(Workspace.resolve(tmp_path / "ws"), turns, corpus, "small"))
    assert results["benchmark"]["queries"] == queries
    assert results["verdict"]["label"] == "unreliable"
    assert f"The benchmark has {queries} queries, fewer than {MIN_QUERIES}" in results["verdict"]["explanation"]
