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
def sheet():
    spec = importlib.util.spec_from_file_location("reading_sheet", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def draw(sheet):
    return sheet.draw


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


def test_coverage_counts_a_reading_only_for_the_turn_it_read_and_the_last_file_wins(tmp_path, capsys):
    import json

    from benchsmith.stores.persistence.workspace import Workspace

    spec = importlib.util.spec_from_file_location("reading_coverage", SCRIPT.with_name("reading_coverage.py"))
    assert spec and spec.loader
    coverage = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(coverage)
    workspace = Workspace.resolve(tmp_path / "ws")
    run_dir = workspace.run_dir("r1")
    run_dir.mkdir(parents=True)
    turns = [
        {"question": "What is A?", "gold_ids": ["a"], "response": "A is a letter."},
        {"question": "What is B?", "gold_ids": ["b"], "response": "B is now another reply."},
        {"question": "What is C?", "gold_ids": ["c"], "response": "C is a letter."},
    ]
    (run_dir / "dialogues.jsonl").write_text(json.dumps({"conversation_id": "c0", "turns": turns}) + "\n")

    def reading(question: str, gold: str, reply: str, verdict: str) -> str:
        return json.dumps({"question": question, "gold_ids": [gold], "reply": reply, "verdict": verdict})

    earlier, later = tmp_path / "r1.jsonl", tmp_path / "r2.jsonl"
    earlier.write_text(
        "\n".join(
            [
                reading("What is A?", "a", "A is a letter.", "ok"),
                reading("What is B?", "b", "B was another reply.", "ok"),  # read with the reply it had then
                reading("What is C?", "c", "C is a letter.", "ok"),
            ]
        )
    )
    later.write_text(reading("What is C?", "c", "C is a letter.", "broken"))
    arguments = ["--workspace", str(workspace.root), "--run", "r1", "--turns", "3"]
    assert coverage.main([*arguments, str(earlier), str(later)]) == 1  # B's reply changed: unread
    printed = capsys.readouterr().out
    assert "3 turns drawn, 2 read, 1 broken" in printed
    assert "broken (None): What is C?" in printed and "unread: What is B?" in printed
    assert coverage.main([*arguments, str(later), str(earlier)]) == 1  # the earlier file last: C reads ok
    assert "2 read, 0 broken" in capsys.readouterr().out


class NoPassages:
    def passages(self, ids):
        return []


def test_a_pooled_sheet_names_each_items_run_since_runs_share_conversation_ids(sheet):
    first, second = dialogue("s0", "c0", ("What is A?", "a")), dialogue("s1", "c0", ("What is C?", "c"))
    pooled = [sheet.sheet_item(number, d, 0, NoPassages(), pooled=True) for number, d in enumerate((first, second))]
    assert pooled[0].startswith("## Item 0 · s0 c0:0 ·") and pooled[1].startswith("## Item 1 · s1 c0:0 ·")
    assert sheet.sheet_item(1, first, 0, NoPassages()).startswith("## Item 1 · c0:0 · answerable turn")
