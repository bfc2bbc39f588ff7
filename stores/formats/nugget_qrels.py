"""Nugget qrels: which document supports which nugget of a question, in TREC qrels form.

One judgment per line, the nugget id in the iteration column, as ir_measures (pyndeval)
reads them for alpha-nDCG::

    qid nugget_id doc_id label          # label 1: the document supports the nugget; 0: it does not

In memory: ``{qid: {nugget_id: {doc_id: label}}}``. A nugget judged against documents that
none supports has only 0 rows: it stays one of the question's nuggets (coverage counts it).
Nugget ids are compared exactly, never by prefix. Reading is strict: a malformed line stops
with an :class:`~stores.errors.InputError` naming the file and line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.trec import judgment_fields
from benchsmith.stores.persistence.files import atomic_writer
from benchsmith.stores.persistence.jsonl import text_lines

NuggetQrels = dict[str, dict[str, dict[str, int]]]
NuggetQrel = tuple[str, str, str, int]  # (qid, nugget id, doc id, label)
ORDINARY_ITERATIONS = {"0", "Q0"}  # what ordinary qrels carry in the iteration column


def read_nugget_qrels(path: str | Path) -> NuggetQrels:
    path = Path(path)
    qrels: NuggetQrels = {}
    nugget_ids: set[str] = set()
    for line_number, line in enumerate(text_lines(path), start=1):  # bad bytes name their line
        fields = line.split()
        if not fields:
            continue
        query_id, nugget_id, doc_id, grade = judgment_fields(
            path, line_number, fields, "nugget qrels", "qid nugget_id doc_id label"
        )
        judged = qrels.setdefault(query_id, {}).setdefault(nugget_id, {})
        if judged.get(doc_id, grade) != grade:
            raise InputError(
                f"{path}:{line_number}: query {query_id!r} nugget {nugget_id!r} labels document "
                f"{doc_id!r} {grade} here and {judged[doc_id]} on an earlier line; which is meant?"
            )
        judged[doc_id] = grade
        nugget_ids.add(nugget_id)
    if not qrels:
        raise InputError(f"{path}: no judgments")
    if nugget_ids <= ORDINARY_ITERATIONS:
        raise InputError(
            f"{path}: every iteration column is {sorted(nugget_ids)[0]!r}: these look like ordinary "
            "qrels; nugget qrels carry the nugget id there (qid nugget_id doc_id label)"
        )
    return qrels


def write_nugget_qrels(path: str | Path, rows: Iterable[NuggetQrel]) -> None:
    """Write atomically, in the order given."""
    with atomic_writer(path) as handle:
        for query_id, nugget_id, doc_id, label in rows:
            handle.write(f"{query_id} {nugget_id} {doc_id} {int(label)}\n")


def nugget_rows(qrels: Mapping[str, Mapping[str, Mapping[str, int]]]) -> list[NuggetQrel]:
    """The rows of in-memory nugget qrels, in their order."""
    return [
        (query_id, nugget_id, doc_id, label)
        for query_id, nuggets in qrels.items()
        for nugget_id, documents in nuggets.items()
        for doc_id, label in documents.items()
    ]
