"""The hand-labelled standard-library questions (data/stdlib-validity.jsonl) and the reading and
re-resolving of labelled questions (stores/formats/labelled_questions.py)."""

import json
import re
from pathlib import Path

import pytest

from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.labelled_questions import (
    CorpusChunk,
    GoldPassage,
    LabelledQuestion,
    normalized_text,
    read_labelled_questions,
    relabelled,
    resolve_gold,
    write_labelled_questions,
)
from benchsmith.tools.corpus.quality import DEFAULT_MIN_QUALITY, InformationDensityScorer
from tests.validity_fixtures import DATA_FILE, stdlib_chunks

UPDATE_COMMAND = ".venv/bin/python benchmarks/validity.py --update-data"
MIN_QUESTIONS, MIN_DOCUMENTS = 40, 25
MAX_QUOTED_WORDS = 6  # a question may share at most this many consecutive words with a gold chunk


@pytest.fixture(scope="module")
def questions() -> list[LabelledQuestion]:
    return read_labelled_questions(DATA_FILE)


def test_the_set_has_enough_questions_spread_over_many_modules(questions):
    assert len(questions) >= MIN_QUESTIONS
    assert len({question.id for question in questions}) == len(questions)
    assert len({normalized_text(question.question).casefold() for question in questions}) == len(questions)
    assert questions
    assert all("?" in question.question for question in questions)
    documents = {passage.document for question in questions for passage in question.gold}
    assert len(documents) >= MIN_DOCUMENTS


def test_every_gold_is_a_kept_stdlib_chunk_of_its_module_containing_its_evidence(questions):
    chunks = stdlib_chunks()
    stale = [
        f"{question.id}: {passage.chunk_id}"
        for question in questions
        for passage in question.gold
        if passage.chunk_id not in chunks
    ]
    assert not stale, (
        f"gold chunk ids no longer produced by cleaning and chunking on this Python; re-find them "
        f"by their evidence with `{UPDATE_COMMAND}`: {stale}"
    )
    golds = [(question, passage, chunks[passage.chunk_id]) for question in questions for passage in question.gold]
    assert golds
    assert all(chunk.doc_id == passage.document for _, passage, chunk in golds)
    unsupported = [
        f"{question.id}: {passage.evidence!r}"
        for question, passage, chunk in golds
        if normalized_text(passage.evidence) not in normalized_text(chunk.text)
    ]
    assert not unsupported
    scores = InformationDensityScorer().score([chunk.text for _, _, chunk in golds])
    filtered = [chunk.id for (_, _, chunk), score in zip(golds, scores) if score < DEFAULT_MIN_QUALITY]
    assert not filtered, f"the quality filter would drop these gold chunks: {filtered}"


def test_the_evidence_resolves_to_exactly_the_labelled_gold(questions):
    corpus = [CorpusChunk(chunk.id, chunk.doc_id, chunk.text) for chunk in stdlib_chunks().values()]
    resolution = resolve_gold(questions, corpus)
    assert resolution.complete, resolution.missing
    # Any other chunk of the module holding the same evidence would be a missed gold passage.
    assert resolution.changed == [], f"run `{UPDATE_COMMAND}` and check the diff: {resolution.changed}"


def test_questions_ask_rather_than_quote_their_gold_chunk(questions):
    chunks = stdlib_chunks()

    def words(text: str) -> list[str]:
        return re.findall(r"\w+", text.casefold())

    def longest_shared_run(first: list[str], second: list[str]) -> int:
        def ngrams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
            return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}

        n = 0
        while ngrams(first, n + 1) & ngrams(second, n + 1):
            n += 1
        return n

    quoting = [
        question.id
        for question in questions
        if max(
            longest_shared_run(words(question.question), words(chunks[passage.chunk_id].text))
            for passage in question.gold
        )
        > MAX_QUOTED_WORDS
    ]
    assert not quoting


def _write(path: Path, records: list[object]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def _record(question_id: str, question: str, chunk_id: str = "c1", evidence: str = "answer here") -> dict:
    return {
        "id": question_id,
        "question": question,
        "gold": [{"chunk_id": chunk_id, "document": "mod", "evidence": evidence}],
    }


def test_reading_names_the_file_and_line_of_a_bad_record(tmp_path):
    good = _record("q1", "How?")
    with pytest.raises(InputError, match=r"bad\.jsonl:2: question 'q2' needs a non-empty 'gold' list"):
        read_labelled_questions(_write(tmp_path / "bad.jsonl", [good, {"id": "q2", "question": "Why?", "gold": []}]))
    with pytest.raises(InputError, match=r"bad\.jsonl:2: question 'q2': a gold entry has no 'evidence'"):
        read_labelled_questions(
            _write(
                tmp_path / "bad.jsonl",
                [good, {"id": "q2", "question": "Why?", "gold": [{"chunk_id": "c", "document": "mod"}]}],
            )
        )
    with pytest.raises(InputError, match=r"dup\.jsonl:2: question 'q2' repeats line 1"):
        read_labelled_questions(_write(tmp_path / "dup.jsonl", [good, _record("q2", "  how? ")]))


def test_evidence_is_found_through_rewrapping_and_inline_markup_and_only_in_its_document():
    questions = [LabelledQuestion("q", "How?", (GoldPassage("old-id", "mod", "use ``flag=True`` to keep it"),))]
    chunks = [
        CorpusChunk("new-id", "mod", "Intro.\nUse x; use flag=True\nto keep it."),
        CorpusChunk("other", "elsewhere", "use flag=True to keep it"),
    ]
    resolution = resolve_gold(questions, chunks)
    assert resolution.gold_ids == {"q": ["new-id"]} and resolution.changed == ["q"] and resolution.complete
    assert resolve_gold(questions, chunks[1:]).missing == [("q", questions[0].gold[0])]


def test_relabelling_refinds_changed_chunks_and_names_lost_evidence(tmp_path):
    questions = [
        LabelledQuestion(
            "q", "How?", (GoldPassage("old-a", "mod", "first span"), GoldPassage("old-b", "mod", "second span"))
        )
    ]
    chunks = [CorpusChunk("a", "mod", "the first span and the second span"), CorpusChunk("b", "mod", "a second span")]
    (updated,) = relabelled(questions, chunks)
    assert [(passage.chunk_id, passage.evidence) for passage in updated.gold] == [
        ("a", "first span"),
        ("b", "second span"),
    ]
    path = tmp_path / "q.jsonl"
    write_labelled_questions(path, [updated])
    assert read_labelled_questions(path) == [updated]
    with pytest.raises(InputError, match="q: mod: 'second span'"):
        relabelled(questions, [*chunks[:0], CorpusChunk("a", "mod", "only the first span")])
