"""The audit's well-formedness check, and the verdict counting ill-formed questions once."""

from __future__ import annotations

import pytest

from benchsmith.agents.text import STOPWORDS as AGENT_STOPWORDS
from benchsmith.evals.audit_verdicts import ill_formed_summary, overall_verdict
from benchsmith.evals.question_form import (STOPWORDS, DocumentCounter, ill_formed_questions, question_form,
                                            quoted_spans)


@pytest.mark.parametrize("question, reason", [
    ('What does it say about "```"?', "quotes markup or an empty span"),
    ('What does the documentation of README.md say about ""?', "quotes markup or an empty span"),
    ("What is this?", "no content words"),
    (":orphan:", "markup"),
    ("{ref}`install <install-guide>`", "markup"),
    (".. code-block:: python", "markup"),
    ("What does | option | default | mean?", "markup"),
    ("=====", "no content words"),
])
def test_ill_formed_questions_are_named_with_their_reason(question, reason):
    problems = question_form(question).problems()
    assert any(problem.startswith(reason) for problem in problems), problems


@pytest.mark.parametrize("question", [
    "How does json.dumps escape non-ASCII characters?",
    "What is `ensure_ascii` used for?",
    "Isn't the user's key 'api-key' read from the environment?",
    "What does 10:30:45 mean in the log?",
    "And its timeout?",
])
def test_well_formed_questions_pass(question):
    assert question_form(question, DocumentCounter(["nothing in common"])).problems() == []


def test_a_quote_found_in_many_documents_is_ambiguous():
    documents = [f"Page {n}. This page has   moved to the archive." for n in range(5)] + ["The archive index."]
    counter = DocumentCounter(documents)
    question = 'What does the documentation say about "this page has moved"?'
    assert question_form(question, counter).problems() == ['quotes a span found in 5 documents: "this page has moved"']
    assert question_form(question, counter).problems(many_documents=6) == []
    assert quoted_spans("Is “curly” or 'single' quoting, but not the user's key?") == ["curly", "single"]


def test_content_words_here_are_never_more_than_the_baseline_agents_count():
    """Every stopword here is one of the agents': three content words there are three here."""
    assert STOPWORDS <= AGENT_STOPWORDS


def test_ill_formed_instances_count_as_noise_once():
    judgments = {instance: {"judge": {"alignment": {"score": score, "rationale": ""},
                                      "choice": {"slot": 1, "doc_id": "d", "rationale": ""}}}
                 for instance, score in {"q1": 5, "q2": 1, "q3": 4, "q4": 5}.items()}
    questions = {"q1": ":orphan:", "q2": 'What about "```"?', "q3": "How are tides predicted?", "q4": "What is this?"}
    flagged = ill_formed_questions(questions)
    assert sorted(flagged) == ["q1", "q2", "q4"]
    summary = ill_formed_summary(judgments, flagged, questions.__getitem__)
    assert [item["low_alignment"] for item in summary] == [False, True, False]
    extra_noise = sum(not item["low_alignment"] for item in summary)
    discriminability = {"confirmed_missing_gold": 0, "gold_pick_rate": 1.0}
    assert overall_verdict(judgments, discriminability)["label"] == "unreliable"  # 1 of 4 low alignment: 25%
    verdict = overall_verdict(judgments, discriminability, noise_flags=extra_noise)
    assert verdict["explanation"].startswith("75% of the audited instances are noise")
