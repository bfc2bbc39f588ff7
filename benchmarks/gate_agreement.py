"""How far the offline quality gate agrees with readers: readings in, agreement, recall and precision out.

The readings (``data/readings/<half>/*.jsonl``, written from ``benchmarks/reading_sheet.py`` sheets
by readers who got only the rubric) name each turn's question, reply, earlier turns and chunk ids.
This script gives each turn to the gate (evals/quality_gate/) with the passages those ids name in
the corpus's collection (ingested by ``benchmarks/doc_corpora.py``) and, for an unanswerable or
partial turn, BM25's and dense retrieval's top 10 chunks of the collection less its held-out chunks
(as synthesis looks for the answer), and compares the gate's verdict with the reader's::

    .venv/bin/python benchmarks/gate_agreement.py data/readings/test/*.jsonl --workspace /work/corpora/ws

Per corpus and half, and over all: turns read, broken by the reader, flagged by the gate, agreement
(the share of turns where both say broken or both say ok), recall (of the reader's broken, the
share the gate flags) and precision; then the classes side by side and, with ``--list``, every
turn they disagree on. The issue's bound on the test half: agreement at least 0.8, recall at
least 0.7. A turn whose chunks the workspace's collection does not hold (read on a collection chunked
otherwise, before a change of the chunker) is not judged, and each sheet's count of them is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchsmith.tools.offline import offline_environment

offline_environment()

from benchsmith.evals.quality_gate import TurnEvidence, judge_turn  # noqa: E402
from benchsmith.evals.quality_gate.reader_agreement import reader_agreement  # noqa: E402
from benchsmith.graphs.runtime.resources import chroma_client  # noqa: E402
from benchsmith.stores.persistence.vectors import VectorStore  # noqa: E402
from benchsmith.stores.persistence.workspace import Workspace  # noqa: E402
from benchsmith.tools.retrieval.bm25 import BM25Index, top_scored  # noqa: E402
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction  # noqa: E402

POOL_DEPTH = 10  # each retriever's top chunks, as synthesis (graphs/synthesis/turn_checks.py UNANSWERABLE_POOL_DEPTH)
MIN_AGREEMENT, MIN_RECALL = 0.8, 0.7


class Collection:
    """A corpus's collection: texts by id, BM25 over all of it, dense search."""

    def __init__(self, workspace: Workspace, name: str):
        self.name = name
        self.store = VectorStore.open_existing(
            chroma_client(workspace, None), name, lambda spec: ChromaEmbeddingFunction(spec=spec)
        )
        ids, texts, self.records = [], [], {}
        for page in self.store.iter_all():
            for chunk_id, text, metadata in zip(page["ids"], page["documents"], page["metadatas"]):
                self.records[chunk_id] = ((metadata or {}).get("title", ""), text)
                ids.append(chunk_id)
                texts.append(f"{(metadata or {}).get('title', '')} {text}")
        self.bm25 = BM25Index(ids, texts)

    def holds(self, reading: dict[str, Any]) -> bool:
        """Does the collection hold every chunk the reading's turn is judged on?"""
        ids = [*(reading.get("gold_ids") or []), *(reading.get("held_out_ids") or [])]
        return all(chunk_id in self.records for chunk_id in ids)

    def titled(self, ids: list[str]) -> tuple[tuple[str, str], ...]:
        return tuple(self.records[chunk_id] for chunk_id in ids if chunk_id in self.records)

    def pool(self, question: str, leave_out: set[str]) -> list[str]:
        lexical = top_scored(self.bm25.doc_ids, self.bm25.scores(question), POOL_DEPTH, leave_out=leave_out)
        found = self.store.collection.query(query_texts=[question], n_results=POOL_DEPTH + len(leave_out))
        dense = [chunk_id for chunk_id in found["ids"][0] if chunk_id not in leave_out][:POOL_DEPTH]
        return [self.records[chunk_id][1] for chunk_id in dict.fromkeys([*lexical, *dense])]


class Collections:
    """The workspace's collections, each sheet of readings read against the one that holds its chunks. A corpus
    ingested again under another name after its chunking changed (``fastapi-src``, ``fastapi-src21``,
    ``fastapi-src22``) keeps an older sheet's chunk ids only in the collection that sheet was drawn from: a sheet
    read against another would lose its turns' gold passages, and the gate would judge them without."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace
        self.client = chroma_client(workspace, None)
        self.names = sorted(collection.name for collection in self.client.list_collections())
        self.opened: dict[str, Collection] = {}

    def of_sheet(self, corpus: str, rows: list[dict[str, Any]]) -> Collection:
        """The collection named ``corpus``, or one whose name extends it, that holds the most of the sheet's
        gold chunks (the corpus's own name where several hold as many)."""
        ids = sorted({chunk_id for row in rows for chunk_id in row.get("gold_ids") or []})
        candidates = [name for name in self.names if name.startswith(corpus)] or [corpus]
        held = {name: self._holding(name, ids) for name in candidates}
        name = max(candidates, key=lambda candidate: (held[candidate], candidate == corpus))
        if name not in self.opened:
            self.opened[name] = Collection(self.workspace, name)
        return self.opened[name]

    def _holding(self, name: str, ids: list[str]) -> int:
        if not ids or name not in self.names:
            return 0
        return len(self.client.get_collection(name).get(ids=ids, include=[])["ids"])


def sheets_of(paths: list[Path]) -> dict[tuple[Path, str], list[dict[str, Any]]]:
    """Each reading file's rows that read a turn (a verdict, and the turn's type: the fact sheets of a
    generator round read a passage's question and reply alone, no turn of a benchmark), by corpus: one file
    may hold several corpora's turns (the turns a change made, on each test tree)."""
    sheets: dict[tuple[Path, str], list[dict[str, Any]]] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else {}
            if row.get("verdict") in ("ok", "broken") and "turn_type" in row:
                sheets.setdefault((path, row["corpus"]), []).append(row)
    return sheets


def evidence(reading: dict[str, Any], collection: Collection) -> TurnEvidence:
    pool = None
    if reading["turn_type"] in ("unanswerable", "partial"):
        pool = collection.pool(reading["question"], set(reading.get("held_out_ids") or []))
    return TurnEvidence(
        question=reading["question"],
        reply=reading["reply"],
        turn_type=reading["turn_type"],
        previous=tuple(tuple(pair) for pair in reading.get("previous") or []),
        gold=collection.titled(reading.get("gold_ids") or []),
        held_out=collection.titled(reading.get("held_out_ids") or []),
        candidates=collection.titled(reading.get("candidate_ids") or []),
        remaining_pool=pool,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("readings", nargs="+", type=Path)
    parser.add_argument("--workspace", required=True, help="where benchmarks/doc_corpora.py ingested the corpora")
    parser.add_argument("--list", action="store_true", help="print every turn the gate and the reader disagree on")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--rules-only", action="store_true", help="the rules without the reading model")
    arguments = parser.parse_args(argv)
    collections = Collections(Workspace.resolve(arguments.workspace))
    rows = []
    for (path, corpus), sheet in sheets_of(arguments.readings).items():
        collection = collections.of_sheet(corpus, sheet)
        if collection.name != corpus:
            print(
                f"{path.name}: {corpus}'s turns read against the collection {collection.name}, which holds their chunks"
            )
        held = [row for row in sheet if collection.holds(row)]
        if len(held) < len(sheet):
            # a sheet read on a collection chunked otherwise (an older ingestion): its turns' passages are gone, and
            # the gate would judge them without
            print(
                f"{path.name}: {len(sheet) - len(held)} of {corpus}'s {len(sheet)} turns not judged: the collection "
                f"{collection.name} does not hold their chunks (the tree was chunked otherwise when they were read)"
            )
        rows += [(row, collection) for row in held]
    groups: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    classes: Counter[tuple[str | None, str | None]] = Counter()
    disagreements = []
    for row, collection in rows:
        verdict = judge_turn(evidence(row, collection), reading_model=not arguments.rules_only)
        reader = row["verdict"] == "broken"
        for key in (f"{row['corpus']} ({row['half']})", f"all {row['half']}", "all"):
            groups[key].append((reader, verdict.broken))
        classes[(row.get("class") or None, verdict.first_class)] += 1
        if reader != verdict.broken:
            disagreements.append(
                (
                    row["corpus"],
                    row["item"],
                    row.get("class"),
                    verdict.first_class,
                    row["question"],
                    row.get("note") or (verdict.flags.get(verdict.first_class or "", "")),
                )
            )
    figures = {name: reader_agreement(pairs) for name, pairs in sorted(groups.items())}
    print(f"{'readings':28} {'turns':>5} {'broken':>6} {'flagged':>7} {'agree':>6} {'recall':>6} {'precision':>9}")
    for name, figure in figures.items():
        print(
            f"{name:28} {figure['turns']:5d} {figure['reader_broken']:6d} {figure['gate_flagged']:7d} "
            f"{figure['agreement'] or 0:6.2f} {figure['recall'] or 0:6.2f} {figure['precision'] or 0:9.2f}"
        )
    print("\nreader's class → gate's first class:")
    for (reader_class, gate_class), count in classes.most_common():
        print(f"  {reader_class or 'ok':24} → {gate_class or 'passes':24} {count}")
    if arguments.list:
        print("\nDisagreements (corpus, item, reader, gate, question, why):")
        for item in disagreements:
            print("  ", *item)
    if arguments.json:
        arguments.json.write_text(
            json.dumps({"figures": figures, "bounds": {"agreement": MIN_AGREEMENT, "recall": MIN_RECALL}}, indent=2)
            + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
