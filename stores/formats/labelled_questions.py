"""Hand-labelled questions over a chunked corpus, and re-finding their gold chunks by evidence.

One JSON object per line::

    {"id": "json-keep-non-ascii",
     "question": "How do I make json.dumps keep accented characters ...?",
     "gold": [{"chunk_id": "79d24ce7...", "document": "json",
               "evidence": "then the return value can contain non-ASCII characters"}]}

``chunk_id`` is the gold chunk's content id, ``document`` the id of the document it was cut
from (for the standard library: the module, e.g. ``json.decoder``), and ``evidence`` a
verbatim span of the chunk that answers the question, so that a reader can check the label
and the label survives re-chunking: chunk ids are hashes of the chunk text, so any change to
cleaning or chunking changes them, while the evidence still names the passage.

Evidence is compared after :func:`normalized_text`: whitespace runs become one space and the
inline markup characters ````` and ``*`` are dropped, so re-wrapping a paragraph or stripping
``*emphasis*`` does not lose a label. A gold passage *resolves* to every chunk of its document
whose normalized text contains its normalized evidence (a sentence repeated in two chunks of
one document names both).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import read_jsonl, write_jsonl_atomic

WHITESPACE = re.compile(r"\s+")
INLINE_MARKUP = str.maketrans("", "", "`*")


@dataclass(frozen=True)
class GoldPassage:
    chunk_id: str
    document: str  # the id of the document the chunk comes from
    evidence: str  # a verbatim span of the chunk that answers the question


@dataclass(frozen=True)
class LabelledQuestion:
    id: str
    question: str
    gold: tuple[GoldPassage, ...]
    line: int = field(default=0, compare=False)  # its line in the file read (0: not read from a file)

    @property
    def gold_ids(self) -> list[str]:
        return list(dict.fromkeys(passage.chunk_id for passage in self.gold))


@dataclass(frozen=True)
class CorpusChunk:
    id: str
    document: str
    text: str


@dataclass
class GoldResolution:
    """Each question's gold chunk ids found by evidence, and where they differ from the file."""

    gold_ids: dict[str, list[str]] = field(default_factory=dict)  # question id -> resolved chunk ids
    missing: list[tuple[str, GoldPassage]] = field(default_factory=list)  # evidence found in no chunk
    changed: list[str] = field(default_factory=list)  # question ids whose resolved ids differ from the file

    @property
    def complete(self) -> bool:
        return not self.missing


def normalized_text(text: str) -> str:
    """``text`` with inline markup characters dropped and whitespace runs as single spaces."""
    return WHITESPACE.sub(" ", text.translate(INLINE_MARKUP)).strip()


def read_labelled_questions(path: str | Path) -> list[LabelledQuestion]:
    """Every question of ``path``; a malformed line, a repeated id or question stops with an
    :class:`InputError` naming the file and line."""
    path = Path(path)
    questions: list[LabelledQuestion] = []
    first_line: dict[str, int] = {}
    for line_number, record in read_jsonl(path):
        where = f"{path}:{line_number}"
        question_id, text, gold = record.get("id"), record.get("question"), record.get("gold")
        if not isinstance(question_id, str) or not question_id.strip():
            raise InputError(f"{where}: missing 'id'")
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{where}: question {question_id!r} has no 'question' text")
        if not isinstance(gold, list) or not gold:
            raise InputError(f"{where}: question {question_id!r} needs a non-empty 'gold' list")
        passages = tuple(_passage(item, f"{where}: question {question_id!r}") for item in gold)
        for key in (question_id, normalized_text(text).casefold()):
            if key in first_line:
                raise InputError(
                    f"{where}: question {question_id!r} repeats line {first_line[key]} (same id or same question)"
                )
            first_line[key] = line_number
        questions.append(LabelledQuestion(question_id, text, passages, line_number))
    if not questions:
        raise InputError(f"{path}: no questions")
    return questions


def _passage(item: object, where: str) -> GoldPassage:
    if not isinstance(item, dict):
        raise InputError(f"{where}: each gold entry is an object with chunk_id, document and evidence")
    values: dict[str, str] = {}
    for key in ("chunk_id", "document", "evidence"):
        value = item.get(key)
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"{where}: a gold entry has no '{key}'")
        values[key] = value
    return GoldPassage(**values)


def write_labelled_questions(path: str | Path, questions: Sequence[LabelledQuestion]) -> None:
    write_jsonl_atomic(
        path,
        (
            {
                "id": question.id,
                "question": question.question,
                "gold": [
                    {"chunk_id": passage.chunk_id, "document": passage.document, "evidence": passage.evidence}
                    for passage in question.gold
                ],
            }
            for question in questions
        ),
    )


class EvidenceIndex:
    """The chunks of a corpus by document, their text normalized once, searched by evidence."""

    def __init__(self, chunks: Iterable[CorpusChunk]) -> None:
        self._by_document: dict[str, list[tuple[str, str]]] = {}
        for chunk in chunks:
            self._by_document.setdefault(chunk.document, []).append((chunk.id, normalized_text(chunk.text)))

    def chunks_for(self, passage: GoldPassage) -> list[str]:
        """The ids of the chunks of the passage's document that contain its evidence."""
        evidence = normalized_text(passage.evidence)
        return [chunk_id for chunk_id, text in self._by_document.get(passage.document, []) if evidence in text]


def resolve_gold(questions: Sequence[LabelledQuestion], chunks: Iterable[CorpusChunk]) -> GoldResolution:
    """Find each gold passage's chunks by its evidence (module docstring)."""
    index = EvidenceIndex(chunks)
    resolution = GoldResolution()
    for question in questions:
        found: list[str] = []
        for passage in question.gold:
            matches = index.chunks_for(passage)
            if not matches:
                resolution.missing.append((question.id, passage))
            found.extend(matches)
        resolution.gold_ids[question.id] = list(dict.fromkeys(found))
        if set(found) != set(question.gold_ids):
            resolution.changed.append(question.id)
    return resolution


def relabelled(questions: Sequence[LabelledQuestion], chunks: Iterable[CorpusChunk]) -> list[LabelledQuestion]:
    """The questions with each gold passage's ``chunk_id`` re-found by its evidence (one
    passage per matching chunk); raise :class:`InputError` listing evidence found nowhere."""
    index = EvidenceIndex(chunks)
    updated: list[LabelledQuestion] = []
    missing: list[str] = []
    for question in questions:
        passages: dict[str, GoldPassage] = {}
        for passage in question.gold:
            matches = index.chunks_for(passage)
            if not matches:
                missing.append(f"{question.id}: {passage.document}: {passage.evidence!r}")
            for chunk_id in matches:
                passages.setdefault(chunk_id, GoldPassage(chunk_id, passage.document, passage.evidence))
        updated.append(LabelledQuestion(question.id, question.question, tuple(passages.values()), question.line))
    if missing:
        raise InputError("evidence found in no chunk of its document (edit these by hand):\n  " + "\n  ".join(missing))
    return updated
