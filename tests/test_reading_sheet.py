"""benchmarks/reading_sheet.py's draw: a tree too small for one benchmark is read over several runs, each
question on its gold once, and turns already read are not drawn again; one run draws as it always did."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "reading_sheet.py"


@pytest.fixture(scope="module")
def draw():
    spec = importlib.util.spec_from_file_location("reading_sheet", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.draw


def dialogue(run: str, conversation: str, *asked: tuple[str, str]) -> dict:
    turns = [{"question": question, "gold_ids": [gold], "response": "r"} for question, gold in asked]
    return {"run": run, "conversation_id": conversation, "turns": turns}


def test_pooled_runs_give_each_question_on_its_gold_once_and_leave_out_what_was_read(draw):
    first = dialogue("s0", "c0", ("What is A?", "a"), ("What is B?", "b"))
    second = dialogue("s1", "c0", ("What is A?", "a"), ("What is A?", "a2"), ("What is C?", "c"))
    read = frozenset({("What is B?", ("b",))})
    drawn = draw([first, second], 50, 0, read)
    keys = [(d["turns"][i]["question"], d["turns"][i]["gold_ids"][0]) for d, i in drawn]
    # "What is A?" on a second gold is another turn; on the same gold, once (from the run that asked it first)
    assert sorted(keys) == [("What is A?", "a"), ("What is A?", "a2"), ("What is C?", "c")]
    assert [d["run"] for d, i in drawn if d["turns"][i]["gold_ids"] == ["a"]] == ["s0"]


def test_one_run_draws_the_sample_it_drew_before_pooling(draw):
    dialogues = [dialogue("s0", f"c{n}", *[(f"Q{n}-{i}?", f"g{n}-{i}") for i in range(6)]) for n in range(20)]
    every = [(d, i) for d in dialogues for i in range(len(d["turns"]))]
    before = sorted(random.Random(7).sample(every, 50), key=lambda item: (item[0]["conversation_id"], item[1]))
    after = draw(dialogues, 50, 7)
    assert len(after) == 50
    assert [(d["conversation_id"], i) for d, i in after] == [(d["conversation_id"], i) for d, i in before]
