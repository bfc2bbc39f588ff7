"""The audit's well-formedness check, and the verdict counting ill-formed questions once."""

from __future__ import annotations

import pytest

from benchsmith.evals.measures.audit_verdicts import ill_formed_summary, overall_verdict
from benchsmith.evals.measures.question_form import DocumentCounter, ill_formed_questions, question_form, quoted_spans


@pytest.mark.parametrize(
    "question, reason",
    [
        ('What does it say about "```"?', "quotes markup or an empty span"),
        ('What does the documentation of README.md say about ""?', "quotes markup or an empty span"),
        ("What is this?", "no content words"),
        (":orphan:", "markup"),
        ("{ref}`install <install-guide>`", "markup"),
        (".. code-block:: python", "markup"),
        ("What does | option | default | mean?", "markup"),
        ("=====", "no content words"),
    ],
)
def test_ill_formed_questions_are_named_with_their_reason(question, reason):
    problems = question_form(question).problems()
    assert any(problem.startswith(reason) for problem in problems), problems


@pytest.mark.parametrize(
    "question",
    [
        "How does json.dumps escape non-ASCII characters?",
        "What is `ensure_ascii` used for in json.dumps?",
        "Isn't the user's key 'api-key' read from the environment?",
        "What does 10:30:45 mean in the server log?",
        "Is asyncio thread-safe?",
        "Is the cache key in the dict?",
        "Where are Python's version specifiers > and >= explained?",
    ],
)
def test_well_formed_questions_pass(question):
    assert question_form(question, DocumentCounter(["nothing in common"])).problems() == []


def test_a_short_follow_up_leans_on_its_history_but_a_short_standalone_question_is_a_fragment():
    assert question_form("And its timeout?", follow_up=True).problems() == []
    assert question_form("And its timeout?").problems() == ["fragment: 1 content word (a standalone question needs 3)"]
    assert question_form("What is this?", follow_up=True).problems() == ["no content words"]
    assert ill_formed_questions({"t0": "What about its timeout?", "t1": "And its timeout?"}, follow_ups={"t1"}) == {
        "t0": ["fragment: 1 content word (a standalone question needs 3)"]
    }


@pytest.mark.parametrize(
    "question, reason",
    [
        ("In Issue Triage › Triage Issues › Reaching resolution, how may a user be having?", "heading path"),
        ("How do I read Guides > Packaging > Version specifiers in the user guide?", "heading path"),
        ("What does the Sphinx extension documentation say about manner and codebase?", "keyword template"),
        ("What does the documentation say about manner and codebase?", "keyword template"),
        ("What should I know about version specifiers in packaging?", "keyword template"),
        ("How are version specifiers <pypug:Version Specifier> compared with each other?", "markup leftover"),
        ("Where does the (installing-packages)= label point in the packaging guide?", "markup leftover"),
        ("How do pypug:Version specifiers order pre-releases and local versions?", "markup leftover"),
        ("Which packaging tool is now covered in the user guide pages?", "markup leftover"),
        ("Is command on CLI?", "fragment: a yes/no question with no verb phrase"),
        ("Is command on CLI?", "fragment: 2 content words"),
        ("Does the flag?", "fragment: a yes/no question with no verb phrase"),
        ("Are wheels on PyPI servers?", "fragment: a yes/no question with no verb phrase"),
        ("What is asyncio?", "fragment: 1 content word"),
        ("How does logging work?", "fragment: 2 content words"),
    ],
)
def test_forms_seen_in_synthesized_questions_are_ill_formed(question, reason):
    problems = question_form(question).problems()
    assert any(problem.startswith(reason) for problem in problems), problems


# Ten of data/stdlib-validity.jsonl's hand-written questions, as literals (tests read no data files).
HUMAN_QUESTIONS = [
    "How do I make json.dumps keep accented characters like é instead of writing \\u escapes?",
    "My subprocess.run call returns a result whose stdout is None. How do I get the command's output?",
    "Which function copies a file together with its permissions and modification time?",
    "Is a NamedTemporaryFile removed when I close it? I need to hand its path to another program afterwards.",
    "Is it safe to generate a temporary file name first and create the file later?",
    "Does heapq pop the smallest or the largest item first?",
    "If a Counter's count drops to zero, is the key removed from it?",
    "Why did a background task I started with asyncio.create_task disappear before it finished?",
    "Should I use stdev or pstdev when my numbers are a sample of a larger population?",
    "Does ConfigParser.read raise an error when one of the listed files doesn't exist?",
]


@pytest.mark.parametrize("question", HUMAN_QUESTIONS)
def test_natural_human_questions_are_well_formed(question):
    assert question_form(question).problems() == []


def test_a_quote_found_in_many_documents_is_ambiguous():
    documents = [f"Page {n}. This page has   moved to the archive." for n in range(5)] + ["The archive index."]
    counter = DocumentCounter(documents)
    question = 'Which guide page says "this page has moved"?'
    assert question_form(question, counter).problems() == ['quotes a span found in 5 documents: "this page has moved"']
    assert question_form(question, counter).problems(many_documents=6) == []
    assert quoted_spans("Is “curly” or 'single' quoting, but not the user's key?") == ["curly", "single"]


def test_ill_formed_instances_count_as_noise_once():
    judgments = {
        instance: {
            "judge": {
                "alignment": {"score": score, "rationale": ""},
                "choice": {"slot": 1, "doc_id": "d", "rationale": ""},
            }
        }
        for instance, score in {"q1": 5, "q2": 1, "q3": 4, "q4": 5}.items()
    }
    questions = {
        "q1": ":orphan:",
        "q2": 'What about "```"?',
        "q3": "How are ocean tides predicted?",
        "q4": "What is this?",
    }
    flagged = ill_formed_questions(questions)
    assert sorted(flagged) == ["q1", "q2", "q4"]
    summary = ill_formed_summary(judgments, flagged, questions.__getitem__)
    assert [item["low_alignment"] for item in summary] == [False, True, False]
    extra_noise = sum(not item["low_alignment"] for item in summary)
    discriminability = {"confirmed_missing_gold": 0, "gold_pick_rate": 1.0}
    assert overall_verdict(judgments, discriminability)["label"] == "unreliable"  # 1 of 4 low alignment: 25%
    verdict = overall_verdict(judgments, discriminability, noise_flags=extra_noise)
    assert verdict["explanation"].startswith("75% of the audited instances are noise")
