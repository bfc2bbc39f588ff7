"""A conversational benchmark with planted faults, and scripted judges, for the audit tests.

Twelve invented substances, a conversation of two turns about each: turn 0 asks one property
by name, turn 1 asks another with "its". Every property has its own document. Faults:

* SWAPPED: the gold of these turns is swapped for a document about another substance;
* PLANTED: an unjudged document states the same answer as the gold, naming the unit the
  question asks for, which the gold omits: a judge should prefer it (a missing gold).

The scripted judges read the prompt as a model would and answer with the lexical logic of
the offline baseline judges, so verdicts follow the texts; judge-b is a stricter grader.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchsmith.agents.judges import AlignmentJudge, ChoiceJudge, FaithfulnessJudge, QualityJudge, ScoreVerdict

SUBSTANCES = [
    "zorbium",
    "quaxil",
    "merolite",
    "plinthane",
    "vexonium",
    "drabulite",
    "kestrine",
    "morvane",
    "trillium",
    "blenthite",
    "caspirol",
    "fendrake",
]
PROPERTIES = [("density", "grams"), ("hardness", "mohs"), ("melting", "kelvin"), ("conductivity", "siemens")]
SWAPPED = {"quaxil_t1", "kestrine_t0", "fendrake_t1"}
PLANTED = {"merolite_t0": "merolite-density-restated", "caspirol_t1": "caspirol-melting-restated"}


def _property(index: int, turn: int) -> tuple[str, str]:
    return PROPERTIES[(index + turn * 2) % len(PROPERTIES)]


def write_audit_benchmark(directory: Path) -> tuple[Path, Path]:
    """``(turns.jsonl, corpus.jsonl)`` in our turn JSONL form."""
    directory.mkdir(parents=True, exist_ok=True)
    corpus, turns = [], []
    for index, name in enumerate(SUBSTANCES):
        for quantity, unit in PROPERTIES:
            value = 10 + (index * 7 + len(quantity)) % 90
            corpus.append(
                {"_id": f"{name}-{quantity}", "title": "", "text": f"{name.capitalize()} {quantity}: {value} {unit}."}
            )
        history: list[dict[str, str]] = []
        for turn in (0, 1):
            quantity, unit = _property(index, turn)
            value = 10 + (index * 7 + len(quantity)) % 90
            question = f"What is the {quantity} of {name} in {unit}?" if turn == 0 else f"And its {quantity} in {unit}?"
            turn_id = f"{name}_t{turn}"
            gold = f"{name}-{quantity}"
            if turn_id in SWAPPED:
                other = SUBSTANCES[(index + 5) % len(SUBSTANCES)]
                gold = f"{other}-{_property(index + 5, 1 - turn)[0]}"
            answer = f"The {quantity} of {name} is {value} {unit}."
            turns.append(
                {
                    "id": turn_id,
                    "conversation_id": name,
                    "turn": turn,
                    "history": list(history),
                    "question": question,
                    "gold_ids": [gold],
                    "answer": answer,
                }
            )
            history.append({"question": question, "answer": answer})
    for turn_id, planted_id in PLANTED.items():
        name = turn_id.split("_")[0]
        index = SUBSTANCES.index(name)
        quantity, unit = _property(index, int(turn_id[-1]))
        value = 10 + (index * 7 + len(quantity)) % 90
        # The gold states the value without the unit; the planted document says it all.
        gold = next(document for document in corpus if document["_id"] == f"{name}-{quantity}")
        gold["text"] = f"{name.capitalize()} {quantity}: {value}."
        corpus.append(
            {
                "_id": planted_id,
                "title": "",
                "text": f"The {quantity} of {name}, measured in {unit}, is {value} {unit}.",
            }
        )
    corpus_path, turns_path = directory / "corpus.jsonl", directory / "turns.jsonl"
    corpus_path.write_text("".join(json.dumps(d) + "\n" for d in corpus), encoding="utf-8")
    turns_path.write_text("".join(json.dumps(t) + "\n" for t in turns), encoding="utf-8")
    return turns_path, corpus_path


def _section(content: str, tag: str) -> str | None:
    match = re.search(rf"<{tag}[^>]*>\n(.*?)\n</{tag}>", content, re.S)
    return match.group(1) if match else None


def _history(conversation: str) -> list[tuple[str, str]]:
    return re.findall(r"User: (.*)\nAgent: (.*)", conversation)


def judge_reply(messages: list[dict[str, str]], schema: type[BaseModel], strict: bool = False) -> BaseModel:
    """What a judge answers to this prompt: the baseline judges' logic on the parsed sections;
    a strict judge takes a point off every score above 1."""
    content = messages[-1]["content"]
    conversation = {
        "history": _history(_section(content, "conversation") or ""),
        "question": _section(content, "question") or "",
    }
    if schema.__name__ == "DocumentChoice":
        documents = re.findall(r'<document number="\d+">\n(.*?)\n</document>', content, re.S)
        return ChoiceJudge(len(documents)).baseline(**conversation, documents=documents)
    assert schema is ScoreVerdict, schema
    answer, document = _section(content, "answer"), _section(content, "document")
    if "Does the DOCUMENT answer" in content:
        verdict = AlignmentJudge().baseline(**conversation, document=document)
    elif "claim of the ANSWER" in content:
        verdict = FaithfulnessJudge().baseline(answer=answer, document=document)
    else:
        verdict = QualityJudge().baseline(**conversation, answer=answer)
    if strict and verdict.score > 1:
        verdict = ScoreVerdict(rationale="strict: " + verdict.rationale, score=verdict.score - 1)
    return verdict


def server_judge(request: dict[str, Any]) -> dict[str, Any]:
    """The scripted judges behind the loopback OpenAI-compatible server, one per model name."""
    from benchsmith.agents.judges import choice_schema
    from tests.openai_server import conversation_messages, requested_schema_name

    name = requested_schema_name(request)
    messages = conversation_messages(request)
    if name == "DocumentChoice":
        pool = len(re.findall(r'<document number="\d+">', messages[-1]["content"]))
        schema: type[BaseModel] = choice_schema(pool)
    else:
        schema = ScoreVerdict
    return judge_reply(messages, schema, strict=request["model"].endswith("judge-b")).model_dump()
