"""Scripted model replies for every turn type (issue 22), derived from the prompt as a model's
would be: the answerable agents of tests/synthesis_fixtures.py, the typed questioner, the
reference responder, the contribution judge and the pool judge over an unanswerable turn's pool."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from benchsmith.agents.pool_judge import PassageJudgments, judgments_schema
from benchsmith.agents.seam.backends import ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.agents.turn_types import Contributions, ReferenceReply, TypedQuestion
from tests.openai_server import conversation_messages, requested_schema_name
from tests.synthesis_fixtures import SCHEMAS, scripted_reply

SECTION = re.compile(r"<(?P<tag>[a-z_]+)(?P<attributes>[^>]*)>\n(?P<text>.*?)\n</(?P=tag)>", re.S)


def sections(messages: list[dict[str, str]]) -> list[tuple[str, str]]:
    """(tag, text) of each delimited section of the last user message, in order."""
    return [(found["tag"], found["text"]) for found in SECTION.finditer(messages[-1]["content"])]


NUMBERED_PASSAGE = re.compile(r'<passage number="\d+">\n(.*?)\n</passage>', re.S)


def numbered_passages(messages: list[dict[str, str]]) -> list[str]:
    return NUMBERED_PASSAGE.findall(messages[-1]["content"])


def digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:6]


def answers_elsewhere(held_out_text: str) -> bool:
    """Which held-out chunks the scripted judge says a remaining chunk answers: half of them."""
    return int(hashlib.sha1(held_out_text.encode()).hexdigest(), 16) % 2 == 0


def typed_reply(
    messages: list[dict[str, str]], schema: type[BaseModel], rejects: Callable[[str], bool] = answers_elsewhere
) -> BaseModel:
    content = messages[-1]["content"]
    if schema is TypedQuestion:
        kind = re.search(r"Task \(([a-z-]+)\)", content)[1]
        texts = [text for tag, text in sections(messages) if tag != "conversation"]
        words = texts[0].split()
        question = f"How does {words[1]} {words[3]} relate to {words[-2]} ({kind}, {digest(content)})?"
        return TypedQuestion(question=question, rewrite=question)
    if schema is ReferenceReply:
        passages = numbered_passages(messages)
        if "does not answer the latest question" in content:
            return ReferenceReply(answer="The documentation does not answer this question.")
        if "ask one clarifying question" in content:
            return ReferenceReply(answer="Do you mean " + " or ".join(p.split()[1] for p in passages) + "?")
        answer = " ".join(" ".join(p.split()[:12]) for p in passages)
        if "which part the documentation does not cover" in content:
            answer += " The documentation does not cover the other part."
        return ReferenceReply(answer=answer)
    if schema is Contributions:
        return Contributions(contributes=[True] * len(numbered_passages(messages)))
    if issubclass(schema, PassageJudgments):
        passages = numbered_passages(messages)
        rejected = rejects(passages[0])
        return schema.model_validate(
            {
                "judgments": [
                    {
                        "passage": number,
                        "rationale": "scripted",
                        "relevant": number == 1 or (number == 2 and rejected),
                        "facts": [text.split()[0]] if number == 1 or (number == 2 and rejected) else [],
                    }
                    for number, text in enumerate(passages, start=1)
                ]
            }
        )
    return scripted_reply(messages, schema)


def typed_seam(
    cache: Any = None, rejects: Callable[[str], bool] = answers_elsewhere
) -> tuple[ModelSeam, ScriptedBackend]:
    backend = ScriptedBackend(replier=lambda messages, schema: typed_reply(messages, schema, rejects))
    return ModelSeam(backend, cache=cache), backend


TYPED_SCHEMAS = {**SCHEMAS, **{schema.__name__: schema for schema in (TypedQuestion, ReferenceReply, Contributions)}}


def typed_server_replier(request: dict[str, Any]) -> dict[str, Any]:
    """The same replies behind the loopback OpenAI-compatible server."""
    name = requested_schema_name(request)
    messages = conversation_messages(request)
    schema = judgments_schema(len(numbered_passages(messages))) if name == "PassageJudgments" else TYPED_SCHEMAS[name]
    return typed_reply(messages, schema).model_dump()
