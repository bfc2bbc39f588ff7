"""The quality gate in synthesis on a flag of its reading model alone (graphs/synthesis/model_flags.py):
the turn is asked again, a replacement the gate passes entirely is kept, and when none passes
the original comes back as it was, never dropped; the counts in stats.json and the summary;
the turn waiting in flight survives a checkpoint and a crash."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from benchsmith.cli.synthesize import gate_rows, gate_warning, size_warning
from benchsmith.evals.measures.repeated_turns import asked_turns
from benchsmith.evals.quality_gate import GateVerdict, TurnEvidence
from benchsmith.graphs.contexts.synthesize import SynthesisContext
from benchsmith.graphs.synthesis import turn_checks
from benchsmith.graphs.synthesis.conversation import conversation_builder
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from tests.synthesis_fixtures import COLLECTION, synthesize
from tests.turn_type_fixtures import ALL_RATES, QUESTION_MIX, rich_workspace

OPTIONS = {"conversations": 6, "turns": 4, "question_types": QUESTION_MIX, "quality_gate": "replan", **ALL_RATES}
MODEL_FLAG = {"reply_mismatch": "the reading model gives 0.9 (stub)"}
Judge = Callable[..., GateVerdict]


def passes(evidence: TurnEvidence, reading_model: bool = False) -> GateVerdict:
    return GateVerdict()


def model_flags(evidence: TurnEvidence, reading_model: bool = False) -> GateVerdict:
    return GateVerdict(dict(MODEL_FLAG), by_model=True)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Workspace:
    return rich_workspace(tmp_path_factory, "synthesis-gate")


def run_with(workspace: Workspace, run_id: str, judge: Judge, **options) -> RunDirectory:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(turn_checks, "judge_turn", judge)
        synthesize(workspace, run_id, **{**OPTIONS, **options})
    return RunDirectory(workspace, run_id)


def dialogues(run_dir: RunDirectory) -> list[dict]:
    """The conversations with every turn they asked (those cut at a repeat of another conversation's too)."""
    return [{**record, "turns": asked_turns(record)} for record in load_jsonl(run_dir.file("dialogues.jsonl"))]


def gate_stats(run_dir: RunDirectory) -> dict:
    return json.loads(run_dir.file("stats.json").read_text())["quality_gate"]


@pytest.fixture(scope="module")
def passed(workspace) -> RunDirectory:
    """Every turn passes the gate: each turn's first draft is kept."""
    return run_with(workspace, "passed", passes)


def test_a_first_draft_the_model_flags_is_replaced_by_one_the_gate_passes(workspace, passed):
    first_drafts = {d["turns"][0]["question_unpolished"] for d in dialogues(passed)}

    def flags_first_drafts(evidence: TurnEvidence, reading_model: bool = False) -> GateVerdict:
        flagged = not evidence.previous and evidence.question in first_drafts
        return model_flags(evidence) if flagged else GateVerdict()

    replaced = run_with(workspace, "first-replaced", flags_first_drafts)
    written, expected = dialogues(replaced), dialogues(passed)
    assert [len(d["turns"]) for d in written] == [len(d["turns"]) for d in expected]  # nothing dropped
    for dialogue, before in zip(written, expected, strict=True):
        first = dialogue["turns"][0]
        assert first["question_unpolished"] != before["turns"][0]["question_unpolished"]
        assert first["question_unpolished"] not in first_drafts
        assert first["gate_replaced"] == MODEL_FLAG and first["gate_flags"] == {}
    assert not any(d.get("dropped_turns") for d in written)
    gate = gate_stats(replaced)  # of the benchmark's conversations: those ended before a repeat at once count none
    in_benchmark = sum(1 for record in load_jsonl(replaced.file("dialogues.jsonl")) if record["turns"])
    assert gate["model_flagged"] == {"replaced": in_benchmark, "kept": 0}
    assert gate["replaced"]["reply_mismatch"] == in_benchmark and gate["turns_dropped"] == 0
    assert (
        "quality gate: turns the reading model flagged, replaced / kept",
        f"{in_benchmark} replaced / 0 kept (none)",
    ) in gate_rows(gate)


def test_when_every_replacement_is_flagged_the_original_turn_is_kept_and_none_dropped(workspace, passed):
    judged: list[str] = []

    def flags_all(evidence: TurnEvidence, reading_model: bool = False) -> GateVerdict:
        judged.append(evidence.question)
        return model_flags(evidence)

    kept = run_with(workspace, "all-flagged", flags_all)
    written, expected = dialogues(kept), dialogues(passed)
    turns = sum(len(d["turns"]) for d in written)
    assert len(judged) > turns  # replacements were asked and judged
    for dialogue, before in zip(written, expected, strict=True):
        assert len(dialogue["turns"]) == len(before["turns"]) and not dialogue.get("dropped_turns")
        for turn, original in zip(dialogue["turns"], before["turns"], strict=True):
            # the first draft itself, with what it was asked from, answered with and labelled as
            assert turn["gate_flags"] == MODEL_FLAG and turn["gate_replaced"] == {}
            assert {**turn, "gate_flags": {}} == original
    gate = gate_stats(kept)  # of the benchmark's turns: those cut at a repeat of another conversation's count none
    in_benchmark = sum(len(record["turns"]) for record in load_jsonl(kept.file("dialogues.jsonl")))
    assert gate["model_flagged"] == {"replaced": 0, "kept": in_benchmark}
    assert gate["flagged_kept"]["reply_mismatch"] == in_benchmark and gate["turns_dropped"] == 0
    assert sum(gate["refused"].values()) == 0  # the model's refusals are no rule's


def test_a_rule_flagged_replacement_gives_the_original_back_with_the_rules_refusal_counted(workspace, passed):
    def rule_flags_replacements(evidence: TurnEvidence, reading_model: bool = False) -> GateVerdict:
        if evidence.question in originals:
            return model_flags(evidence)
        return GateVerdict({"dangling_referent": "stub rule"})

    originals = {t["question_unpolished"] for d in dialogues(passed) for t in d["turns"]}
    kept = run_with(workspace, "rule-flagged", rule_flags_replacements)
    for dialogue, before in zip(dialogues(kept), dialogues(passed), strict=True):
        assert [t["question_unpolished"] for t in dialogue["turns"]] == [
            t["question_unpolished"] for t in before["turns"]
        ]
    gate = gate_stats(kept)
    assert gate["turns_dropped"] == 0 and gate["refused"]["dangling_referent"] > 0
    assert gate["model_flagged"]["kept"] == gate["turns_kept"]


def test_a_question_the_rules_dropped_is_not_asked_again_later_in_its_conversation(workspace, passed):
    def rules_flag_every_follow_up(evidence: TurnEvidence, reading_model: bool = False) -> GateVerdict:
        return GateVerdict({"unaskable": "stub rule"}) if evidence.previous else GateVerdict()

    dropped_run = run_with(workspace, "follow-ups-dropped", rules_flag_every_follow_up)
    dropped = [[turn["question"] for turn in d.get("dropped_turns", [])] for d in dialogues(dropped_run)]
    assert sum(len(questions) for questions in dropped) >= len(dropped)  # every conversation dropped its follow-ups
    for questions in dropped:
        assert len(questions) == len(set(questions)), questions


def test_the_summary_warns_when_the_gate_dropped_most_turns_and_says_what_to_do(workspace, passed):
    def rules_flag_every_follow_up(evidence: TurnEvidence, reading_model: bool = False) -> GateVerdict:
        return GateVerdict({"unaskable": "stub rule"}) if evidence.previous else GateVerdict()

    gate = gate_stats(run_with(workspace, "mostly-dropped", rules_flag_every_follow_up))
    assert gate["turns_dropped"] > gate["turns_kept"] > 0
    warning = gate_warning(gate)
    assert warning is not None
    assert f"dropped {gate['turns_dropped']} of {gate['turns_dropped'] + gate['turns_kept']} turns" in warning
    assert f"unaskable {gate['dropped']['unaskable']}" in warning and repr(gate["examples"]["unaskable"]) in warning
    assert "--llm openai:<model>" in warning and f"{gate['turns_kept']} remain" in warning
    assert gate_warning(gate_stats(passed)) is None  # nothing dropped, nothing to say


def test_the_turn_waiting_in_flight_survives_a_checkpoint_and_a_crash(workspace, passed):
    """A conversation graph with a checkpointer, cut off while a replacement is judged, resumes to
    what a run without the crash gives."""
    context = SynthesisContext(
        workspace=str(workspace.root), llm="baseline", cluster_size=4, question_types=QUESTION_MIX, **ALL_RATES
    )
    task = {"collection": COLLECTION, "conversation_id": "c-flagged", "cluster_id": 1, "turns_wanted": 4}
    calls: list[str] = []

    def crashes_on_the_third_judgement(evidence: TurnEvidence, reading_model: bool = False) -> GateVerdict:
        calls.append(evidence.question)
        if len(calls) == 3:
            raise RuntimeError("crashed while judging a replacement")
        return model_flags(evidence)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(turn_checks, "judge_turn", model_flags)
        expected = conversation_builder.compile(checkpointer=False).invoke(task, context=context)
        patch.setattr(turn_checks, "judge_turn", crashes_on_the_third_judgement)
        graph = conversation_builder.compile(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "c-flagged"}}
        with pytest.raises(RuntimeError, match="crashed"):
            graph.invoke(task, config, context=context)
        assert graph.get_state(config).values["label_attempt"]["fallback"]["turn"]["draft"]["question"] == calls[0]
        resumed = graph.invoke(None, config, context=context)
    assert resumed["turns"] == expected["turns"] and len(expected["turns"]) == 4
    assert all(turn["gate_flags"] == MODEL_FLAG for turn in resumed["turns"])


def test_a_run_cut_off_mid_way_resumes_to_the_same_files(workspace):
    whole = run_with(workspace, "uncut", model_flags, concurrency=2)
    calls: list[int] = []

    def crashes_once(evidence: TurnEvidence, reading_model: bool = False) -> GateVerdict:
        calls.append(1)
        if len(calls) == 30:
            raise RuntimeError("crashed mid-run")
        return model_flags(evidence)

    with pytest.raises(RuntimeError, match="mid-run"):
        run_with(workspace, "cut", crashes_once, concurrency=2)
    assert RunDirectory(workspace, "cut").load().status == "crashed"
    cut = run_with(workspace, "cut", model_flags, concurrency=2)
    for name in ("dialogues.jsonl", "stats.json", "qrels.trec", "beir/queries.jsonl", "beir/turn_labels.tsv"):
        assert cut.file(name).read_bytes() == whole.file(name).read_bytes(), name


def test_the_summary_warns_of_a_benchmark_too_small_to_rank_retrievers_and_only_then():
    assert "24 turns, fewer than 25" in size_warning(24) and "--conversations" in size_warning(24)
    assert "holds 1 turn," in size_warning(1)
    assert size_warning(25) is None and size_warning(400) is None
