"""`benchsmith review` without a browser: verdicts saved as made and resumed, a rejection needs a
rubric class, an edit keeps the original beside it; the readings export, the BEIR folder and
`publish` leave the rejected turn out and count it."""

from __future__ import annotations

import json

import pytest

import benchsmith
from benchsmith.jobs.publish import _synthesis_run
from benchsmith.jobs.review import review_session
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from tests.label_fixtures import labelling_setup


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    return labelling_setup(tmp_path_factory.mktemp("review"))


def test_verdicts_reach_the_readings_the_beir_folder_and_publish(setup, tmp_path):
    workspace = setup["workspace"]
    benchmark_dir, record = _synthesis_run(workspace, "bench")
    run_dir = RunDirectory(workspace, "review-1")
    run_dir.start("review", {"benchmark": "bench", "reviewer": "rita"})
    session = review_session(workspace, None, run_dir, benchmark_dir, record, "rita")
    assert session.state()["total"] >= 3
    first = session.item(0)
    assert first["passages"] and first["passages"][0]["text"] and first["previous"] == []
    with pytest.raises(ValueError, match="rubric class"):
        session.judge(0, "reject")
    with pytest.raises(ValueError, match="question as it should read"):
        session.judge(1, "edit", edited_question="  ")
    session.judge(0, "reject", "unaskable", note="a template")
    session.judge(1, "edit", edited_question="How is the journal file read?")
    session.judge(2, "accept")
    rejected_id, edited_id = session.item(0)["turn_id"], session.item(1)["turn_id"]
    original = session.item(1)["question"]

    reopened = review_session(workspace, None, run_dir, benchmark_dir, record, "rita")
    assert reopened.state()["next"] == 3 and reopened.item(1)["edited_question"] == "How is the journal file read?"

    result = benchsmith.review("bench", run_id="review-1", serve_page=False, workspace=workspace.root)
    assert (result.reviewed, result.accepted, result.rejected, result.edited) == (3, 1, 1, 1)
    readings = load_jsonl(result.readings)
    assert [row["verdict"] for row in readings] == ["broken", "ok", "ok"] and readings[0]["class"] == "unaskable"
    assert readings[1]["question"] == original and readings[1]["edited_question"] == "How is the journal file read?"
    assert {"turn_id", "turn_type", "previous", "gold_ids", "held_out_ids", "candidate_ids"} <= set(readings[0])
    queries = {row["_id"]: row for row in load_jsonl(result.beir / "queries.jsonl")}
    assert rejected_id not in queries and queries[edited_id]["metadata"]["question"] == "How is the journal file read?"
    assert rejected_id not in (result.beir / "qrels" / "test.tsv").read_text(encoding="utf-8")
    assert result.gate_agreement["turns"] == 3

    published = benchsmith.publish("bench", format="mtrag", out=tmp_path / "mtrag", workspace=workspace.root)
    assert published.rejected == 1 and published.turns == session.state()["total"] - 1
    conversations = json.loads(
        (tmp_path / "mtrag" / "conversations" / "conversations.json").read_text(encoding="utf-8")
    )
    assert "How is the journal file read?" in json.dumps(conversations)
