"""Minimal facts matched across chunks (tools/benchmark/fact_matching.py), the pool judge's schema and
baselines (agents/pool_judge.py), the label judge, and real query files."""

from __future__ import annotations

import json

import pytest

from benchsmith.agents.label_seam import LabelSeam
from benchsmith.agents.pool_judge import FactMatchJudge, PoolJudge, judgments_schema
from benchsmith.agents.query_expander import QueryExpander
from benchsmith.agents.seam.backends import ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.query_files import read_user_queries
from benchsmith.tools.benchmark.fact_matching import cluster_facts, compare_facts, normalize_fact


def test_normalization_ignores_case_punctuation_and_unicode_form():
    assert normalize_fact("The tide — peaks at 6 PM!") == normalize_fact("the tide peaks at 6 pm")
    assert normalize_fact("ﬁle_name") == "file name"  # NFKC ligature, underscores are separators


@pytest.mark.parametrize(
    ("first", "second", "decision"),
    [
        ("the tide peaks at 6 pm on sundays", "the tide peaks at 6 pm on sundays", "same"),
        ("tide peaks at 6 pm", "the harbour tide peaks at 6 pm on sundays", "same"),  # a shorter span of it
        ("the tide peaks at 6 pm on sundays", "the tide peaks at 6 pm on a sunday", "near"),
        ("bread rises for four hours", "the tide peaks at 6 pm", "different"),
        ("6 pm", "the tide peaks at 6 pm", "near"),  # too short to be trusted as contained: ask
    ],
)
def test_overlap_decides_same_near_or_different(first, second, decision):
    assert compare_facts(first, second) == decision


def test_clusters_join_matches_transitively_and_ask_the_judge_for_near_matches_only():
    facts = [
        "The harbour tide peaks at 6 pm on Sundays.",
        "tide peaks at 6 pm on Sundays",
        "the tide peaks at 18:00 on Sundays",
        "Sourdough rises for four hours.",
        "THE HARBOUR TIDE PEAKS AT 6 PM ON SUNDAYS",
    ]
    asked = []

    def judge(first, second):
        asked.append((first, second))
        return "18:00" in first + second and "6 pm" in first + second

    clusters = cluster_facts(facts, judge)
    assert clusters[0] == clusters[1] == clusters[2] == clusters[4] != clusters[3]
    assert asked
    assert all("Sourdough" not in a + b for a, b in asked)  # unrelated facts never reach the judge
    assert cluster_facts(facts, lambda a, b: False)[2] != cluster_facts(facts, lambda a, b: False)[0]
    assert cluster_facts(list(reversed(facts)), judge) == list(reversed(clusters))  # order does not matter


def test_pool_judge_schema_needs_every_passage_once_and_a_fact_for_each_relevant_one():
    schema = judgments_schema(2)
    good = schema.model_validate(
        {
            "judgments": [
                {"passage": 2, "rationale": "r", "relevant": False, "facts": ["ignored"]},
                {"passage": 1, "rationale": "r", "relevant": True, "facts": [" a fact ", ""]},
            ]
        }
    )
    assert [j.passage for j in good.judgments] == [1, 2]
    assert good.judgments[0].facts == ["a fact"] and good.judgments[1].facts == []
    for judgments in (
        [{"passage": 1, "rationale": "r", "relevant": False, "facts": []}],
        [
            {"passage": 1, "rationale": "r", "relevant": True, "facts": []},
            {"passage": 2, "rationale": "r", "relevant": False, "facts": []},
        ],
        [
            {"passage": 1, "rationale": "r", "relevant": False, "facts": []},
            {"passage": 3, "rationale": "r", "relevant": False, "facts": []},
        ],
    ):
        with pytest.raises(ValueError):
            schema.model_validate({"judgments": judgments})


def test_an_invalid_batch_is_retried_by_the_seam():
    schema = judgments_schema(1)
    wrong = schema.model_construct(judgments=[])
    right = schema.model_validate({"judgments": [{"passage": 1, "rationale": "r", "relevant": True, "facts": ["f"]}]})
    backend = ScriptedBackend([wrong, right])
    seam = ModelSeam(backend, sleep=lambda _: None)
    assert seam.run(PoolJudge(1), history=[], question="q", passages=["p"]).judgments[0].facts == ["f"]
    assert len(backend.calls) == 2 and seam.stats.retries == 1


def test_baseline_judge_quotes_the_sentences_that_hold_the_question():
    passages = [
        "argparse Command-line parsing library. It parses arguments and options from sys.argv.",
        "csv CSV parsing and writing.\nThe csv module reads tabular data.",
    ]
    verdicts = PoolJudge(2).baseline(history=[], question="How do I parse command line arguments?", passages=passages)
    first, second = verdicts.judgments
    assert first.relevant and first.facts == [
        "argparse Command-line parsing library.",
        "It parses arguments and options from sys.argv.",
    ]
    assert not second.relevant and second.facts == []
    follow_up = PoolJudge(1).baseline(
        history=[("How do I parse command line arguments?", "")], question="and options?", passages=passages[:1]
    )
    assert follow_up.judgments[0].relevant  # a terse follow-up borrows the previous question's words


def test_label_seam_answers_from_labels_by_passage_then_document_and_counts_pairs():
    labels = {"q1": {"doc-a": 1, "doc-b#2": 0, "doc-b": 2}}
    seam = LabelSeam(labels, "qrels:test.tsv")
    answer = seam.run(
        PoolJudge(3),
        history=[],
        question="ignored",
        passages=["x", "y", "z"],
        query_id="q1",
        passage_ids=["doc-a#0", "doc-b#2", "doc-c"],
        passage_documents=["doc-a", "doc-b", "doc-c"],
    )
    assert [j.relevant for j in answer.judgments] == [True, False, False]  # doc-b#2's own label wins
    assert answer.judgments[0].facts == ["labelled relevant: doc-a"]
    assert seam.pairs_looked_up == 3 and seam.model == "qrels:test.tsv" and seam.stats.cost_usd == 0
    assert seam.run(FactMatchJudge(), question="q", first="a", second="a").same
    with pytest.raises(Exception, match="cannot answer from relevance labels"):
        seam.run(QueryExpander(), history=[], question="q", count=2)


def test_query_expander_baseline_writes_a_keyword_query():
    expanded = QueryExpander().baseline(
        history=[("How do I fix a flat bike tyre?", "")], question="and the pump?", count=3
    )
    assert expanded.queries == ["pump fix flat bike tyre"]


def test_real_query_files_text_and_jsonl_with_history(tmp_path):
    text = tmp_path / "queries.txt"
    text.write_text("first question\n\n  second question  \n", encoding="utf-8")
    assert [(q.id, q.text) for q in read_user_queries(text)] == [("q1", "first question"), ("q3", "second question")]
    jsonl = tmp_path / "queries.jsonl"
    jsonl.write_text(
        json.dumps({"id": 7, "query": "How do I sort?"})
        + "\n"
        + json.dumps(
            {"question": "and in reverse?", "history": ["How do I sort?", {"question": "Stable?", "answer": "Yes."}]}
        )
        + "\n",
        encoding="utf-8",
    )
    first, second = read_user_queries(jsonl)
    assert (first.id, first.question, first.conversational) == ("7", "How do I sort?", False)
    assert (second.id, second.history, second.conversational) == (
        "q2",
        [("How do I sort?", ""), ("Stable?", "Yes.")],
        True,
    )


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([{"id": "a", "question": "x"}, {"id": "a", "question": "y"}], "queries.jsonl:2: query id 'a' repeats line 1"),
        ([{"id": "a"}], "queries.jsonl:1: no query text"),
        ([{"question": "x", "history": "earlier"}], "queries.jsonl:1: 'history' must be a list"),
        ([], "queries.jsonl: no queries"),
    ],
)
def test_bad_query_files_name_file_and_line(tmp_path, lines, message):
    path = tmp_path / "queries.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_user_queries(path)
