"""Reading a retrieval benchmark: a BEIR directory, a benchsmith synthesis run, an MTRAG-layout
directory (stores/formats/mtrag.py), or a conversational benchmark from elsewhere in our turn JSONL
form with a BEIR corpus.

A BEIR directory holds ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``. A
synthesis run directory holds one under ``beir/``; its queries carry the conversation in
their ``metadata`` (``conversation_id``, ``turn``, ``switch``, ``question``, ``rewrite``,
``response``), from which each turn's history is rebuilt, and its labels (``answerability``,
``question_type``, ``standalone``; stores/formats/turn_labels.py), which a ``turn_labels.tsv`` beside
``qrels/`` supplies where the metadata lacks them. Queries of other BEIR datasets are
single-turn: their text is the question.

The turn JSONL form has one turn per line (``answer``, ``rewrite``, ``switch`` and the labels
optional; ``gold_ids`` may be empty only on an unanswerable or underspecified turn)::

    {"id": "conv7_t2", "conversation_id": "conv7", "turn": 2,
     "history": [{"question": "...", "answer": "..."}, {"question": "...", "answer": "..."}],
     "question": "...", "gold_ids": ["doc12"], "answer": "...", "rewrite": "...", "switch": "soft",
     "answerability": "answerable", "question_type": "factoid", "standalone": false}

Every line is checked: a malformed one stops with an :class:`~stores.errors.InputError`
naming the file and line.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.history import Exchange
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.benchmark_files import BEIR_SUBDIRECTORY, held_out_chunks
from benchsmith.stores.formats.mtrag_reader import is_mtrag_layout, read_mtrag
from benchsmith.stores.formats.trec import Qrels, conflicting_judgment, read_trec_qrels
from benchsmith.stores.formats.turn_labels import NO_GOLD, TURN_LABELS_FILE, TurnLabels, read_turn_labels
from benchsmith.stores.persistence.jsonl import read_json, read_jsonl, text_lines
from benchsmith.stores.persistence.runs import RunDirectory, is_valid_run_id
from benchsmith.stores.persistence.workspace import Workspace


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
    history: list[Exchange] = field(default_factory=list)  # earlier (question, response) turns
    answerability: str | None = None  # stores/formats/turn_labels.py; None: unlabelled
    question_type: str | None = None
    standalone: bool | None = None

    @property
    def conversational(self) -> bool:
        return self.conversation_id is not None

    def label(self, labels: TurnLabels) -> None:
        """Take the labels the query does not carry itself from ``labels``."""
        self.answerability = self.answerability or labels.answerability
        self.question_type = self.question_type or labels.question_type
        self.standalone = labels.standalone if self.standalone is None else self.standalone


@dataclass
class Benchmark:
    name: str
    directory: Path  # the BEIR directory
    queries: list[BenchmarkQuery]
    qrels: Qrels
    source_collection: str | None = None  # the Chroma collection a synthesis run was built from
    corpus_file: Path | None = None  # where the corpus is not the directory's corpus.jsonl
    qrels_file: Path | None = None  # where the judgments were read from
    queries_file: Path | None = None  # where the queries were read from

    @property
    def corpus_path(self) -> Path:
        return self.corpus_file or self.directory / "corpus.jsonl"

    @functools.cached_property
    def queries_by_id(self) -> dict[str, BenchmarkQuery]:
        return {query.id: query for query in self.queries}

    @functools.cached_property
    def held_out(self) -> dict[str, str]:
        """``{chunk id: the held-out chunk it is or copies}``: the chunks of the source collection
        a synthesized benchmark's corpus leaves out (stores/formats/benchmark_files.held_out_chunks)."""
        return held_out_chunks(self.directory)

    @property
    def has_answers(self) -> bool:
        return any(query.response for query in self.queries)

    @property
    def conversational(self) -> bool:
        return any(query.conversational for query in self.queries)

    def corpus_fingerprint(self) -> str:
        """A short hash of ``corpus.jsonl``: names the collection built from this corpus."""
        return file_fingerprint(self.corpus_path)


def file_fingerprint(path: Path) -> str:
    """A short hash (48 bits of SHA-256) of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:12]


def load_benchmark(
    spec: str | Path, workspace: Workspace, split: str = "test", corpus: Path | None = None
) -> Benchmark:
    """``spec`` is a BEIR directory, a synthesis run directory, the id of a run in ``workspace``,
    an MTRAG-layout directory (``corpus``: its passages, where they are not beside it) or a turn
    JSONL file (with ``corpus``, a BEIR corpus.jsonl)."""
    path = Path(spec)
    if is_mtrag_layout(path):
        layout = read_mtrag(path, split, corpus)
        return Benchmark(
            name=layout.name,
            directory=layout.root,
            queries=[BenchmarkQuery(**vars(turn)) for turn in layout.turns],
            qrels=read_beir_qrels(layout.qrels_file),
            corpus_file=layout.corpus_file,
            qrels_file=layout.qrels_file,
            queries_file=layout.queries_file,
        )
    if path.is_file():
        if corpus is None:
            raise InputError(f"{path}: a turn JSONL benchmark needs its documents: pass --corpus corpus.jsonl")
        return load_turn_jsonl(path, corpus)
    source_collection = None
    if not path.exists() and is_valid_run_id(str(spec)) and RunDirectory(workspace, str(spec)).exists():
        path = RunDirectory(workspace, str(spec)).path
    if (path / "run.json").exists():  # a synthesis run: its BEIR export, and the collection it came from
        source_collection = _run_config(path / "run.json").get("collection")
        path = path / BEIR_SUBDIRECTORY
    if not path.is_dir():
        raise InputError(f"{spec}: not a BEIR directory, a run directory or a run id in {workspace.root}")
    for required in ("corpus.jsonl", "queries.jsonl"):
        if (path / required).is_dir():
            raise InputError(f"{path / required}: is a directory, expected a file")
        if not (path / required).is_file():
            raise InputError(
                f"{path}: no {required} (a BEIR directory has corpus.jsonl, queries.jsonl, qrels/{split}.tsv)"
            )
    qrels = read_beir_qrels(path / "qrels" / f"{split}.tsv")
    queries = read_beir_queries(path / "queries.jsonl")
    if (path / TURN_LABELS_FILE).is_file():
        labels = read_turn_labels(path / TURN_LABELS_FILE)
        for query in queries:
            query.label(labels.get(query.id, TurnLabels()))
    name = path.parent.name if path.name == BEIR_SUBDIRECTORY else path.name
    return Benchmark(
        name=name,
        directory=path,
        queries=queries,
        qrels=qrels,
        source_collection=source_collection,
        qrels_file=path / "qrels" / f"{split}.tsv",
        queries_file=path / "queries.jsonl",
    )


def load_turn_jsonl(path: Path, corpus: Path | None) -> Benchmark:
    """A conversational benchmark in our turn JSONL form (module docstring) over a BEIR corpus
    (None: its turns only, for jobs that read no document, such as paraphrasing)."""
    if corpus is not None and not corpus.is_file():
        raise InputError(f"{corpus}: corpus file not found")
    if corpus is not None and corpus.is_dir():
        raise InputError(f"{corpus}: is a directory; --corpus takes a BEIR corpus.jsonl file")
    queries: list[BenchmarkQuery] = []
    qrels: Qrels = {}
    first_line: dict[str, int] = {}
    for line_number, record in read_jsonl(path):
        where = f"{path}:{line_number}"
        turn_id, question, gold_ids = record.get("id"), record.get("question"), record.get("gold_ids")
        if not isinstance(turn_id, str | int) or turn_id == "":
            raise InputError(f"{where}: missing 'id'")
        if str(turn_id) in first_line:
            raise InputError(f"{where}: turn id {str(turn_id)!r} repeats line {first_line[str(turn_id)]}")
        first_line[str(turn_id)] = line_number
        if not isinstance(question, str) or not question.strip():
            raise InputError(f"{where}: missing 'question' for turn {turn_id!r}")
        labels = _labels(record, where)
        if not isinstance(gold_ids, list) or (not gold_ids and labels.answerability not in NO_GOLD):
            raise InputError(
                f"{where}: turn {turn_id!r} needs a non-empty 'gold_ids' list (an empty one only on "
                f"an unanswerable or underspecified turn)"
            )
        history = record.get("history") or []
        if not isinstance(history, list) or not all(isinstance(t, dict) and "question" in t for t in history):
            raise InputError(f'{where}: \'history\' must be a list of {{"question", "answer"}} objects')
        turn = record.get("turn", len(history))
        queries.append(
            BenchmarkQuery(
                id=str(turn_id),
                text=question,
                question=question,
                rewrite=record.get("rewrite"),
                conversation_id=str(record.get("conversation_id", turn_id)),
                turn=int(turn),
                switch=record.get("switch"),
                response=record.get("answer"),
                history=[(str(t["question"]), str(t.get("answer") or "")) for t in history],
                answerability=labels.answerability,
                question_type=labels.question_type,
                standalone=labels.standalone,
            )
        )
        if gold_ids:
            qrels[str(turn_id)] = {str(doc_id): 1 for doc_id in gold_ids}
    if not queries:
        raise InputError(f"{path}: no turns")
    return Benchmark(
        name=path.stem,
        directory=path.parent,
        queries=queries,
        qrels=qrels,
        corpus_file=corpus,
        qrels_file=path,
        queries_file=path,
    )


def _labels(record: dict[str, Any], where: str) -> TurnLabels:
    """A record's labels (absent ones None); a value of the wrong type names its place."""
    answerability, question_type, standalone = (
        record.get(key) for key in ("answerability", "question_type", "standalone")
    )
    for key, value in (("answerability", answerability), ("question_type", question_type)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise InputError(f"{where}: '{key}' must be a non-empty string, not {value!r}")
    if standalone is not None and not isinstance(standalone, bool):
        raise InputError(f"{where}: 'standalone' must be true, false or null, not {standalone!r}")
    return TurnLabels(
        answerability.strip().lower() if answerability else None,
        question_type.strip().lower() if question_type else None,
        standalone,
    )


def _run_config(path: Path) -> dict[str, Any]:
    try:
        config = read_json(path).get("config")
    except (InputError, AttributeError):
        raise InputError(f"{path}: not a benchsmith run record") from None
    return config if isinstance(config, dict) else {}


def read_beir_qrels(path: Path, allow_empty: bool = False) -> Qrels:
    """``query-id<TAB>corpus-id<TAB>score`` lines, with or without a header line (a first line
    whose score is not a number); fields separated by spaces are read too."""
    if path.is_dir():
        raise InputError(f"{path}: is a directory, expected a qrels file")
    if not path.is_file():
        available = sorted(p.stem for p in path.parent.glob("*.tsv")) if path.parent.is_dir() else []
        hint = f" (splits here: {', '.join(available)})" if available else ""
        raise InputError(f"{path}: qrels file not found{hint}")
    qrels: Qrels = {}
    seen_line = False
    # Decoded line by line, so bad bytes name their line.
    for line_number, line in enumerate(text_lines(path), start=1):
        if not line.strip():
            continue
        fields = line.rstrip("\n").split("\t") if "\t" in line else line.split()
        first, seen_line = not seen_line, True
        if len(fields) != 3:
            raise InputError(
                f"{path}:{line_number}: expected 3 tab-separated fields "
                f"(query-id, corpus-id, score), found {len(fields)}"
            )
        try:
            relevance = int(float(fields[2]))
        except ValueError:
            if first:  # a header: query-id, corpus-id, score
                continue
            raise InputError(f"{path}:{line_number}: score {fields[2]!r} is not a number") from None
        judged = qrels.setdefault(fields[0], {})
        if judged.get(fields[1], relevance) != relevance:
            raise InputError(
                conflicting_judgment(path, line_number, fields[0], fields[1], judged[fields[1]], relevance)
            )
        judged[fields[1]] = relevance
    if not qrels and not allow_empty:
        raise InputError(f"{path}: no relevance judgments")
    return qrels


def read_qrels(path: str | Path, allow_empty: bool = False) -> Qrels:
    """Judgments in either form, told apart by the first line: TREC (``qid iteration docid
    relevance``, 4 fields) or BEIR TSV (``query-id corpus-id score``, 3 fields, header or not).
    ``allow_empty``: a file with no judgment (empty, or a header alone) means no judgments rather
    than an error (an audit that confirmed no missing gold writes such an extra_qrels.tsv)."""
    path = Path(path)
    lines = text_lines(path)  # a missing file or a directory stops here, named
    first = next((line for line in lines if line.strip()), "")
    lines.close()
    fields = first.split()
    if not fields and allow_empty:
        return {}
    if len(fields) == 4:
        qrels = read_trec_qrels(path)
        if not qrels and not allow_empty:
            raise InputError(f"{path}: no relevance judgments")
        return qrels
    if len(fields) == 3:
        return read_beir_qrels(path, allow_empty)
    raise InputError(
        f"{path}:1: not a qrels line: TREC qrels have 4 fields (qid iteration docid relevance), "
        f"BEIR qrels 3 (query-id corpus-id score); found {len(fields)}"
    )


def merge_qrels(base: Qrels, extra: Qrels) -> Qrels:
    """``base`` with the judgments of ``extra`` added; where both judge a document, the higher
    relevance wins (extra judgments add relevant documents, they never demote one)."""
    merged = {query_id: dict(judged) for query_id, judged in base.items()}
    for query_id, judged in extra.items():
        for doc_id, relevance in judged.items():
            merged.setdefault(query_id, {})[doc_id] = max(relevance, merged[query_id].get(doc_id, relevance))
    return merged


def read_beir_queries(path: Path) -> list[BenchmarkQuery]:
    queries: list[BenchmarkQuery] = []
    first_line: dict[str, int] = {}
    for line_number, record in read_jsonl(path):
        query_id, text = record.get("_id"), record.get("text")
        if not isinstance(query_id, str | int) or query_id == "":
            raise InputError(f"{path}:{line_number}: missing '_id'")
        if str(query_id) in first_line:
            raise InputError(
                f"{path}:{line_number}: query id {str(query_id)!r} repeats line {first_line[str(query_id)]}"
            )
        first_line[str(query_id)] = line_number
        if not isinstance(text, str):
            raise InputError(f"{path}:{line_number}: missing 'text' for query {query_id!r}")
        metadata = given if isinstance(given := record.get("metadata"), dict) else {}
        queries.append(_query(str(query_id), text, metadata, f"{path}:{line_number}"))
    if not queries:
        raise InputError(f"{path}: no queries")
    _attach_histories(queries)
    return queries


def _query(query_id: str, text: str, metadata: dict[str, Any], where: str) -> BenchmarkQuery:
    labels = _labels(metadata, where)
    if "conversation_id" not in metadata:
        return BenchmarkQuery(
            id=query_id,
            text=text,
            question=text,
            rewrite=metadata.get("rewrite"),
            answerability=labels.answerability,
            question_type=labels.question_type,
            standalone=labels.standalone,
        )
    try:
        turn = int(metadata["turn"])
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{where}: conversational query {query_id!r} needs an integer metadata.turn") from None
    return BenchmarkQuery(
        id=query_id,
        text=text,
        question=str(metadata.get("question") or text),
        rewrite=metadata.get("rewrite"),
        conversation_id=str(metadata["conversation_id"]),
        turn=turn,
        switch=metadata.get("switch"),
        response=metadata.get("response"),
        answerability=labels.answerability,
        question_type=labels.question_type,
        standalone=labels.standalone,
    )


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
