"""Benchmark files: our dialogue JSONL, BEIR and TREC.

``dialogues.jsonl`` has one conversation per line::

    {"conversation_id": "c0007", "cluster_id": 12, "seed": 0,
     "turns": [{"index": 0, "question": "...", "question_unpolished": "...", "rewrite": "...",
                "response": "...", "gold_ids": ["<chunk id>"], "switch": "start",
                "similarity_to_previous": null, "polish_rejected": null, "switch_drawn": "start",
                "lexical_overlap": 0.5, "overlap_rejected": false, "overlap_corrections": 0,
                "overlap_replans": 0, "form_replans": 0}, ...]}

``switch`` is how the turn relates to the one before: ``start`` (turn 0), ``follow-up``
(same gold chunk), ``soft`` (a chunk of the neighbourhood on the cluster's semantic path,
more similar to the previous gold than random pairs of chunks are, by a margin) or ``hard``
(a distant cluster, or a switch whose neighbourhood held no chunk that similar).
``similarity_to_previous`` is the cosine similarity of the turn's gold chunk to the previous
turn's (absent or null on turn 0 and in files written before it existed). ``question`` is the
question as asked (polished from turn 1 on), ``question_unpolished`` the questioner's
original, ``rewrite`` a self-contained form. ``lexical_overlap`` is the share of the
unpolished question's content-word stems found in its gold chunk; a question above
``--max-overlap`` was asked again (``overlap_corrections``) or moved to another chunk
(``overlap_replans``), and one still above it is kept with ``overlap_rejected`` true; an
ill-formed question (evals/measures/question_form.py) moved its turn to another chunk (``form_replans``).

Each turn also carries its labels (stores/formats/turn_labels.py): ``answerability`` (``answerable``,
``partial``, ``unanswerable`` or ``underspecified``; files written before labels existed read
as ``answerable``), ``question_type`` and ``standalone`` (null: unlabelled). ``gold_ids`` holds
every chunk the answer needs (several for a multi-passage turn) and is empty for unanswerable
and underspecified turns; an unanswerable turn lists in ``held_out_ids`` the chunks it was
asked about, which every export leaves out, with their near-duplicates (tools/corpus/held_out.py);
an underspecified one the chunks it is ambiguous between in ``candidate_ids``. ``turn_type``,
``turn_type_drawn``, ``label_dropped`` and ``label_rejections`` record how the dialogue graph
built the turn (absent in older files); ``gate_rejections`` counts the questions the quality gate
(evals/quality_gate/) refused for the turn per rubric class, ``gate_flags`` holds the classes
it found in a kept turn (under ``--quality-gate replan`` only the reading model's: a flagged turn
no replacement of which passed the gate), and ``gate_replaced`` the reading model's flag of the
question the turn replaced (empty otherwise). ``reframed_from`` holds the question fields a turn was
asked with when export reworded it so that no frame has more than a fifth of the questions nor any
question type more than half (graphs/synthesis/frames.py; null otherwise, absent in older files).

BEIR: ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl`` (``_id``, ``text``
and ``metadata``, the labels included), ``qrels/<split>.tsv`` (``query-id corpus-id score`` with
a header; turns without gold have none), ``turn_labels.tsv`` (every turn's labels) and
``held_out.tsv``: every chunk of the collection the corpus leaves out, ``corpus-id held-out-id
jaccard`` with a header, sorted by id: a held-out chunk names itself (Jaccard 1), a near-duplicate
the held-out chunk it copies. :func:`held_out_chunks` reads it, and for an export written before
the file existed falls back on the dialogues' ``held_out_ids`` (whose near-duplicates it cannot
know). TREC files: :mod:`stores.formats.trec`.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError, model_validator

from benchsmith.history import exchanges, query_text
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.trec import Qrel
from benchsmith.stores.formats.turn_labels import NO_GOLD, TurnLabels
from benchsmith.stores.persistence.files import atomic_writer
from benchsmith.stores.persistence.jsonl import load_jsonl, read_jsonl, text_lines, write_jsonl_atomic

BEIR_SUBDIRECTORY = "beir"  # a synthesis run's BEIR export
DIALOGUES_FILE = "dialogues.jsonl"  # in a synthesis run's directory, beside its BEIR export
HELD_OUT_FILE = "held_out.tsv"  # in a BEIR export, beside qrels/
HELD_OUT_HEADER = ["corpus-id", "held-out-id", "jaccard"]

Answerability = Literal["answerable", "partial", "unanswerable", "underspecified"]
QuestionType = Literal["factoid", "explanation", "comparison", "how-to", "yes/no", "summary", "keyword"]


class Turn(BaseModel):
    """One turn of a synthesized conversation (the schema above)."""

    index: int
    question: str
    question_unpolished: str
    rewrite: str
    response: str
    gold_ids: list[str]
    switch: Literal["start", "follow-up", "soft", "hard"]
    similarity_to_previous: float | None = None
    polish_rejected: str | None = None
    switch_drawn: str | None = None  # what the router drew; ``switch`` is what the similarity rule allowed
    lexical_overlap: float | None = (
        None  # the unpolished question's overlap with its gold (evals/measures/lexical_overlap.py)
    )
    overlap_rejected: bool = False  # still above --max-overlap after every correction and re-plan
    overlap_corrections: int = 0  # corrective turns the questioner was given
    overlap_replans: int = 0  # other gold chunks tried for the overlap
    form_replans: int = 0  # other gold chunks tried because the question was ill-formed (a template, a fragment...)
    answerability: Answerability = "answerable"
    question_type: QuestionType | None = None  # None: unlabelled (files written before labels)
    standalone: bool | None = None  # understood without the history; None: unlabelled
    held_out_ids: list[str] = []  # unanswerable turns: the chunks asked about, left out of every export
    candidate_ids: list[str] = []  # underspecified turns: the chunks the question is ambiguous between
    turn_type: str | None = None  # the turn type the dialogue graph built (multi-passage, clarification...)
    turn_type_drawn: str | None = None  # what its draw gave (a type no chunk or judge allowed becomes answerable)
    label_dropped: str | None = None  # the turn type the judge rejected for this turn, if any
    label_rejections: int = 0  # the judge's rejections of the turn's label
    gate_rejections: dict[str, int] = {}  # questions the quality gate refused for this turn, per rubric class
    gate_flags: dict[
        str, str
    ] = {}  # the classes the gate found in the kept turn, with why (replan: the reading model's)
    gate_replaced: dict[str, str] = {}  # the reading model's flag of the question this turn replaced, with why
    reframed_from: dict[str, Any] | None = None  # a reworded turn's question fields as asked (synthesis/frames.py)

    @model_validator(mode="after")
    def _gold_matches_answerability(self) -> Turn:
        if self.answerability in NO_GOLD and self.gold_ids:
            raise ValueError(f"an {self.answerability} turn has no gold chunks, found gold_ids {self.gold_ids}")
        if self.answerability not in NO_GOLD and not self.gold_ids:
            raise ValueError(f"an {self.answerability} turn needs at least one gold chunk in gold_ids")
        return self

    @property
    def labels(self) -> TurnLabels:
        return TurnLabels(self.answerability, self.question_type, self.standalone)


class Dialogue(BaseModel):
    """One line of ``dialogues.jsonl``."""

    conversation_id: str
    cluster_id: int | None = None  # None when the conversation walked a given list of chunks
    seed: int = 0
    turns: list[Turn]


def read_dialogues(path: Path) -> list[Dialogue]:
    """Every conversation of a dialogues file, checked: a line that is not a conversation (a
    bad label, gold on an unanswerable turn...) stops with an InputError naming file and line."""
    dialogues = []
    for line_number, record in read_jsonl(path):
        try:
            dialogues.append(Dialogue.model_validate(record))
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in problem['loc']) or 'turn'}: {problem['msg']}"
                for problem in error.errors()
            )
            raise InputError(f"{path}:{line_number}: not a conversation ({problems})") from None
    return dialogues


def write_dialogues(path: Path, dialogues: Iterable[Dialogue]) -> int:
    """The conversations, one a line, atomically (the fields of :class:`Turn`, defaults included)."""
    return write_jsonl_atomic(path, (dialogue.model_dump() for dialogue in dialogues))


def turn_query_id(conversation_id: str, index: int) -> str:
    """The query id of a turn in the BEIR and TREC exports."""
    return f"{conversation_id}_t{index}"


def benchmark_records(
    dialogues: Iterable[dict[str, Any]], history_window: int | None = None
) -> tuple[list[dict[str, Any]], list[Qrel], list[tuple[str, TurnLabels]]]:
    """The BEIR queries (text with history, the turn in metadata), the qrels (every gold chunk of
    every turn; none for turns without gold) and every turn's labels, of dialogues records."""
    queries: list[dict[str, Any]] = []
    qrels: list[Qrel] = []
    labels: list[tuple[str, TurnLabels]] = []
    for dialogue in dialogues:
        turns = dialogue["turns"]
        # By position, not index: a reviewed benchmark's rejected turns are gone from the history and
        # the others keep their query ids.
        for position, turn in enumerate(turns):
            query_id = turn_query_id(dialogue["conversation_id"], turn["index"])
            label = TurnLabels(
                turn.get("answerability", "answerable"), turn.get("question_type"), turn.get("standalone")
            )
            queries.append(
                {
                    "_id": query_id,
                    "text": serialize_history(turns, position, history_window),
                    "metadata": {
                        "conversation_id": dialogue["conversation_id"],
                        "turn": turn["index"],
                        "switch": turn["switch"],
                        "question": turn["question"],
                        "rewrite": turn["rewrite"],
                        "response": turn["response"],
                        "answerability": label.answerability,
                        "question_type": label.question_type,
                        "standalone": label.standalone,
                    },
                }
            )
            qrels.extend((query_id, gold_id, 1) for gold_id in turn["gold_ids"])
            labels.append((query_id, label))
    return queries, qrels, labels


def held_out_ids(dialogues: Iterable[dict[str, Any]]) -> set[str]:
    """Every chunk some turn was asked about and that no export may hold."""
    return {
        chunk_id for dialogue in dialogues for turn in dialogue["turns"] for chunk_id in turn.get("held_out_ids", [])
    }


def write_held_out(path: Path, rows: Iterable[tuple[str, str, float]]) -> None:
    """``held_out.tsv`` (module docstring): ``(corpus id, held-out chunk id, Jaccard)`` rows, sorted."""
    with atomic_writer(path, newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(HELD_OUT_HEADER)
        writer.writerows(sorted((doc_id, held_id, f"{jaccard:.4f}") for doc_id, held_id, jaccard in rows))


def read_held_out(path: Path) -> dict[str, str]:
    """``{chunk id: the held-out chunk it is or copies}`` of a ``held_out.tsv``; a malformed line
    stops with an InputError naming it."""
    held_out: dict[str, str] = {}
    for line_number, line in enumerate(text_lines(path), start=1):
        fields = line.rstrip("\r\n").split("\t")
        if (line_number == 1 and fields == HELD_OUT_HEADER) or not line.strip():
            continue
        if len(fields) != len(HELD_OUT_HEADER) or not fields[0] or not fields[1]:
            raise InputError(
                f"{path}:{line_number}: expected {len(HELD_OUT_HEADER)} tab-separated fields "
                f"({', '.join(HELD_OUT_HEADER)})"
            )
        held_out[fields[0]] = fields[1]
    return held_out


def run_dialogues_file(beir_directory: Path) -> Path | None:
    """The ``dialogues.jsonl`` of the synthesis run whose BEIR export is ``beir_directory``; None
    for any other benchmark."""
    run = beir_directory.parent
    dialogues = run / DIALOGUES_FILE
    if beir_directory.name != BEIR_SUBDIRECTORY or not (run / "run.json").is_file() or not dialogues.is_file():
        return None
    return dialogues


def held_out_chunks(beir_directory: Path) -> dict[str, str]:
    """``{chunk id: the held-out chunk it is or copies}``: the chunks of the collection a
    synthesized benchmark's corpus leaves out, as its export lists them (``held_out.tsv``), or,
    for an export written before that file, the turns' ``held_out_ids`` (near-duplicates
    unknown); {} for a benchmark that holds nothing out. The one place both are read."""
    if (beir_directory / HELD_OUT_FILE).is_file():
        return read_held_out(beir_directory / HELD_OUT_FILE)
    dialogues = run_dialogues_file(beir_directory)
    return {chunk_id: chunk_id for chunk_id in sorted(held_out_ids(load_jsonl(dialogues)))} if dialogues else {}


def canonical_records(path: Path, key: str = "conversation_id") -> list[dict[str, Any]]:
    """The file's records sorted by id, first occurrence of each id kept: a stable final form
    whatever order concurrent workers finished in."""
    unique: dict[str, dict[str, Any]] = {}
    for record in load_jsonl(path) if path.exists() else []:
        unique.setdefault(record[key], record)
    return [unique[identifier] for identifier in sorted(unique)]


def canonicalize(path: Path, key: str = "conversation_id") -> list[dict[str, Any]]:
    """Rewrite the file in its :func:`canonical_records` form, and return them."""
    records = canonical_records(path, key)
    write_jsonl_atomic(path, records)
    return records


def serialize_history(turns: list[dict[str, Any]], index: int, window: int | None = None) -> str:
    """The query text of turn ``index``: earlier turns as ``User:``/``Agent:`` lines (the last
    ``window`` of them, all if None), then the current question."""
    return query_text(exchanges(turns[:index]), turns[index]["question"], window)


def write_beir(
    directory: Path,
    corpus: Iterable[dict[str, Any]],
    queries: Iterable[dict[str, Any]],
    qrels: Iterable[Qrel],
    split: str = "test",
) -> None:
    write_jsonl_atomic(directory / "corpus.jsonl", corpus)
    write_jsonl_atomic(directory / "queries.jsonl", queries)
    write_beir_qrels(directory / "qrels" / f"{split}.tsv", qrels)


def write_beir_qrels(path: Path, qrels: Iterable[Qrel]) -> None:
    """``query-id<TAB>corpus-id<TAB>score`` with a header, written atomically."""
    with atomic_writer(path, newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["query-id", "corpus-id", "score"])
        writer.writerows(qrels)
