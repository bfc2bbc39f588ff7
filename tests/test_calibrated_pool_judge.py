"""validate's offline pool judge (agents/calibrated_pool_judge.py): lexical coverage and dense
similarity weighed together against one calibrated threshold, each passage on its own."""

from __future__ import annotations

import pytest

from benchsmith.agents.calibrated_pool_judge import CALIBRATED_THRESHOLD, CalibratedPoolJudge, calibrated_support
from benchsmith.agents.pool_judge import PoolJudge
from benchsmith.agents.text import PassageStatistics

QUESTION = "How do I stop the server from reloading when a file changes?"
# (title, text): the first answers in other words than the question's; the others share its words only.
ANSWERS = (
    "server › run",
    "Pass use_reloader=False to run() to turn off the automatic restart. By default the development server "
    "restarts itself whenever a source file is modified.",
)
SHARES_WORDS = (
    "logging",
    "To stop the server from writing a log line for each request, set the log level of the server's logger to WARNING.",
)
UPLOADS = ("upload", "When a file is uploaded, the server stores it under a safe name in the upload folder.")
PASSAGES = [ANSWERS, SHARES_WORDS, UPLOADS]
STATISTICS = PassageStatistics(f"{title} {text}" for title, text in PASSAGES)


def judged(similarities=None, sentence_similarities=None):
    return CalibratedPoolJudge(len(PASSAGES)).baseline(
        history=[],
        question=QUESTION,
        passages=[text for _, text in PASSAGES],
        passage_titles=[title for title, _ in PASSAGES],
        statistics=STATISTICS,
        similarities=similarities,
        sentence_similarities=sentence_similarities,
    )


def test_an_answer_in_other_words_is_relevant_and_a_passage_that_only_shares_words_is_not():
    # Cosines as the default embedder gives them on these texts (rounded): the answer is closest.
    verdicts = judged(similarities=[0.69, 0.46, 0.50], sentence_similarities=[0.55, 0.45, 0.49])
    assert [judgment.relevant for judgment in verdicts.judgments] == [True, False, False]
    answer = verdicts.judgments[0]
    assert answer.facts and all(fact in ANSWERS[1] for fact in answer.facts)
    assert "below" in verdicts.judgments[1].rationale and not verdicts.judgments[1].facts
    # The lexical rule alone misses the answer: too few of the question's words are in it.
    lexical = PoolJudge(len(PASSAGES)).baseline(
        history=[],
        question=QUESTION,
        passages=[text for _, text in PASSAGES],
        passage_titles=[title for title, _ in PASSAGES],
        statistics=STATISTICS,
    )
    assert not lexical.judgments[0].relevant


def test_each_passage_is_judged_on_its_own_against_the_threshold():
    # Unlike PoolJudge.baseline, no passage is relevant only because its batch is weak.
    weak = judged(similarities=[0.2, 0.1, 0.1], sentence_similarities=[0.2, 0.1, 0.1])
    assert not any(judgment.relevant for judgment in weak.judgments)
    assert calibrated_support(0.44, 0.44, 0.44) == pytest.approx(CALIBRATED_THRESHOLD)
    assert calibrated_support(0.3, 0.5, 0.55) >= CALIBRATED_THRESHOLD > calibrated_support(0.3, 0.5, 0.5)


def test_without_dense_evidence_it_is_the_lexical_judge():
    lexical = PoolJudge(len(PASSAGES)).baseline(
        history=[],
        question=QUESTION,
        passages=[text for _, text in PASSAGES],
        passage_titles=[title for title, _ in PASSAGES],
        statistics=STATISTICS,
    )
    assert judged() == lexical


@pytest.mark.slow
def test_the_default_embedder_separates_the_answer_from_the_passage_that_shares_words(tmp_path):
    from benchsmith.graphs.validate.judge_evidence import dense_evidence
    from benchsmith.stores.persistence.workspace import Workspace

    similarities, sentence_similarities = dense_evidence(Workspace.resolve(str(tmp_path)), QUESTION, PASSAGES)
    verdicts = judged(similarities, sentence_similarities)
    assert [judgment.relevant for judgment in verdicts.judgments] == [True, False, False]
