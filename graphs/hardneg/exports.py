"""What a hard-negative build exports from its rows: the dataset rows in the reference layout, the BEIR exports of each task, and the build's statistics."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchsmith.stores.formats.multiconir import DatasetRow


def dataset_row(record: dict[str, Any]) -> DatasetRow:
    """A kept row's queries and documents; a document that failed verification is None."""
    documents = record["documents"]
    count = len(record["conditions"])

    def text(key: str) -> str | None:
        return documents[key]["text"] if documents[key]["verified"] else None

    return DatasetRow(
        id=record["id"],
        title=record.get("title", ""),
        instruction=record["queries"]["instruction"],
        descriptive=record["queries"]["descriptive"],
        positive=documents["Positive"]["text"],
        ladder=[text(f"HN{j}") for j in range(1, count + 1)],
        single_miss=[text(f"Miss{k}") for k in range(1, count + 1)],
        conditions=[
            {key: condition[key] for key in ("sentence", "negative", "condition")} for condition in record["conditions"]
        ],
    )


# A task's BEIR export: its corpus, its queries and its qrels (query id, document id, relevance).
BeirExport = tuple[list[dict[str, Any]], list[dict[str, Any]], list[tuple[str, str, int]]]


def beir_exports(rows: list[DatasetRow], count: int) -> dict[str, BeirExport]:
    """Per task, (corpus, queries, qrels). Task 1: Query_k, its positive (relevance 1) and its
    single-miss negative (judged 0). Tasks 2 and 3: the instruction- and descriptive-style
    Query_N, graded by the conditions each document meets (Positive N, HN_j N − j)."""
    exports: dict[str, BeirExport] = {}
    task1_rows = [row for row in rows if row.has_task1]
    corpus = _corpus(task1_rows, count, "Miss", lambda row: row.single_miss)
    queries = [
        {
            "_id": f"{row.id}#Q{k}",
            "text": row.instruction[k - 1],
            "metadata": {"row": row.id, "conditions": k, "style": "instruction"},
        }
        for row in task1_rows
        for k in range(1, count + 1)
    ]
    qrels = [
        (f"{row.id}#Q{k}", doc_id, relevance)
        for row in task1_rows
        for k in range(1, count + 1)
        for doc_id, relevance in ((f"{row.id}#P", 1), (f"{row.id}#Miss{k}", 0))
    ]
    exports["task1"] = (corpus, queries, qrels)
    ladder_rows = [row for row in rows if row.has_ladder]
    ladder_corpus = _corpus(ladder_rows, count, "HN", lambda row: row.ladder)
    for task, style, prefix in (("task2", "instruction", "Q"), ("task3", "descriptive", "NQ")):
        queries = [
            {
                "_id": f"{row.id}#{prefix}{count}",
                "text": getattr(row, style)[-1],
                "metadata": {"row": row.id, "conditions": count, "style": style},
            }
            for row in ladder_rows
        ]
        qrels = [(f"{row.id}#{prefix}{count}", f"{row.id}#P", count) for row in ladder_rows]
        qrels += [
            (f"{row.id}#{prefix}{count}", f"{row.id}#HN{j}", count - j)
            for row in ladder_rows
            for j in range(1, count + 1)
        ]
        exports[task] = (ladder_corpus, queries, qrels)
    return exports


def build_statistics(records: list[dict[str, Any]], count: int) -> dict[str, Any]:
    """Rows kept and dropped (by reason), and how verification went per kind of document."""
    dropped: dict[str, int] = {}
    for record in records:
        if record["status"] == "dropped":
            dropped[record["reason"]] = dropped.get(record["reason"], 0) + 1
    verification = {"checked": 0, "verified_first_time": 0, "rebuilt_and_verified": 0, "dropped": 0}
    by_kind = {kind: dict(verification) for kind in ("ladder", "single_miss")}
    # Rows dropped for their positive: their negatives were judged against a failed extraction.
    judged_records = [
        record for record in records if record.get("documents") and record.get("reason") != "positive_fails"
    ]
    for record in judged_records:
        for key, document in record["documents"].items():
            if key == "Positive":
                continue
            kind = "ladder" if key.startswith("HN") else "single_miss"
            outcome = (
                "dropped"
                if not document["verified"]
                else "rebuilt_and_verified"
                if document["rebuilt"]
                else "verified_first_time"
            )
            for tally in (verification, by_kind[kind]):
                tally["checked"] += 1
                tally[outcome] += 1
    kept = [record for record in records if record["status"] == "kept"]
    return {
        "conditions": count,
        "documents": len(records),
        "rows": len(kept),
        "task_rows": {
            "task1": sum(record["tasks"]["task1"] for record in kept),
            "task2": sum(record["tasks"]["task2"] for record in kept),
            "task3": sum(record["tasks"]["task2"] for record in kept),
        },
        "dropped": dropped,
        "verification": verification,
        "verification_by_kind": by_kind,
        "rewrites_redone": sum(
            condition.get("attempts", 1) > 1 for record in records for condition in record.get("conditions", [])
        ),
        "conditions_rejected": sum(len(record.get("rejected", [])) for record in records),
    }


def _corpus(
    rows: list[DatasetRow], count: int, prefix: str, negatives: Callable[[DatasetRow], list[str | None]]
) -> list[dict[str, Any]]:
    """Each row's positive (``<row>#P``), then the ``count`` documents of each row's ``negatives``
    list in order (``<row>#<prefix>1``...)."""
    corpus = [{"_id": f"{row.id}#P", "title": row.title, "text": row.positive} for row in rows]
    return corpus + [
        {"_id": f"{row.id}#{prefix}{number}", "title": row.title, "text": negatives(row)[number - 1]}
        for row in rows
        for number in range(1, count + 1)
    ]
