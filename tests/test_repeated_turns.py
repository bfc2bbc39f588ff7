"""Turns one conversation repeats of another (evals/measures/repeated_turns.py) and what the synthesis
summary says about them."""

from __future__ import annotations

from benchsmith.cli.synthesize import repeat_warning
from benchsmith.evals.measures.repeated_turns import CUT_KEY, asked_turns, end_at_repeats, repeated_turns


def _dialogue(conversation_id: str, *turns: tuple[str, str]) -> dict:
    return {
        "conversation_id": conversation_id,
        "turns": [{"question": question, "gold_ids": [gold]} for question, gold in turns],
    }


def test_a_turn_repeats_only_the_same_question_on_the_same_gold_of_an_earlier_conversation():
    dialogues = [
        _dialogue(
            "c0001", ("How do I define a block?", "d1"), ("what is a Block", "d2"), ("How do I nest blocks?", "d3")
        ),
        _dialogue("c0000", ("How do I define a block?", "d1"), ("What is a block?", "d2")),
        _dialogue("c0002", ("How do I define a block?", "d9"), ("How do I nest blocks?", "d4")),
    ]
    found = repeated_turns(dialogues)
    # c0000 comes first whatever the file's order; c0001 repeats two of its turns (case, spacing and "?" aside)
    assert found["repeated"] == 2 and found["turns"] == 7
    assert found["mostly_repeated_conversations"] == ["c0001"]
    assert found["distinct_conversations"] == 2
    assert {example["first_asked_in"] for example in found["examples"]} == {"c0000"}


def test_the_summary_says_what_to_do_only_when_many_turns_repeat():
    many = repeated_turns(
        [
            _dialogue("c0000", ("A?", "d1"), ("B?", "d2")),
            _dialogue("c0001", ("A?", "d1"), ("B?", "d2")),
            _dialogue("c0002", ("C?", "d3"), ("D?", "d4")),
        ]
    )
    assert "1 of 3 conversations" in repeat_warning(many, 3) and "--conversations 2" in repeat_warning(many, 3)
    # a third of the turns repeat, but no conversation mostly: every conversation adds turns of its own
    spread = repeated_turns(
        [_dialogue("c0000", ("A?", "d1"), ("B?", "d2")), _dialogue("c0001", ("A?", "d1"), ("C?", "d3"))]
    )
    assert spread["share"] > 0.2 and repeat_warning(spread, 2) is None
    none = repeated_turns([_dialogue("c0000", ("A?", "d1")), _dialogue("c0001", ("B?", "d2"))])
    assert none["repeated"] == 0 and repeat_warning(none, 2) is None


def test_a_conversation_ends_before_its_first_repeat_and_ending_again_changes_nothing():
    dialogues = [
        _dialogue("c0001", ("How do I nest blocks?", "d3"), ("what is a Block", "d2"), ("Why blocks?", "d5")),
        _dialogue("c0000", ("How do I define a block?", "d1"), ("What is a block?", "d2")),
        _dialogue("c0002", ("How do I define a block?", "d1"), ("How do I nest blocks?", "d4")),
    ]
    ended, cut = end_at_repeats(dialogues)
    by_id = {dialogue["conversation_id"]: dialogue for dialogue in ended}
    assert [dialogue["conversation_id"] for dialogue in ended] == ["c0000", "c0001", "c0002"]
    # c0001 keeps the turn before its repeat; the turn after the repeat goes too (it may lean on it)
    assert [turn["question"] for turn in by_id["c0001"]["turns"]] == ["How do I nest blocks?"]
    assert [turn["question"] for turn in by_id["c0001"][CUT_KEY]] == ["what is a Block", "Why blocks?"]
    assert by_id["c0002"]["turns"] == [] and len(by_id["c0000"]["turns"]) == 2 and CUT_KEY not in by_id["c0000"]
    assert cut == 4
    # a resumed export ends the already-ended file the same way, and the measure still sees every asked turn
    assert end_at_repeats(ended) == (ended, cut)
    asked = [{**dialogue, "turns": asked_turns(dialogue)} for dialogue in ended]
    assert repeated_turns(asked) == repeated_turns(dialogues)


def test_a_question_two_conversations_ask_belongs_to_the_one_that_asked_it_at_the_earlier_turn():
    dialogues = [
        _dialogue("c0000", ("A?", "d1"), ("B?", "d2"), ("C?", "d3"), ("Q?", "d9")),
        _dialogue("c0001", ("Q?", "d9"), ("D?", "d4"), ("E?", "d5")),
    ]
    ended, cut = end_at_repeats(dialogues)
    # read side by side, c0001 asked Q first (its first turn, c0000's fourth): c0000 ends a turn early, not c0001 at once
    assert [len(dialogue["turns"]) for dialogue in ended] == [3, 3] and cut == 1
    found = repeated_turns(dialogues)
    assert found["repeated"] == 1 and found["examples"][0] == {
        "question": "Q?",
        "conversation": "c0000",
        "first_asked_in": "c0001",
    }


def _answered(conversation_id: str, *turns: tuple[str, str, str]) -> dict:
    return {
        "conversation_id": conversation_id,
        "turns": [{"question": q, "response": reply, "gold_ids": [gold] if gold else []} for q, reply, gold in turns],
    }


def test_the_same_fact_asked_in_another_frame_repeats_it():
    destroyed = "Widgets can be destroyed by using the destroy method."
    dialogues = [
        _answered("c0000", ("What's the best way to destroy widgets?", destroyed, "d1")),
        _answered("c0001", ("What is the recommended way to destroy widgets?", destroyed, "d1"), ("B?", "b", "d2")),
        # the same reply on other gold, and another reply on the same gold, are other turns
        _answered("c0002", ("How do I destroy widgets?", destroyed, "d7"), ("What is a widget?", "A widget.", "d1")),
    ]
    assert repeated_turns(dialogues)["repeated"] == 1
    ended, cut = end_at_repeats(dialogues)
    assert cut == 2 and [len(dialogue["turns"]) for dialogue in ended] == [1, 0, 2]


def test_unanswerable_turns_repeat_by_their_question_alone():
    refusal = "The documentation does not answer this."
    dialogues = [
        _answered("c0000", ("Can I run it on Mars?", refusal, "")),
        _answered("c0001", ("Does it speak Klingon?", refusal, "")),
    ]
    assert repeated_turns(dialogues)["repeated"] == 0


def test_a_cut_turn_claims_none_of_its_keys():
    said = "Set the flag."
    dialogues = [
        _answered("c0000", ("What's the best way to X?", said, "d1")),
        # cut by its reply: its question must not make c0002's own first asking of it a repeat
        _answered("c0001", ("How do I Y?", said, "d1")),
        _answered("c0002", ("How do I Y?", "Call y().", "d1")),
    ]
    ended, cut = end_at_repeats(dialogues)
    assert cut == 1 and [len(dialogue["turns"]) for dialogue in ended] == [1, 0, 1]
