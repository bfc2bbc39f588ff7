"""One row of a hard-negative build (MultiConIR): the conditions extracted from a source document, the queries of 1..N conditions, the hard negatives rewritten to miss some of them, and the judges' verification of each negative."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchsmith.agents.condition_extractor import ConditionExtractor
from benchsmith.agents.condition_judge import ConditionCountJudge
from benchsmith.agents.condition_queries import ConditionQueryWriter, instruction_query
from benchsmith.agents.condition_text import normalize
from benchsmith.agents.negative_rewriter import NegativeRewriter
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.graphs.contexts.hardneg import HardnegContext
from benchsmith.tools.benchmark.condition_documents import (
    Construction,
    Span,
    blamed_conditions,
    build_text,
    constructions,
    locate_conditions,
)


@dataclass(frozen=True)
class RowAgents:
    llm: ModelSeam  # extractor, query writer, rewriter
    judge: ModelSeam


def build_row(
    source: dict[str, Any], agents: RowAgents, context: HardnegContext, related: list[str] | None = None
) -> dict[str, Any]:
    """Extract, write queries, rewrite, replace and verify: the row's record (kept or dropped).
    ``related``: texts of the documents most like this one (the baseline rewriter's name pool)."""
    count, text = context.conditions, source["text"]
    base = {"id": source["id"], "title": source.get("title", "")}
    extracted = agents.llm.run(
        ConditionExtractor(),
        document=text,
        title=base["title"],
        count=count,
        domain=context.domain,
        features=context.features,
        negatives=context.negatives,
        related=related or [],
    )
    located = locate_conditions(text, extracted.sentences, count)
    rejected = [{"sentence": sentence, "reason": reason} for sentence, reason in located.rejected]
    if len(located.spans) < count:
        return {
            **base,
            "status": "dropped",
            "reason": "fewer_conditions",
            "detail": f"{len(located.spans)} of {count} condition sentences found verbatim",
            "rejected": rejected,
        }
    written = agents.llm.run(
        ConditionQueryWriter(count), sentences=located.sentences, domain=context.domain, features=context.features
    )
    phrases = [normalize(phrase) for phrase in written.conditions]
    conditions = [
        {"sentence": sentence, "start": span.start, "end": span.end, "condition": phrase}
        for sentence, span, phrase in zip(located.sentences, located.spans, phrases)
    ]
    for number in range(1, count + 1):
        _rewrite(agents.llm, conditions, number, text, context, attempt=1, related=related)
    verified = verify_documents(text, located.spans, conditions, phrases, agents, context, related)
    record = {
        **base,
        "conditions": conditions,
        "rejected": rejected,
        "queries": {
            "instruction": [instruction_query(phrases[:k]) for k in range(1, count + 1)],
            "descriptive": [normalize(query) for query in written.descriptive],
        },
        "documents": verified,
    }
    positive = verified["Positive"]
    if not positive["verified"]:
        return {
            **record,
            "status": "dropped",
            "reason": "positive_fails",
            "detail": f"the judge finds {len(positive['satisfied'])} of {count} conditions in the positive",
        }
    tasks = {
        "task1": all(verified[f"Miss{k}"]["verified"] for k in range(1, count + 1)),
        "task2": all(verified[f"HN{j}"]["verified"] for j in range(1, count + 1)),
    }
    if not any(tasks.values()):
        return {
            **record,
            "status": "dropped",
            "reason": "negatives_fail",
            "tasks": tasks,
            "detail": "verification dropped a single-miss and a ladder document",
        }
    return {**record, "status": "kept", "tasks": tasks}


def _rewrite(
    seam: ModelSeam,
    conditions: list[dict[str, Any]],
    number: int,
    document: str,
    context: HardnegContext,
    attempt: int,
    related: list[str] | None = None,
) -> None:
    """(Re)write the negative of condition ``number`` in place."""
    condition = conditions[number - 1]
    previous = condition.get("negative") if attempt > 1 else None
    rewritten = seam.run(
        NegativeRewriter(),
        sentence=condition["sentence"],
        condition=condition["condition"],
        kind=context.negatives,
        domain=context.domain,
        document=document,
        attempt=attempt,
        previous=previous,
        related=related or [],
    )
    condition.update(negative=normalize(rewritten.sentence), change=rewritten.change, attempts=attempt)


def verify_documents(
    text: str,
    spans: list[Span],
    conditions: list[dict[str, Any]],
    phrases: list[str],
    agents: RowAgents,
    context: HardnegContext,
    related: list[str] | None = None,
) -> dict[str, dict[str, Any]]:
    """Build and judge every document; rebuild the ones whose count disagrees once (their
    blamed sentences rewritten), and mark those still disagreeing as not verified."""
    count = context.conditions
    plans = constructions(count)

    def judged(construction: Construction) -> dict[str, Any]:
        negatives = [condition["negative"] for condition in conditions]
        document = build_text(text, spans, negatives, construction)
        unchanged = [
            c
            for c in construction.replaced
            if normalize(conditions[c - 1]["negative"]) == normalize(conditions[c - 1]["sentence"])
        ]
        if unchanged:  # a rewrite that changed nothing cannot miss its condition: no need to ask
            return {
                "text": document,
                "expected": list(construction.expected),
                "satisfied": None,
                "verified": False,
                "unchanged": unchanged,
            }
        verdict = agents.judge.run(
            ConditionCountJudge(construction.conditions),
            conditions=phrases[: construction.conditions],
            document=document,
        )
        satisfied = list(verdict.satisfied)
        return {
            "text": document,
            "expected": list(construction.expected),
            "satisfied": satisfied,
            "verified": len(satisfied) == len(construction.expected),
        }

    results = {plan.key: {**judged(plan), "rebuilt": False} for plan in plans}
    failed = [plan for plan in plans if plan.replaced and not results[plan.key]["verified"]]
    blamed: set[int] = set()
    for plan in failed:
        result = results[plan.key]
        blamed |= set(result["unchanged"]) if result.get("unchanged") else blamed_conditions(plan, result["satisfied"])
    if not results["Positive"]["verified"] or not blamed:
        return results
    for number in sorted(blamed):
        _rewrite(agents.llm, conditions, number, text, context, attempt=2, related=related)
    for plan in plans:
        if blamed & set(plan.replaced):
            results[plan.key] = {**judged(plan), "rebuilt": True}
    return results
