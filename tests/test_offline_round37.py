"""Round 37 of the offline questioner: a section's example answers the task its heading names only when the
sentence right before it does not set up a case instead (the default, the past, an instance, a supposition); a task
has spare how-to frames, asked only to reword."""

from __future__ import annotations

import pytest

from benchsmith.agents.offline.asking import answer, ask
from benchsmith.agents.offline.facts import passage_facts
from benchsmith.agents.offline.wording import wordings
from benchsmith.agents.question_types import question_type_of
from benchsmith.agents.questioner import rewordings
from benchsmith.evals.quality_gate import GateVerdict, TurnEvidence, judge_turn
from benchsmith.graphs.synthesis import frames
from benchsmith.language import question_frame

TITLE = "Guide › Selecting parametrized sessions"
HEADING = "Selecting parametrized sessions"
EXAMPLE = "@nox.session\n@nox.parametrize('django', ['1.9', '2.0'])\ndef tests(session, django):\n    pass"


def section(introduction: str) -> str:
    return "\n\n".join([HEADING, introduction, f"```\n{EXAMPLE}\n```"])


def tasks(text: str) -> list[str]:
    return [fact.slot("vp") for fact in passage_facts(text, TITLE) if fact.kind == "procedure" and fact.example]


@pytest.mark.parametrize(
    "introduction",
    [
        "If you have a parametrized session such as:",  # an instance of the thing (nox, read broken)
        "By default, nox runs every parametrized session:",  # the default (cmd2, read broken)
        "Prior to version 3.1 the supported mechanism for selecting sessions used the syntax:",  # the past (pytest)
        "Let's say that we want to run the sessions of one Django version only:",  # a supposition
    ],
)
def test_an_example_introduced_as_a_case_answers_no_task(introduction):
    assert tasks(section(introduction)) == []


@pytest.mark.parametrize(
    "introduction",
    [
        "To select one of them, pass its name with --session:",
        # the condition parsed as the root (FastAPI's sources: "If you need to mark a path operation as deprecated, but
        # without removing it, pass the parameter deprecated:", read ok)
        "If you need to run only some of them, but without editing the noxfile, pass the session's name:",
        "Sessions can be selected by name:",
    ],
)
def test_an_example_introduced_as_the_way_still_answers_the_task(introduction):
    assert tasks(section(introduction)) == ["select parametrized sessions"]


TUTORIAL = {
    "id": "binary",
    "title": "Files › Binary files",
    "text": "Binary files\n\nTo read binary data you can use typer.FileBinaryRead.",
}
SPARE_HOW_TO = (
    "What's a good way to read binary data?",
    "What's the easiest way to read binary data?",
    "What steps do I need to take to read binary data?",
)


def test_a_task_has_spare_how_to_frames_that_only_reword():
    procedure = next(fact for fact in passage_facts(TUTORIAL["text"], TUTORIAL["title"]) if fact.kind == "procedure")
    assert not set(SPARE_HOW_TO) & {w.question for w in wordings(procedure)}
    spare = {w.question: w for w in wordings(procedure, spare=True)}
    assert set(SPARE_HOW_TO) <= set(spare) and {spare[q].question_type for q in SPARE_HOW_TO} == {"how-to"}
    refused: list[str] = []
    while asked := ask(TUTORIAL, [], rejected=refused, only=lambda fact: fact == procedure):
        assert asked.question not in SPARE_HOW_TO  # the questioner never asks in them on its own
        refused.append(asked.question)
    reworded = [found.question for found in rewordings(TUTORIAL, [], refused[0])]
    assert set(SPARE_HOW_TO) <= set(reworded)
    # and one yes/no frame with a word of its own, so a benchmark of mostly tasks can ask fewer than half as how-tos
    simple = "Is there a simple way to read binary data?"
    assert simple in reworded and spare[simple].question_type == question_type_of(simple) == "yes/no"
    assert answer(TUTORIAL, simple) == answer(TUTORIAL, refused[0])
    # each is its own frame, read as a how-to by the question types and the gate alike
    assert len({question_frame(question) for question in SPARE_HOW_TO}) == len(SPARE_HOW_TO)
    for question in SPARE_HOW_TO:
        assert question_type_of(question) == "how-to"
        assert answer(TUTORIAL, question) == answer(TUTORIAL, refused[0])
        reply = answer(TUTORIAL, question) or ""
        assert (
            "reply_mismatch" not in judge_turn(TurnEvidence(question, reply, gold=[(TUTORIAL["title"], reply)])).flags
        )
        told_nothing = judge_turn(TurnEvidence(question, "You can read binary data.", gold=[("Binary", "x")])).flags
        assert told_nothing.get("reply_mismatch") == "asks how; the reply says only that it can be done"


LAUNCH = {
    "id": "launch",
    "title": "Launching Applications",
    "text": "Launching Applications\n\nYou can launch applications from your CLI program with typer.launch().",
}
ASKED = "What's the best way to launch applications from my CLI program?"


def _reworded(monkeypatch, flags_of) -> dict | None:
    """A reworded benchmark turn when the gate gives ``flags_of(question)``: (flags, by the reading model alone)."""
    monkeypatch.setattr(frames, "judge_turn", lambda evidence, reading_model: GateVerdict(*flags_of(evidence.question)))
    turn = {
        "question": ASKED,
        "question_unpolished": ASKED,
        "response": answer(LAUNCH, ASKED),
        "gold_ids": ["launch"],
        "question_type": "how-to",
        "lexical_overlap": 0.67,
    }
    other_frame = lambda question, _type: question_frame(question) != question_frame(ASKED)  # noqa: E731
    return frames.reworded({"conversation_id": "c0", "turns": [turn]}, 0, other_frame, LAUNCH, None, 0.62)


MODEL = ({"reply_mismatch": "the reading model gives 0.75"}, True)
RULE = ({"reply_mismatch": "the reply only restates the question"}, False)
CLEAN = ({}, False)


def test_a_question_the_reading_model_flagged_may_be_reworded_into_one_it_flags_too(monkeypatch):
    fields = _reworded(monkeypatch, lambda question: MODEL)
    assert (
        fields is not None
        and fields["question"] != ASKED
        and answer(LAUNCH, fields["question"]) == answer(LAUNCH, ASKED)
    )


def test_a_clean_wording_is_taken_before_one_the_model_flags(monkeypatch):
    clean = "What's the easiest way to launch applications from my CLI program?"
    fields = _reworded(monkeypatch, lambda question: CLEAN if question == clean else MODEL)
    assert fields is not None and fields["question"] == clean


@pytest.mark.parametrize(
    "asked, others",
    [(CLEAN, MODEL), (MODEL, RULE), (CLEAN, RULE)],
    ids=["a clean question gets no flagged wording", "no rule's flag", "no rule's flag for a clean one"],
)
def test_a_rewording_is_never_worse_by_the_gates_account(monkeypatch, asked, others):
    assert _reworded(monkeypatch, lambda question: asked if question == ASKED else others) is None
