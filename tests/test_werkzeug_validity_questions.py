"""The werkzeug development set of validate's judge (data/werkzeug-validity.jsonl): it loads with
the labelled-questions reader validate uses, names chunks as an ingested HTML tree does
(``page:start-end``), and asks exactly the questions first written (werkzeug-validity-questions.jsonl)."""

import json
import re
from pathlib import Path

from benchsmith.stores.formats.labelled_questions import read_labelled_questions

DATA = Path(__file__).resolve().parents[1] / "data"
LABELS, QUESTIONS = DATA / "werkzeug-validity.jsonl", DATA / "werkzeug-validity-questions.jsonl"
CHUNK_ID = re.compile(r"(?P<page>[\w./-]+\.html):(?P<start>\d+)-(?P<end>\d+)")


def test_the_labels_load_and_name_only_page_span_chunks_of_their_page():
    questions = read_labelled_questions(LABELS)
    assert len(questions) == 20 and len({question.id for question in questions}) == 20
    for question in questions:
        assert question.gold, question.id
        assert len({passage.chunk_id for passage in question.gold}) == len(question.gold), question.id
        for passage in question.gold:
            match = CHUNK_ID.fullmatch(passage.chunk_id)
            assert match, passage.chunk_id
            assert match["page"] == passage.document and int(match["start"]) < int(match["end"]), passage.chunk_id
            assert passage.evidence.strip()


def test_the_labelled_questions_are_the_questions_as_first_written():
    written = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
    labelled = [(question.id, question.question) for question in read_labelled_questions(LABELS)]
    assert labelled == [(row["id"], row["question"]) for row in written]
