"""No frame above a fifth of a benchmark's questions (issue 30): export rewords the latest questions of a frame
above the limit in another wording of the same fact (graphs/synthesis/frames.py)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console

from benchsmith.agents.offline.asking import answer, ask, fact_of
from benchsmith.agents.offline.facts import passage_facts
from benchsmith.agents.offline.wording import wordings
from benchsmith.agents.questioner import rewordings
from benchsmith.agents.seam.backends import ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.cli.synthesize import spread_rows
from benchsmith.evals.measures.question_frames import FRAME_CAP, frame_limit
from benchsmith.graphs.contexts.synthesize import SynthesisContext
from benchsmith.graphs.runtime.resources import asks_offline, register_model
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.graphs.synthesis.frames import (
    REFRAMED_KEY,
    Spread,
    as_asked,
    frame_of,
    question_spread,
    spread_questions,
    type_limit,
)
from benchsmith.graphs.synthesis.run import builder as synthesis_builder
from benchsmith.language import question_frame
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from tests.synthesis_fixtures import COLLECTION
from tests.turn_type_fixtures import ingest

# What a small benchmark asks: three of its eight questions in "Can you explain what … is?".
ASKED = [
    "Can you explain what a savepoint is?",
    "How do I open a cursor?",
    "Can you explain what a dirty page is?",
    "What does the timeout option do?",
    "Why would I get a LockError?",
    "Can you explain what the journal is?",
    "Is it possible to share a connection?",
    "What is the purpose of commit()?",
]
TYPES = {"Can you explain": "explanation", "How do I": "how-to", "Why would": "explanation", "Is it possible": "yes/no"}
OTHER_WORDINGS = {
    "What is meant by {}?": "factoid",
    "What exactly is {}?": "factoid",
    "Can you explain what {} is?": "explanation",
}


def type_of(question: str) -> str:
    return next((kind for opening, kind in TYPES.items() if question.startswith(opening)), "factoid")


def dialogues(questions: list[str], per_conversation: int = 2) -> list[dict]:
    found = []
    for start in range(0, len(questions), per_conversation):
        turns = [
            {
                "index": i,
                "question": q,
                "question_unpolished": q,
                "rewrite": q,
                "response": f"r{start + i}",
                "question_type": type_of(q),
            }
            for i, q in enumerate(questions[start : start + per_conversation])
        ]
        found.append({"conversation_id": f"c{start // per_conversation:04d}", "turns": turns})
    return found


def defined_otherwise(dialogue: dict, position: int, acceptable) -> dict | None:
    """Rewords a definition ("Can you explain what X is?", "What exactly is X?") in the first of
    ``OTHER_WORDINGS`` that is ``acceptable``; anything else not at all."""
    question = dialogue["turns"][position]["question"]
    thing = next(
        (
            question.removeprefix(opening).removesuffix(" is?").removesuffix("?")
            for opening in ("Can you explain what ", "What exactly is ")
            if question.startswith(opening)
        ),
        None,
    )
    if thing is None:
        return None
    for wording, kind in OTHER_WORDINGS.items():
        if wording.format(thing) != question and acceptable(wording.format(thing), kind):
            return {
                "question": wording.format(thing),
                "question_unpolished": wording.format(thing),
                "question_type": kind,
            }
    return None


def test_the_limits_are_a_fifth_and_a_half_and_at_least_one():
    assert [frame_limit(n) for n in (1, 4, 5, 8, 9, 10, 23, 100)] == [1, 1, 1, 1, 1, 2, 4, 20]
    assert [type_limit(n) for n in (1, 2, 7, 8, 35)] == [1, 1, 3, 4, 17]


def test_the_latest_questions_of_a_frame_above_the_limit_are_reworded():
    spread, done = spread_questions(dialogues(ASKED), defined_otherwise)
    counts = Counter(frame_of(turn) for dialogue in spread for turn in dialogue["turns"])
    assert max(counts.values()) <= frame_limit(len(ASKED))
    # two of the three, the latest first; the earliest stays as it was asked
    assert done == Spread(reframed=2, retyped=0)
    asked = [turn["question"] for dialogue in spread for turn in dialogue["turns"]]
    assert asked[0] == ASKED[0]
    assert asked[5] == "What is meant by the journal?"  # the first wording outside the full frames
    assert asked[2] == "What exactly is a dirty page?"  # "What is meant by" holds as many as it may now
    assert [t["question_type"] for d in spread for t in d["turns"]][5] == "factoid"  # the wording's type


def test_a_wording_in_a_frame_at_the_limit_is_not_taken():
    spread, done = spread_questions(dialogues(ASKED), lambda d, t, _: defined_otherwise(d, t, lambda q, k: True))
    assert done.reframed == 1  # the journal's; the dirty page's one wording would put two in "what is meant by …"
    counts = Counter(frame_of(turn) for dialogue in spread for turn in dialogue["turns"])
    assert counts[question_frame("What is meant by the journal?")] == 1


def test_the_latest_questions_of_a_type_above_half_are_reworded_in_another_type():
    factoids = ["What exactly is a savepoint?", "What does the timeout option do?", "What is the purpose of commit()?"]
    factoids += ["What is meant by a cursor?", "When is a LockError raised?"]
    asked = [
        *factoids,
        "How do I open a cursor?",
        "Is it possible to share a connection?",
        "Why would I get a LockError?",
    ]
    spread, done = spread_questions(dialogues(asked), defined_otherwise)
    # five factoids of eight, each in a frame of its own: the latest one with another wording in another type is
    # reworded, and no other type had to give way
    assert done == Spread(reframed=0, retyped=1)
    questions = [t["question"] for d in spread for t in d["turns"]]
    assert questions[0] == "Can you explain what a savepoint is?" and questions[1:] == asked[1:]
    types = Counter(t["question_type"] for d in spread for t in d["turns"])
    assert types["factoid"] == type_limit(len(asked)) == 4 and types["explanation"] == 2
    shares = question_spread(spread, done)
    assert shares["types_above_cap"] == [] and shares["retyped"] == 1 and shares["top_type_share"] == 0.5


def test_a_reworded_turn_keeps_what_it_asked_and_spreading_again_gives_the_same_dialogues():
    spread, _ = spread_questions(dialogues(ASKED), defined_otherwise)
    reworded = [turn for dialogue in spread for turn in dialogue["turns"] if turn[REFRAMED_KEY]]
    assert {turn[REFRAMED_KEY]["question"] for turn in reworded} <= set(ASKED)
    assert all(turn["response"] == f"r{ASKED.index(turn[REFRAMED_KEY]['question'])}" for turn in reworded)
    restored = [as_asked(dialogue) for dialogue in spread]
    assert [t["question"] for d in restored for t in d["turns"]] == ASKED
    assert [t["question_type"] for d in restored for t in d["turns"]] == [type_of(q) for q in ASKED]
    assert all(REFRAMED_KEY not in t for d in restored for t in d["turns"])
    assert spread_questions(restored, defined_otherwise)[0] == spread  # a resumed export writes the same file


def test_a_frame_without_another_wording_stays_and_is_reported():
    spread, done = spread_questions(dialogues(ASKED), lambda *_: None)
    assert done == Spread()
    shares = question_spread(spread, done)
    assert shares["top_frame"] == question_frame(ASKED[0])
    assert shares["top_share"] == pytest.approx(3 / 8, abs=1e-4)
    assert shares["above_cap"] == [question_frame(ASKED[0])] and shares["cap"] == FRAME_CAP


PASSAGE = {
    "id": "guide.html:0-400",
    "title": "Storage › Savepoints",
    "text": "Savepoints\n\nA savepoint is a named point inside a transaction that a later rollback can return to. "
    "Savepoints let a long import undo its last batch without losing the earlier ones.",
}


def test_a_question_is_reworded_as_its_own_fact_with_the_same_answer():
    asked = next(
        question
        for question in ("Can you explain what a savepoint is?", "What exactly is a savepoint?")
        if fact_of(PASSAGE, question) is not None
    )
    others = [found.question for found in rewordings(PASSAGE, [], asked)]
    assert others and asked not in others
    assert len({question_frame(question) for question in [asked, *others]}) == len(others) + 1
    assert all(answer(PASSAGE, question) == answer(PASSAGE, asked) for question in others)
    assert list(rewordings(PASSAGE, [], "What are the colours of a savepoint?")) == []  # not the questioner's


# A glossary of one engine: each page defines a thing, says how to get it and what one may do with it, so a small
# benchmark asks mostly definitions and how-tos, in few frames.
GLOSSARY = [
    ("savepoint", "a named marker inside a transaction that a later rollback returns to", "create a savepoint"),
    ("cursor", "an object that walks the rows of a query result one at a time", "open a cursor"),
    ("journal", "a file that records changes before they reach the database file", "turn off the journal"),
    ("checkpoint", "the moment when the write-ahead log is copied back into the database", "force a checkpoint"),
    ("vacuum", "a rebuild of the database file that reclaims free pages", "shrink the database file"),
    ("trigger", "a stored action that runs when a row changes", "define a trigger"),
    ("collation", "a rule that orders text values in comparisons", "register a collation"),
    ("backup", "a copy of a live database taken page by page", "copy a live database"),
    ("blob handle", "a handle that reads and writes a large value in place", "stream a large value"),
    ("pragma", "a statement that reads or changes an engine setting", "change an engine setting"),
]


def write_glossary(folder: Path) -> Path:
    folder.mkdir()
    for name, genus, task in GLOSSARY:
        call = f"connection.{name.replace(' ', '_')}()"
        (folder / f"{name.replace(' ', '_')}.md").write_text(
            f"# {name.title()}s\n\nA {name} is {genus}.\n\nTo {task}, call {call} with the connection you hold.\n\n"
            f"You can keep several {name}s open on one connection at the same time.\n",
            encoding="utf-8",
        )
    return folder


def test_an_offline_run_rewords_what_a_frame_has_too_many_of_and_records_it(tmp_path):
    workspace = Workspace.resolve(tmp_path / "ws")
    ingest(workspace, write_glossary(tmp_path / "corpus"))
    # a looser overlap bound than the default, so that the things' one-word names have other wordings to take
    context = SynthesisContext(
        workspace=str(workspace.root),
        llm="baseline",
        cluster_size=3,
        seed=4,
        max_overlap=0.9,
        question_types="factoid=0.7,how-to=0.3",
    )
    inputs = {"run_id": "frames", "collection": COLLECTION, "conversations": 4, "turns": 5}
    run_job(
        synthesis_builder,
        job="synthesize",
        workspace=workspace,
        run_id="frames",
        context=context,
        settings={},
        inputs=inputs,
    )
    run = RunDirectory(workspace, "frames")
    stats = json.loads(run.file("stats.json").read_text(encoding="utf-8"))["question_spread"]
    turns = [
        turn for line in run.file("dialogues.jsonl").read_text().splitlines() for turn in json.loads(line)["turns"]
    ]
    counts = Counter(frame_of(turn) for turn in turns)
    assert stats["questions"] == len(turns)
    assert stats["reframed"] + stats["retyped"] == sum(bool(t[REFRAMED_KEY]) for t in turns) > 0
    assert stats["above_cap"] == sorted(f for f, n in counts.items() if n > frame_limit(len(turns)))
    asked = Counter(
        question_frame(t[REFRAMED_KEY]["question_unpolished"]) if t[REFRAMED_KEY] else frame_of(t) for t in turns
    )
    limit = frame_limit(len(turns))
    # the conversations asked more questions above the limit than the benchmark has
    assert sum(max(0, n - limit) for n in counts.values()) < sum(max(0, n - limit) for n in asked.values())
    for turn in (t for t in turns if t[REFRAMED_KEY]):
        before = turn[REFRAMED_KEY]
        assert frame_of(turn) != question_frame(before["question_unpolished"]) and counts[
            frame_of(turn)
        ] <= frame_limit(len(turns))
        assert turn["lexical_overlap"] <= 0.9 and turn["question_type"]
    # the run's queries are the reworded questions
    queries = [json.loads(line)["text"] for line in run.file("beir/queries.jsonl").read_text().splitlines()]
    assert all(any(query.endswith(t["question"]) for query in queries) for t in turns)


def test_the_summary_gives_the_top_frame_and_type_with_what_is_still_above():
    spread, done = spread_questions(dialogues(["Can you explain what a page is?", *ASKED]), lambda *_: None)
    rows = dict(spread_rows(question_spread(spread, done)))
    assert rows["most used question frame (cap), reworded"] == (
        "'can you explain what … is' 44% (20%), 0; still above: 'can you explain what … is'"
    )
    assert rows["most used question type (cap), reworded"] == "explanation 56% (50%), 0; still above: 'explanation'"


def test_a_frame_is_printed_as_written_never_read_as_markup():
    stats = question_spread(*spread_questions(dialogues(ASKED), lambda *_: None))
    stats["top_frame"] = "what does [red]… do"  # a model's question may hold brackets
    row = dict(spread_rows(stats))["most used question frame (cap), reworded"]
    assert Console().render_str(row).plain.startswith("'what does [red]… do' 38% (20%)")


NAMED = {
    "id": "tools.html:0-300",
    "title": "Tools › Spool Server",
    "text": "Spool Server\n\nSpool Server is a tool that runs your import scripts with progress reports in your terminal.",
}


def test_a_spare_frame_only_rewords_and_is_still_recognised():
    definition = next(fact for fact in passage_facts(NAMED["text"], NAMED["title"]) if fact.kind == "definition")
    spare = "Can you tell me about Spool Server?"
    assert spare not in [w.question for w in wordings(definition)]
    assert spare in [w.question for w in wordings(definition, spare=True)]
    refused: list[str] = []
    while asked := ask(NAMED, [], rejected=refused, only=lambda fact: fact == definition):
        assert asked.question != spare  # the questioner never asks in it on its own
        refused.append(asked.question)
    first = refused[0]
    assert spare in [found.question for found in rewordings(NAMED, [], first)]
    assert fact_of(NAMED, spare) == definition and answer(NAMED, spare) == answer(NAMED, first)


def test_only_an_offline_questioners_run_is_reworded_and_telling_builds_no_client():
    scripted = register_model("scripted:frames", ModelSeam(ScriptedBackend(replier=lambda *_: "{}", model="m")))
    offline = register_model("offline:frames", ModelSeam(None))
    assert asks_offline("baseline") and asks_offline(offline)
    assert not asks_offline(scripted) and not asks_offline("openai:gpt-4o-mini")
