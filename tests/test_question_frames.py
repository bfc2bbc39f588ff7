"""How a benchmark's questions spread over their frames (evals/measures/question_frames.py), and what the
audit's quality gate and verdict say of a benchmark that asks in one frame."""

from __future__ import annotations

from benchsmith.evals.measures.audit_verdicts import overall_verdict
from benchsmith.evals.measures.question_frames import FRAME_CAP, frame_concentration, frame_limit, frame_note
from benchsmith.evals.quality_gate import GateVerdict
from benchsmith.evals.quality_gate.summary import gate_note, gate_summary

# The web framework: the role of whatever a sentence named, in half the questions.
TEMPLATED = {
    f"c{i:04d}_t0": question
    for i, question in enumerate(
        [
            "What is the role of the request context?",
            "What is the role of the application factory?",
            "How do I register a blueprint?",
            "What is the role of the session interface?",
            "Why would I get a BadRequest error?",
            "What is the role of the test client?",
            "When is teardown_request called?",
            "What is the role of the URL map?",
            "Can I stream a response?",
            "What does url_for return?",
        ]
    )
}
VARIED = {turn: question for turn, question in TEMPLATED.items() if "role" not in question}


def test_a_frame_above_a_fifth_is_listed_with_its_questions():
    found = frame_concentration(TEMPLATED)
    assert found["questions"] == 10 and found["top_frame"] == "what is role of …" and found["top_share"] == 0.5
    [role] = found["above_cap"]
    assert role["questions"] == 5 and role["share"] == 0.5 and frame_limit(10) == 2
    assert [example["turn"] for example in role["examples"]] == ["c0000_t0", "c0001_t0", "c0003_t0"]
    note = frame_note(found)
    assert note and "'what is role of …', holds 5 of 10 questions (50%" in note and f"{FRAME_CAP:.0%}" in note


def test_questions_in_frames_of_their_own_give_no_note():
    found = frame_concentration(VARIED)
    assert found["above_cap"] == [] and found["frames"] == len(VARIED)
    assert frame_note(found) is None and frame_note(None) is None


def test_a_templated_benchmark_the_gate_flags_nothing_in_is_at_best_usable_with_caveats():
    clean = {turn: GateVerdict(flags={}) for turn in TEMPLATED}
    templated, varied = gate_summary(clean, TEMPLATED), gate_summary(clean, VARIED)
    assert templated["flagged"] == 0 and templated["frames"]["above_cap"]
    assert gate_note(varied) is None  # nothing flagged, no frame over its cap
    note = gate_note(templated)
    assert note and note.startswith("One frame of question")
    judgments = {turn: {"judge": {"alignment": {"score": 5}}} for turn in TEMPLATED}
    discriminability = {"confirmed_missing_gold": 0, "gold_pick_rate": 1.0}
    assert overall_verdict(judgments, discriminability)["label"] == "reliable"
    assert overall_verdict(judgments, discriminability, gate_note=note)["label"] == "usable with caveats"
    flagged = {**clean, "c0002_t0": GateVerdict(flags={"unaskable": "a fragment"})}
    both = gate_note(gate_summary(flagged, TEMPLATED))
    assert both and both.startswith("The offline quality gate flags 1 of 10 turns") and "One frame of question" in both
