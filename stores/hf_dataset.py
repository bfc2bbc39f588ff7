"""A benchmark as a Hugging Face dataset folder: one Parquet file per configuration and a
``README.md`` dataset card whose YAML front matter declares them, so that
``datasets.load_dataset(folder, "corpus")`` (or ``"queries"``, ``"qrels"``, ``"conversations"``)
reads it, from disk or once pushed to the Hub. Each configuration has one split, ``test``.

* ``corpus``: ``_id``, ``title``, ``text`` (BEIR's columns);
* ``queries``: ``_id``, ``text`` (the turn with its history), ``conversation_id``, ``turn``,
  ``question``, ``rewrite``, ``response``, ``switch`` and the labels (``answerability``,
  ``question_type``, ``standalone``);
* ``qrels``: ``query-id``, ``corpus-id``, ``score`` (turns without gold have none);
* ``conversations``: one row per conversation, its turns a list (stores/formats/benchmark_files.py).

The card says how the benchmark was made (the settings of its run), its label counts and its
audit verdict (or that no audit of it exists).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from benchsmith.stores.formats.trec import Qrel
from benchsmith.stores.persistence.files import atomic_writer

SPLIT = "test"
CARD_FILE = "README.md"
CORPUS_ROWS_PER_GROUP = 10_000

CORPUS_SCHEMA = pa.schema([("_id", pa.string()), ("title", pa.string()), ("text", pa.string())])
QUERIES_SCHEMA = pa.schema(
    [
        ("_id", pa.string()),
        ("text", pa.string()),
        ("conversation_id", pa.string()),
        ("turn", pa.int64()),
        ("question", pa.string()),
        ("rewrite", pa.string()),
        ("response", pa.string()),
        ("switch", pa.string()),
        ("answerability", pa.string()),
        ("question_type", pa.string()),
        ("standalone", pa.bool_()),
    ]
)
QRELS_SCHEMA = pa.schema([("query-id", pa.string()), ("corpus-id", pa.string()), ("score", pa.int64())])
TURN_TYPE = pa.struct(
    [
        ("index", pa.int64()),
        ("question", pa.string()),
        ("question_unpolished", pa.string()),
        ("rewrite", pa.string()),
        ("response", pa.string()),
        ("gold_ids", pa.list_(pa.string())),
        ("switch", pa.string()),
        ("similarity_to_previous", pa.float64()),
        ("answerability", pa.string()),
        ("question_type", pa.string()),
        ("standalone", pa.bool_()),
        ("held_out_ids", pa.list_(pa.string())),
        ("candidate_ids", pa.list_(pa.string())),
        ("turn_type", pa.string()),
    ]
)
CONVERSATIONS_SCHEMA = pa.schema(
    [("conversation_id", pa.string()), ("cluster_id", pa.int64()), ("seed", pa.int64()), ("turns", pa.list_(TURN_TYPE))]
)
CONFIGS = ("corpus", "queries", "qrels", "conversations")


@dataclass(frozen=True)
class CardFacts:
    """What the dataset card states besides the files."""

    name: str
    source: str  # where the benchmark comes from, in a sentence
    settings: Mapping[str, Any]  # of the run that made it
    label_counts: Mapping[str, Any]  # stats.json's "labels": {label: {value: turns}} or {name: count}
    audit: Mapping[str, Any] | None  # {"run_id", "label", "explanation"}; None: never audited


def write_hf_dataset(
    directory: Path,
    corpus: Iterable[Mapping[str, Any]],
    queries: Sequence[Mapping[str, Any]],
    qrels: Sequence[Qrel],
    dialogues: Sequence[Mapping[str, Any]],
    facts: CardFacts,
) -> dict[str, int]:
    """The folder (module docstring); returns the rows of each configuration."""
    directory.mkdir(parents=True, exist_ok=True)
    rows = {"corpus": _write_corpus(directory / "corpus.parquet", corpus)}
    query_rows = [
        {
            "_id": query["_id"],
            "text": query["text"],
            **{column: query.get("metadata", {}).get(column) for column in QUERIES_SCHEMA.names[2:]},
        }
        for query in queries
    ]
    rows["queries"] = _write_table(directory / "queries.parquet", query_rows, QUERIES_SCHEMA)
    rows["qrels"] = _write_table(
        directory / "qrels.parquet", [{"query-id": q, "corpus-id": d, "score": s} for q, d, s in qrels], QRELS_SCHEMA
    )
    conversation_rows = [
        {
            "conversation_id": dialogue["conversation_id"],
            "cluster_id": dialogue.get("cluster_id"),
            "seed": dialogue.get("seed", 0),
            "turns": [{field.name: turn.get(field.name) for field in TURN_TYPE} for turn in dialogue["turns"]],
        }
        for dialogue in dialogues
    ]
    rows["conversations"] = _write_table(directory / "conversations.parquet", conversation_rows, CONVERSATIONS_SCHEMA)
    with atomic_writer(directory / CARD_FILE) as handle:
        handle.write(dataset_card(facts, rows))
    return rows


def _write_table(path: Path, rows: list[dict[str, Any]], schema: pa.Schema) -> int:
    with atomic_writer(path, binary=True) as handle:
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), handle)
    return len(rows)


def _write_corpus(path: Path, documents: Iterable[Mapping[str, Any]]) -> int:
    """Row group by row group: a corpus need not fit in memory twice."""
    count = 0
    iterator = iter(documents)
    with atomic_writer(path, binary=True) as handle, pq.ParquetWriter(handle, CORPUS_SCHEMA) as writer:
        while batch := list(islice(iterator, CORPUS_ROWS_PER_GROUP)):
            writer.write_table(
                pa.Table.from_pylist(
                    [{"_id": str(d["_id"]), "title": str(d.get("title") or ""), "text": d["text"]} for d in batch],
                    schema=CORPUS_SCHEMA,
                )
            )
            count += len(batch)
    return count


def dataset_card(facts: CardFacts, rows: Mapping[str, int]) -> str:
    front_matter = {
        "pretty_name": facts.name,
        "tags": ["benchsmith", "conversational-retrieval", "rag"],
        "task_categories": ["text-retrieval"],
        "configs": [
            {"config_name": config, "data_files": [{"split": SPLIT, "path": f"{config}.parquet"}]} for config in CONFIGS
        ],
    }
    lines = [
        "---",
        yaml.safe_dump(front_matter, sort_keys=False).rstrip(),
        "---",
        "",
        f"# {facts.name}",
        "",
        f"A conversational retrieval benchmark made with benchsmith. {facts.source}",
        "",
        "## Files",
        "",
        "| configuration | rows | load with |",
        "| --- | ---: | --- |",
    ]
    lines += [
        f'| {config} | {rows.get(config, 0):,} | `load_dataset(PATH, "{config}", split="{SPLIT}")` |'
        for config in CONFIGS
    ]
    lines += [
        "",
        "Turns without gold (unanswerable, underspecified) are among the queries but have no qrels; "
        "their labels say why.",
        "",
        "## How it was made",
        "",
    ]
    if facts.settings:
        lines += ["| setting | value |", "| --- | --- |"]
        lines += [f"| {name} | {_cell(value)} |" for name, value in sorted(facts.settings.items())]
    else:
        lines.append("The run's settings were not recorded.")
    lines += ["", "## Labels", ""]
    totals = {name: value for name, value in facts.label_counts.items() if not isinstance(value, Mapping)}
    for label, values in facts.label_counts.items():
        if isinstance(values, Mapping) and values:
            lines += [f"| {label.replace('_', ' ')} | turns |", "| --- | ---: |"]
            lines += [f"| {value} | {count:,} |" for value, count in values.items()]
            lines.append("")
    lines += [f"- {name.replace('_', ' ')}: {count:,}" for name, count in totals.items()]
    lines += [""] if totals else []
    lines += ["## Audit", ""]
    if facts.audit:
        lines.append(f"Audit run `{facts.audit['run_id']}`: **{facts.audit['label']}**. {facts.audit['explanation']}")
    else:
        lines.append(
            "None: no audit of this benchmark exists (`benchsmith audit RUN` grades it with a judge ensemble)."
        )
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    text = "" if value is None else ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
    return text.replace("|", "\\|").replace("\n", " ") or "—"
