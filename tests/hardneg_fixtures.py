"""Shared setup for the hardneg build tests: a small corpus of station descriptions and scripted
agents that answer from the prompt, as a model would (independent of the offline baselines).

Every sentence of a station's description names the station, so any prompt (a document, a
sentence, a condition) says which source document it belongs to.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchsmith.agents.condition_extractor import ExtractedConditions
from benchsmith.agents.condition_judge import condition_count_schema
from benchsmith.agents.condition_queries import queries_schema
from benchsmith.agents.negative_rewriter import NegativeSentence
from benchsmith.agents.seam.backends import ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam

STATIONS = ["Ashford", "Brixton", "Carlow", "Dunmore", "Elgin", "Fenwick", "Galway", "Hexham", "Inverness", "Jarrow"]


def station_text(index: int) -> str:
    name = STATIONS[index]
    return (
        f"{name} station was opened in {1880 + 7 * index} by the regional railway.\n"
        f"{name} has {4 + index} platforms serving {12 + 3 * index} trains an hour.\n\n"
        f"The clock tower of {name} is {30 + index} metres tall and faces the harbour. "
        f"The architect of {name} was born in {1840 + index} in a nearby village. "
        f"About {2000 + 100 * index} passengers pass through {name} on a weekday. "
        f"The cafe of {name} station has {20 + index} seats near the main entrance."
    )


def write_corpus(directory: Path, stations: int = 6, short: bool = True) -> Path:
    """``stations`` descriptions (six condition sentences each) and, with ``short``, one with only two."""
    directory.mkdir(parents=True, exist_ok=True)
    for index in range(stations):
        (directory / f"{STATIONS[index].lower()}.txt").write_text(station_text(index), encoding="utf-8")
    if short:
        (directory / "zz-short.txt").write_text(
            "Zennor halt was opened in 1901 near the moor. Zennor halt has 1 platform and a shelter for 9 people.",
            encoding="utf-8",
        )
    return directory


def sections(messages: list[dict[str, str]], tag: str) -> list[str]:
    return re.findall(rf"<{tag}(?: [^>]*)?>\n(.*?)\n</{tag}>", messages[-1]["content"], re.S)


def _bumped(sentence: str, step: int) -> str:
    """The sentence with its first number raised by ``step``: the scripted subtle rewrite."""
    return re.sub(r"\d+", lambda match: str(int(match.group(0)) + step), sentence, count=1)


class ScriptedHardnegAgents:
    """Replies by schema name, from the prompt. ``lie_about`` plants a judge mismatch: documents
    judged against exactly ``conditions`` conditions that contain ``marker`` get every condition
    counted satisfied."""

    def __init__(self, lie_about: tuple[int, str] | None = None, paraphrase_first: str | None = None):
        self.lie_about = lie_about
        self.paraphrase_first = paraphrase_first  # a station whose first sentence comes back paraphrased
        self.calls: list[tuple[str, str]] = []  # (schema name, the prompt's user content)

    def reply(self, name: str, messages: list[dict[str, str]]) -> dict[str, Any]:
        self.calls.append((name, messages[-1]["content"]))
        if name == "ExtractedConditions":
            (document,) = sections(messages, "document")
            sentences = [s.strip() for s in re.split(r"(?<=\.)\s+", document) if re.search(r"\d", s)]
            if self.paraphrase_first and self.paraphrase_first in document:
                sentences[0] = sentences[0].replace("was opened", "opened")  # not verbatim: must be rejected
            return {"sentences": sentences}
        if name == "MultiConditionQueries":
            conditions = [s.rstrip(".") for s in sections(messages, "sentence")]
            return {
                "conditions": conditions,
                "descriptive": [
                    f"Looking for a station where {' and '.join(conditions[:k])}."
                    for k in range(1, len(conditions) + 1)
                ],
            }
        if name == "NegativeSentence":
            (sentence,) = sections(messages, "sentence")
            step = 2000 if sections(messages, "previous") else 1000
            return {"change": f"first number +{step}", "sentence": _bumped(sentence, step)}
        if name == "ConditionCount":
            conditions = sections(messages, "condition")
            (document,) = sections(messages, "document")
            flat = " ".join(document.split())
            satisfied = [number for number, condition in enumerate(conditions, start=1) if condition in flat]
            if self.lie_about and len(conditions) == self.lie_about[0] and self.lie_about[1] in flat:
                satisfied = list(range(1, len(conditions) + 1))
            return {"rationale": "scripted: verbatim containment", "satisfied": satisfied}
        raise AssertionError(f"unexpected schema {name}")

    def scripted(self, messages: list[dict[str, str]], schema: type[BaseModel]) -> BaseModel:
        return schema(**self.reply(schema.__name__, messages))

    def seam(self) -> ModelSeam:
        return ModelSeam(ScriptedBackend(replier=self.scripted))

    def server_replier(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = [{"role": m["role"], "content": m["content"]} for m in request["messages"]]
        return self.reply(request["response_format"]["json_schema"]["name"], messages)


SCHEMA_NAMES = {
    ExtractedConditions.__name__,
    queries_schema(3).__name__,
    NegativeSentence.__name__,
    condition_count_schema(3).__name__,
}
