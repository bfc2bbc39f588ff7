"""One default measure set: every measure another job reports by default (the audit's shortcuts,
robustness's comparison) is one `benchsmith evaluate` measures unless told, so a figure of the
audit can be read against an evaluation's; and counts are printed in the number they take."""

from benchsmith.cli.console import counted
from benchsmith.evals.defaults import DEFAULT_MEASURES
from benchsmith.graphs.audit.state import QUERY_ONLY_MEASURES
from benchsmith.graphs.contexts.evaluate import EvaluationContext
from benchsmith.graphs.contexts.robustness import DEFAULT_MEASURES as ROBUSTNESS_MEASURES


def test_the_audits_shortcut_measures_and_robustnesss_defaults_are_evaluates_defaults():
    assert set(QUERY_ONLY_MEASURES) | {"nDCG@10"} <= set(DEFAULT_MEASURES)
    assert "R@10" in DEFAULT_MEASURES
    assert set(ROBUSTNESS_MEASURES) <= set(DEFAULT_MEASURES)
    assert tuple(EvaluationContext().measures) == DEFAULT_MEASURES


def test_a_count_takes_its_nouns_number():
    assert counted(1, "chunk") == "1 chunk"
    assert counted(0, "chunk") == "0 chunks"
    assert counted(2_500, "duplicate") == "2,500 duplicates"
    assert counted(2, "query", "queries") == "2 queries"
