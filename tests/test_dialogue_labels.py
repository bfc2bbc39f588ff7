"""Turn labels in the benchmark files (issue 22): the dialogue format reads old files as before
and rejects bad labels naming file and line; turn_labels.tsv and the turn JSONL form carry them;
the held-out filter leaves out near-duplicates by the dedup rule."""

from __future__ import annotations

import json

import pytest

from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import load_benchmark, load_turn_jsonl
from benchsmith.stores.formats.benchmark_files import Dialogue, read_dialogues, write_dialogues
from benchsmith.stores.formats.turn_labels import TurnLabels, read_turn_labels, write_turn_labels
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.held_out import without_held_out

OLD_TURN = {
    "index": 0,
    "question": "q?",
    "question_unpolished": "q?",
    "rewrite": "q?",
    "response": "a.",
    "gold_ids": ["g1"],
    "switch": "start",
    "similarity_to_previous": None,
    "polish_rejected": None,
    "switch_drawn": "start",
}


def write_lines(path, records):
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def test_a_dialogue_written_before_labels_reads_as_an_answerable_unlabelled_turn(tmp_path):
    (dialogue,) = read_dialogues(
        write_lines(tmp_path / "d.jsonl", [{"conversation_id": "c0", "cluster_id": 1, "seed": 0, "turns": [OLD_TURN]}])
    )
    turn = dialogue.turns[0]
    assert (turn.answerability, turn.question_type, turn.standalone, turn.held_out_ids) == (
        "answerable",
        None,
        None,
        [],
    )


def test_labels_and_several_gold_ids_survive_a_write_and_a_read(tmp_path):
    turns = [
        {
            **OLD_TURN,
            "gold_ids": ["g1", "g2"],
            "answerability": "partial",
            "question_type": "comparison",
            "standalone": False,
        },
        {
            **OLD_TURN,
            "index": 1,
            "gold_ids": [],
            "answerability": "unanswerable",
            "held_out_ids": ["h1"],
            "question_type": "yes/no",
            "standalone": True,
        },
    ]
    written = [Dialogue.model_validate({"conversation_id": "c0", "turns": turns})]
    path = tmp_path / "d.jsonl"
    write_dialogues(path, written)
    assert read_dialogues(path) == written


@pytest.mark.parametrize(
    "change, message",
    [
        ({"answerability": "maybe"}, "answerability"),
        ({"question_type": "riddle"}, "question_type"),
        ({"standalone": "sometimes"}, "standalone"),
        ({"answerability": "unanswerable"}, "no gold chunks"),  # still has its gold
        ({"answerability": "answerable", "gold_ids": []}, "at least one gold chunk"),
    ],
)
def test_a_bad_label_stops_the_read_naming_file_and_line(tmp_path, change, message):
    path = write_lines(
        tmp_path / "d.jsonl",
        [{"conversation_id": "c0", "turns": [OLD_TURN]}, {"conversation_id": "c1", "turns": [{**OLD_TURN, **change}]}],
    )
    with pytest.raises(InputError, match=rf"d\.jsonl:2: not a conversation \(.*{message}"):
        read_dialogues(path)


def test_turn_labels_tsv_round_trips_and_names_a_bad_line(tmp_path):
    labels = [("c0_t0", TurnLabels("answerable", "factoid", True)), ("c0_t1", TurnLabels("unanswerable", None, None))]
    write_turn_labels(tmp_path / "turn_labels.tsv", labels)
    assert read_turn_labels(tmp_path / "turn_labels.tsv") == dict(labels)
    (tmp_path / "bad.tsv").write_text(
        "query-id\tanswerability\tquestion_type\tstandalone\nq1\tanswerable\tfactoid\tyes\n", encoding="utf-8"
    )
    with pytest.raises(InputError, match=r"bad\.tsv:2: standalone must be true, false or empty"):
        read_turn_labels(tmp_path / "bad.tsv")


def test_a_beir_directory_takes_labels_from_turn_labels_tsv(tmp_path):
    write_lines(tmp_path / "corpus.jsonl", [{"_id": "d1", "title": "", "text": "text"}])
    write_lines(
        tmp_path / "queries.jsonl",
        [
            {"_id": "c_t0", "text": "q0", "metadata": {"conversation_id": "c", "turn": 0, "question": "q0"}},
            {"_id": "c_t1", "text": "q1", "metadata": {"conversation_id": "c", "turn": 1, "question": "q1"}},
        ],
    )
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nc_t0\td1\t1\n", encoding="utf-8")
    write_turn_labels(
        tmp_path / "turn_labels.tsv",
        [("c_t0", TurnLabels("answerable", "how-to", True)), ("c_t1", TurnLabels("underspecified", None, False))],
    )
    queries = load_benchmark(tmp_path, Workspace.resolve(tmp_path / "ws")).queries_by_id
    assert (queries["c_t0"].question_type, queries["c_t1"].answerability, queries["c_t1"].standalone) == (
        "how-to",
        "underspecified",
        False,
    )


def test_the_turn_jsonl_form_allows_no_gold_only_on_turns_that_have_none(tmp_path):
    corpus = write_lines(tmp_path / "corpus.jsonl", [{"_id": "d1", "title": "", "text": "text"}])
    turns = write_lines(
        tmp_path / "turns.jsonl",
        [
            {"id": "t0", "question": "q?", "gold_ids": ["d1"], "question_type": "Factoid"},
            {"id": "t1", "question": "r?", "gold_ids": [], "answerability": "unanswerable", "standalone": False},
        ],
    )
    benchmark = load_turn_jsonl(turns, corpus)
    assert benchmark.qrels == {"t0": {"d1": 1}}
    assert benchmark.queries_by_id["t0"].question_type == "factoid"
    assert benchmark.queries_by_id["t1"].answerability == "unanswerable"
    write_lines(turns, [{"id": "t1", "question": "r?", "gold_ids": [], "answerability": "answerable"}])
    with pytest.raises(InputError, match=r"turns\.jsonl:1: .*an empty one only on an unanswerable"):
        load_turn_jsonl(turns, corpus)


PASSAGE = (
    "The scheduler keeps a queue of pending jobs, sorted by priority and then by the time they arrived; a "
    "worker takes the first job whose resources are free and reports back when it is done."
)


def test_the_held_out_filter_removes_the_chunk_and_its_near_duplicates_and_keeps_the_rest():
    documents = [
        {"_id": "held", "text": PASSAGE},
        {"_id": "copy", "text": "Scheduler notes. " + PASSAGE.replace("reports back", "answers")},
        {"_id": "other", "text": "Unrelated: the cache evicts the least recently used entry first."},
        {"_id": "same-topic", "text": "The scheduler has a priority queue; workers pull jobs from it."},
    ]
    removed = []
    kept = list(without_held_out(documents, {"held": PASSAGE}, removed))
    assert [d["_id"] for d in kept] == ["other", "same-topic"]
    assert {(match.removed_id, match.kept_id) for match in removed} == {("held", "held"), ("copy", "held")}
    assert next(match for match in removed if match.removed_id == "copy").jaccard >= 0.8
    assert list(without_held_out(documents, {})) == documents
