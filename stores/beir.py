"""Reading a retrieval benchmark: a BEIR directory, or a benchsmith synthesis run.

A BEIR directory holds ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``. A
synthesis run directory holds one under ``beir/``; its queries carry the conversation in
their ``metadata`` (``conversation_id``, ``turn``, ``switch``, ``question``, ``rewrite``,
``response``), from which each turn's history is rebuilt. Queries of other BEIR datasets
are single-turn: their text is the question.

Every line is checked: a malformed one stops with an :class:`~stores.errors.InputError`
naming the file and line.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stores.errors import InputError
from stores.jsonl import read_jsonl
from stores.runs import RunDirectory
from stores.trec import Qrels
from stores.workspace import Workspace

BEIR_SUBDIRECTORY = "beir"


@dataclass
class BenchmarkQuery:
    id: str
    text: str  # as written in queries.jsonl
    question: str  # the current turn alone (the text itself for single-turn benchmarks)
    rewrite: str | None = None  # the benchmark's own self-contained form, if it has one
    conversation_id: str | None = None
    turn: int | None = None
    switch: str | None = None  # start, follow-up, soft or hard
    response: str | None = None  # the answer given to this turn (part of later turns' history)
    history: list[tuple[str, str]] = field(default_factory=list)  # earlier (question, response) turns

    @property
    def conversational(self) -> bool:
        return self.conversation_id is not None


@dataclass
class Benchmark:
    name: str
    directory: Path  # the BEIR directory
    queries: list[BenchmarkQuery]
    qrels: Qrels
    source_collection: str | None = None  # the Chroma collection a synthesis run was built from

    @property
    def corpus_path(self) -> Path:
        return self.directory / "corpus.jsonl"

    @property
    def conversational(self) -> bool:
        return any(query.conversational for query in self.queries)

    def corpus_fingerprint(self) -> str:
        """A short hash of ``corpus.jsonl``: names the collection built from this corpus."""
        digest = hashlib.sha256()
        with self.corpus_path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()[:12]


def load_benchmark(spec: str | Path, workspace: Workspace, split: str = "test") -> Benchmark:
    """``spec`` is a BEIR directory, a synthesis run directory, or the id of a run in ``workspace``."""
    path = Path(spec)
    source_collection = None
    if not path.exists() and RunDirectory(workspace, str(spec)).exists():
        path = RunDirectory(workspace, str(spec)).path
    if (path / "run.json").exists():  # a synthesis run: its BEIR export, and the collection it came from
        source_collection = _run_config(path / "run.json").get("collection")
        path = path / BEIR_SUBDIRECTORY
    if not path.is_dir():
        raise InputError(f"{spec}: not a BEIR directory, a run directory or a run id in {workspace.root}")
    for required in ("corpus.jsonl", "queries.jsonl"):
        if not (path / required).is_file():
            raise InputError(f"{path}: no {required} (a BEIR directory has corpus.jsonl, queries.jsonl, qrels/{split}.tsv)")
    qrels = read_beir_qrels(path / "qrels" / f"{split}.tsv")
    queries = read_beir_queries(path / "queries.jsonl")
    name = path.parent.name if path.name == BEIR_SUBDIRECTORY else path.name
    return Benchmark(name=name, directory=path, queries=queries, qrels=qrels, source_collection=source_collection)


def _run_config(path: Path) -> dict[str, Any]:
    try:
        config = json.loads(path.read_text(encoding="utf-8")).get("config")
    except (json.JSONDecodeError, AttributeError):
        raise InputError(f"{path}: not a benchsmith run record") from None
    return config if isinstance(config, dict) else {}


def read_beir_qrels(path: Path) -> Qrels:
    """``query-id<TAB>corpus-id<TAB>score`` with an optional header line."""
    if not path.is_file():
        available = sorted(p.stem for p in path.parent.glob("*.tsv")) if path.parent.is_dir() else []
        hint = f" (splits here: {', '.join(available)})" if available else ""
        raise InputError(f"{path}: qrels file not found{hint}")
    qrels: Qrels = {}
    with path.open(encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            fields = line.rstrip("\n").split("\t")
            if not line.strip() or (line_number == 1 and fields[0] == "query-id"):
                continue
            if len(fields) != 3:
                raise InputError(f"{path}:{line_number}: expected 3 tab-separated fields "
                                 f"(query-id, corpus-id, score), found {len(fields)}")
            try:
                qrels.setdefault(fields[0], {})[fields[1]] = int(float(fields[2]))
            except ValueError:
                raise InputError(f"{path}:{line_number}: score {fields[2]!r} is not a number") from None
    if not qrels:
        raise InputError(f"{path}: no relevance judgments")
    return qrels


def read_beir_queries(path: Path) -> list[BenchmarkQuery]:
    queries: list[BenchmarkQuery] = []
    for line_number, record in read_jsonl(path):
        query_id, text = record.get("_id"), record.get("text")
        if not isinstance(query_id, str | int) or query_id == "":
            raise InputError(f"{path}:{line_number}: missing '_id'")
        if not isinstance(text, str):
            raise InputError(f"{path}:{line_number}: missing 'text' for query {query_id!r}")
        metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
        queries.append(_query(str(query_id), text, metadata, f"{path}:{line_number}"))
    if not queries:
        raise InputError(f"{path}: no queries")
    _attach_histories(queries)
    return queries


def _query(query_id: str, text: str, metadata: dict[str, Any], where: str) -> BenchmarkQuery:
    if "conversation_id" not in metadata:
        return BenchmarkQuery(id=query_id, text=text, question=text, rewrite=metadata.get("rewrite"))
    try:
        turn = int(metadata["turn"])
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{where}: conversational query {query_id!r} needs an integer metadata.turn") from None
    return BenchmarkQuery(id=query_id, text=text, question=str(metadata.get("question") or text),
                          rewrite=metadata.get("rewrite"), conversation_id=str(metadata["conversation_id"]),
                          turn=turn, switch=metadata.get("switch"), response=metadata.get("response"))


def _attach_histories(queries: list[BenchmarkQuery]) -> None:
    """Each turn's history: the (question, response) of the earlier turns of its conversation."""
    by_conversation: dict[str, list[BenchmarkQuery]] = {}
    for query in queries:
        if query.conversation_id is not None:
            by_conversation.setdefault(query.conversation_id, []).append(query)
    for conversation in by_conversation.values():
        conversation.sort(key=lambda query: query.turn or 0)
        for position, query in enumerate(conversation):
            query.history = [(earlier.question, earlier.response or "") for earlier in conversation[:position]]
