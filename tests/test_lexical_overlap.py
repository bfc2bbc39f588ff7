"""Lexical overlap between a question and its gold passages (evals/measures/lexical_overlap.py)."""

import pytest

from benchsmith.evals.measures.lexical_overlap import content_stems, lexical_overlap, overlap_summary

GOLD = "If ensure_ascii is false, the output can contain non-ASCII characters as they are."


def test_a_question_copied_from_its_gold_overlaps_fully():
    assert lexical_overlap("Can the output contain non-ASCII characters if ensure_ascii is false?", [GOLD]) == 1.0


def test_a_question_in_other_words_overlaps_little():
    # content stems: make, json, dumps, keep, accented, letters -> none is in the gold
    assert lexical_overlap("How do I make json.dumps keep accented letters?", [GOLD]) == 0.0


def test_overlap_is_the_share_of_distinct_stems_found_in_the_best_gold():
    # stems of the question: output, contain, charact, print -> 3 of 4 in GOLD, 1 of 4 in the other
    question = "Which output contains characters when printing?"
    assert content_stems(question) == {"output", "contain", "charact", "print"}
    assert lexical_overlap(question, ["Printing is slow.", GOLD]) == pytest.approx(3 / 4)
    assert lexical_overlap(question, ["Printing is slow."]) == pytest.approx(1 / 4)


def test_inflections_count_as_the_same_word():
    assert lexical_overlap("returned values", ["It returns the value."]) == 1.0


def test_no_content_words_or_no_gold_is_zero():
    assert lexical_overlap("What is it?", [GOLD]) == 0.0
    assert lexical_overlap("Can the output contain characters?", []) == 0.0


def test_summary_of_overlaps():
    summary = overlap_summary([0.0, 0.5, 1.0, 1.0])
    assert summary["n"] == 4
    assert summary["mean"] == pytest.approx(0.625)
    assert summary["median"] == pytest.approx(0.75)
    assert summary["p90"] == pytest.approx(1.0)
    assert overlap_summary([]) == {"n": 0, "mean": None, "median": None, "p90": None}
