"""Shared setup for the configuration-search tests: a small corpus with complete relevance
labels, real queries, and scripted judges that read the prompt as a model would."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchsmith.agents.pool_judge import FactMatch, PassageJudgments
from benchsmith.agents.seam.backends import Message, ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.graphs.runtime.resources import register_embedder, register_model
from benchsmith.jobs.select import select
from tests.embedders import HashingEmbedder

PASSAGE = re.compile(r'<passage number="(\d+)">\n(.*?)\n</passage>', re.S)
QUESTION = re.compile(r"<question>\n(.*?)\n</question>", re.S)

# Topics, each with documents that answer its query and documents that only mention its words.
TOPICS = {
    "tide": (
        "When is high tide in the harbour?",
        [
            "High tide in the harbour comes at six in the evening on weekdays.",
            "The harbour master posts the high tide times at the pier each morning.",
            "Spring tides raise the harbour water highest at new and full moon.",
        ],
    ),
    "bread": (
        "How long should sourdough bread rise?",
        [
            "Sourdough bread should rise for four to six hours at room temperature.",
            "A cold rise in the fridge overnight gives sourdough bread a deeper flavour.",
        ],
    ),
    "bike": (
        "How do I fix a flat bike tyre?",
        [
            "To fix a flat bike tyre, remove the tube, find the hole and glue a patch over it.",
            "A flat bike tyre is often caused by a thorn; check the tyre for sharp objects before patching.",
            "Pump the repaired bike tyre to the pressure printed on its sidewall.",
        ],
    ),
    "tea": (
        "What water temperature suits green tea?",
        ["Green tea tastes best brewed with water at about 80 degrees, below boiling."],
    ),
    "moss": (
        "How can I remove moss from a roof?",
        [
            "Moss on a roof can be removed with a soft brush and a zinc sulphate wash.",
            "Zinc strips along the ridge stop moss coming back on a roof.",
        ],
    ),
}
DISTRACTORS = [
    "The town museum shows old maps of the harbour and the coast road.",
    "Bread rolls and cakes are sold at the market on Saturdays.",
    "The bike shop opens at nine and sells helmets and lights.",
    "A tea room near the station serves scones in the afternoon.",
    "The roof garden of the library grows herbs and flowers.",
    "Weather forecasts for the weekend promise sun and light wind.",
    "The ferry timetable changes in winter for the short days.",
    "Local history talks are held in the village hall every month.",
]


def write_labelled_corpus(directory: Path) -> tuple[Path, Path, Path]:
    """corpus.jsonl, queries.jsonl (real queries, ids q-<topic>) and qrels.tsv labelling every
    relevant document: complete ground truth."""
    directory.mkdir(parents=True, exist_ok=True)
    documents, queries, qrels = [], [], []
    for topic, (question, relevant) in TOPICS.items():
        queries.append({"id": f"q-{topic}", "question": question})
        for number, text in enumerate(relevant):
            documents.append({"_id": f"{topic}-{number}", "title": "", "text": text})
            qrels.append((f"q-{topic}", f"{topic}-{number}", 1))
    documents += [{"_id": f"other-{number}", "title": "", "text": text} for number, text in enumerate(DISTRACTORS)]
    corpus, query_file, qrels_file = directory / "corpus.jsonl", directory / "queries.jsonl", directory / "qrels.tsv"
    corpus.write_text("".join(json.dumps(document) + "\n" for document in documents), encoding="utf-8")
    query_file.write_text("".join(json.dumps(query) + "\n" for query in queries), encoding="utf-8")
    qrels_file.write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{r}\n" for q, d, r in qrels), encoding="utf-8"
    )
    return corpus, query_file, qrels_file


def passages_of(messages: list[Message]) -> list[str]:
    return [text for _, text in PASSAGE.findall(messages[-1]["content"])]


def question_of(messages: list[Message]) -> str:
    match = QUESTION.search(messages[-1]["content"])
    assert match, "no <question> section in the prompt"
    return match.group(1)


FactQuoter = Callable[[str, str], list[str]]  # (question, passage) -> facts ([] = not relevant)


def judge_replier(
    quote: FactQuoter, seen: list[tuple[str, str]] | None = None, same_fact: Callable[[str, str], bool] | None = None
) -> Callable[[list[Message], type], BaseModel]:
    """A scripted judge: ``quote`` decides each passage; every (question, passage) judged is
    appended to ``seen``; fact near-matches are decided by ``same_fact`` (default: never the same)."""

    def reply(messages: list[Message], schema: type) -> BaseModel:
        if schema is FactMatch:
            first, second = re.findall(r"<fact_[ab]>\n(.*?)\n</fact_[ab]>", messages[-1]["content"], re.S)
            return FactMatch(rationale="scripted", same=bool(same_fact and same_fact(first, second)))
        assert issubclass(schema, PassageJudgments), schema
        question = question_of(messages)
        judgments = []
        for number, passage in enumerate(passages_of(messages), start=1):
            if seen is not None:
                seen.append((question, passage))
            facts = quote(question, passage)
            judgments.append({"passage": number, "rationale": "scripted", "relevant": bool(facts), "facts": facts})
        return schema.model_validate({"judgments": judgments})

    return reply


def scripted_judge(
    name: str,
    quote: FactQuoter,
    seen: list[tuple[str, str]] | None = None,
    same_fact: Callable[[str, str], bool] | None = None,
) -> str:
    """Register a scripted judge under ``name``; returns the name (a judge spec)."""
    backend = ScriptedBackend(replier=judge_replier(quote, seen, same_fact), model=name)
    return register_model(name, ModelSeam(backend))


def run_select(workspace: Path, queries: Path, corpus: Path, run_id: str, **options: Any):
    """``benchsmith.select`` with the hashing embedder (fast, deterministic) and few resamples."""
    options.setdefault("resamples", 200)
    return select(
        queries,
        corpus=[corpus],
        embedder=register_embedder(HashingEmbedder()),
        workspace=workspace,
        run_id=run_id,
        **options,
    )
