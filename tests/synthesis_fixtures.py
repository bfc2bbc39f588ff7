"""Shared setup for synthesis tests: an ingested, clustered collection and scripted agents."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchsmith.agents.polisher import PolishedQuestion
from benchsmith.agents.questioner import GeneratedQuestion
from benchsmith.agents.responder import GeneratedAnswer
from benchsmith.agents.seam.backends import ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.graphs.contexts.synthesize import SynthesisContext
from benchsmith.graphs.ingest import IngestContext
from benchsmith.graphs.ingest import builder as ingest_builder
from benchsmith.graphs.runtime.resources import register_embedder, register_model
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.graphs.synthesis.run import builder as synthesis_builder
from benchsmith.stores.persistence.workspace import Workspace
from tests.doc_pages import write_pages
from tests.embedders import HashingEmbedder
from tests.openai_server import conversation_messages, requested_schema_name

TOPICS = ["chroma", "bm25", "fusion", "rerank", "nugget", "judge", "cache", "chunk", "cluster", "polish"]
COLLECTION = "docs"


def build_collection(workspace: Workspace, corpus_dir: Path, documents: int = 60, seed: int = 0) -> dict[str, Any]:
    """Ingest ``documents`` one-chunk documentation pages (tests/doc_pages.py), each about one topic,
    with the hashing embedder."""
    write_pages(corpus_dir, TOPICS, documents, seed)
    context = IngestContext(workspace=str(workspace.root), embedder=register_embedder(HashingEmbedder()), min_chars=20)
    return run_job(
        ingest_builder,
        job="ingest",
        workspace=workspace,
        run_id="ingest",
        inputs={"run_id": "ingest", "sources": [str(corpus_dir)], "collection": COLLECTION},
        context=context,
        settings={},
    ).values


def gold_text(messages: list[dict[str, str]], tag: str) -> str:
    """The ``tag`` section of the latest message that has one: after an overlap correction (the question, then why
    it was refused) the passage is in the request before it."""
    for message in reversed(messages):
        if match := re.search(rf"<{tag}[^>]*>\n(.*?)\n</{tag}>", message["content"], re.S):
            return match.group(1)
    raise AssertionError(f"no <{tag}> section in the prompt")


def scripted_reply(messages: list[dict[str, str]], schema: type[BaseModel]) -> BaseModel:
    """Deterministic replies derived from the prompt, as a model would give them."""
    if schema is GeneratedQuestion:
        passage = gold_text(messages, "gold_passage")
        digest = hashlib.sha1((passage + messages[-1]["content"][-40:]).encode()).hexdigest()[:6]
        words = passage.split()
        return GeneratedQuestion(
            # two words of the asker's own keep the question within the default overlap bound (0.62)
            question=f"What does {words[0]} {words[1]} say about {words[3]} for a newcomer in practice ({digest})?",
            rewrite=f"In document {words[1]}, what is said about {words[3]} ({digest})?",
        )
    if schema is GeneratedAnswer:
        # an answer to the question asked: two questions about one passage are answered in words of their own
        asked = hashlib.sha1(messages[-1]["content"].encode()).hexdigest()[:6]
        return GeneratedAnswer(answer=f"It explains ({asked}): " + gold_text(messages, "passage")[:120])
    if schema is PolishedQuestion:
        question = gold_text(messages, "question")
        if "5" in question:  # some rewrites talk about the task: the review must reject them
            return PolishedQuestion(question=f"Here is the rewritten question: {question}")
        return PolishedQuestion(question=re.sub(r"What does \S+ \S+ say", "What does it say", question))
    raise AssertionError(f"unexpected schema {schema}")


def scripted_seam(cache: Any = None, **backend_options: Any) -> tuple[ModelSeam, ScriptedBackend]:
    backend = ScriptedBackend(replier=scripted_reply, **backend_options)
    return ModelSeam(backend, cache=cache), backend


def synthesize(
    workspace: Workspace,
    run_id: str,
    conversations: int,
    turns: int,
    *,
    model: ModelSeam | None = None,
    concurrency: int = 4,
    **context_options: Any,
):
    llm = register_model(f"scripted-{run_id}-{id(model)}", model) if model is not None else "baseline"
    # A scripted model's questions are templates the quality gate would refuse: tests of the graph's
    # mechanics with one run without it, unless they ask for it (tests/test_synthesis_gate.py does).
    if model is not None:
        context_options.setdefault("quality_gate", "off")
    context = SynthesisContext(
        workspace=str(workspace.root), llm=llm, cluster_size=4, concurrency=concurrency, **context_options
    )
    return run_job(
        synthesis_builder,
        job="synthesize",
        workspace=workspace,
        run_id=run_id,
        inputs={"run_id": run_id, "collection": COLLECTION, "conversations": conversations, "turns": turns},
        context=context,
        settings={},
        max_concurrency=concurrency,
    )


SCHEMAS = {schema.__name__: schema for schema in (GeneratedQuestion, GeneratedAnswer, PolishedQuestion)}


def server_replier(request: dict[str, Any]) -> dict[str, Any]:
    """The same scripted agents behind the loopback OpenAI-compatible server, whichever way the
    request asks for structured output; a corrective turn gets the answer to the original request."""
    schema = SCHEMAS[requested_schema_name(request)]
    return scripted_reply(conversation_messages(request), schema).model_dump()
