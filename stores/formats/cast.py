"""TREC CAsT topic files as a conversational benchmark (no corpus: CAsT's collections are
not shipped with it).

* 2019: ``*_evaluation_topics.json`` (``[{"number", "title", "turn": [{"number",
  "raw_utterance"}]}]``) and, beside it, ``*_evaluation_topics_resolved.tsv``
  (``{topic}_{turn}<TAB>self-contained rewrite`` per line), the manually resolved turns.
* 2020 and 2021: ``*_manual_evaluation_topics.json``, whose turns carry ``raw_utterance``,
  ``manual_rewritten_utterance``, ``automatic_rewritten_utterance`` and the canonical
  result id (2021 also the canonical ``passage``, which is the turn's response).

Turn ids are ``{topic}_{turn}``. Several files make one benchmark (all years together);
a resolved TSV may name only turns of the topic files given with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import Benchmark, BenchmarkQuery
from benchsmith.stores.formats.trec import Qrels
from benchsmith.stores.persistence.jsonl import read_json, text_lines

CAST_SUFFIXES = (".json", ".tsv")


def is_cast_file(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in CAST_SUFFIXES


def load_cast(paths: Sequence[Path], qrels: Qrels | None = None) -> Benchmark:
    """One benchmark from CAsT topic files (``.json``) and resolved-utterance files (``.tsv``)."""
    topic_files = [path for path in paths if path.suffix.lower() == ".json"]
    resolved_files = [path for path in paths if path.suffix.lower() == ".tsv"]
    if not topic_files:
        raise InputError(f"{', '.join(map(str, paths))}: no CAsT topic file (*_evaluation_topics.json) among them")
    queries: list[BenchmarkQuery] = []
    origin: dict[str, Path] = {}
    for path in topic_files:
        for query in read_cast_topics(path):
            if query.id in origin:
                raise InputError(f"{path}: turn {query.id} is also in {origin[query.id]}")
            origin[query.id] = path
            queries.append(query)
    by_id = {query.id: query for query in queries}
    for path in resolved_files:
        for line_number, turn_id, text in read_resolved_tsv(path):
            if turn_id not in by_id:
                raise InputError(
                    f"{path}:{line_number}: turn {turn_id!r} is in no topic file given "
                    f"({', '.join(p.name for p in topic_files)})"
                )
            by_id[turn_id].rewrite = text
    _attach_histories(queries)
    name = "+".join(path.stem for path in topic_files)
    return Benchmark(name=name, directory=topic_files[0].parent, queries=queries, qrels=dict(qrels or {}))


def read_cast_topics(path: Path) -> list[BenchmarkQuery]:
    """The turns of a CAsT topic file, in file order; a malformed topic or turn names the file,
    the topic and the turn."""
    topics = read_json(path)
    if not isinstance(topics, list):
        raise InputError(f"{path}: a CAsT topic file is a JSON list of topics, found {type(topics).__name__}")
    queries: list[BenchmarkQuery] = []
    for position, topic in enumerate(topics, start=1):
        number = topic.get("number") if isinstance(topic, dict) else None
        if not isinstance(number, int | str) or str(number) == "":
            raise InputError(f"{path}: topic {position} (in file order) has no 'number'")
        turns = topic.get("turn")
        if not isinstance(turns, list) or not turns:
            raise InputError(f"{path}: topic {number} has no 'turn' list")
        for turn in turns:
            query = _turn(path, str(number), turn)
            if any(earlier.id == query.id for earlier in queries):
                raise InputError(f"{path}: topic {number} turn {query.turn}: turn id {query.id} appears twice")
            queries.append(query)
    if not queries:
        raise InputError(f"{path}: no topics")
    return queries


def _turn(path: Path, topic: str, turn: Any) -> BenchmarkQuery:
    number = turn.get("number") if isinstance(turn, dict) else None
    if not isinstance(number, int):
        raise InputError(f"{path}: topic {topic}: a turn has no integer 'number'")
    where = f"{path}: topic {topic} turn {number}"
    raw = turn.get("raw_utterance")
    if not isinstance(raw, str) or not raw.strip():
        raise InputError(f"{where}: missing 'raw_utterance'")
    rewrite = turn.get("manual_rewritten_utterance")
    if rewrite is not None and (not isinstance(rewrite, str) or not rewrite.strip()):
        raise InputError(f"{where}: 'manual_rewritten_utterance' must be a non-empty string")
    passage = turn.get("passage")
    return BenchmarkQuery(
        id=f"{topic}_{number}",
        text=raw.strip(),
        question=raw.strip(),
        rewrite=rewrite.strip() if rewrite else None,
        conversation_id=topic,
        turn=number,
        response=passage.strip() if isinstance(passage, str) and passage.strip() else None,
    )


def read_resolved_tsv(path: Path) -> list[tuple[int, str, str]]:
    """``(line number, turn id, rewrite)`` of each line of a CAsT 2019 resolved-utterance file."""
    rows = []
    first_line: dict[str, int] = {}
    for line_number, line in enumerate(text_lines(path), start=1):
        if not line.strip():
            continue
        fields = line.rstrip("\r\n").split("\t")
        if len(fields) != 2 or not fields[0].strip() or not fields[1].strip():
            raise InputError(
                f"{path}:{line_number}: expected '{{topic}}_{{turn}}<TAB>rewrite', found {len(fields)} field(s)"
            )
        turn_id = fields[0].strip()
        if turn_id in first_line:
            raise InputError(f"{path}:{line_number}: turn {turn_id} repeats line {first_line[turn_id]}")
        first_line[turn_id] = line_number
        rows.append((line_number, turn_id, fields[1].strip()))
    if not rows:
        raise InputError(f"{path}: no resolved turns")
    return rows


def _attach_histories(queries: list[BenchmarkQuery]) -> None:
    """Each turn's history: the (raw utterance, response) of the earlier turns of its topic."""
    by_topic: dict[str, list[BenchmarkQuery]] = {}
    for query in queries:
        by_topic.setdefault(str(query.conversation_id), []).append(query)
    for turns in by_topic.values():
        turns.sort(key=lambda query: query.turn or 0)
        for position, query in enumerate(turns):
            query.history = [(earlier.question, earlier.response or "") for earlier in turns[:position]]
