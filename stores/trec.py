"""TREC run and qrels files.

Run: ``qid Q0 docid rank score tag`` per line, ranks from 1 in descending score order.
Qrels: ``qid iteration docid relevance`` per line (the iteration column carries nugget or
subtopic ids for alpha-nDCG; it is 0 otherwise).

In memory a run is ``{qid: {docid: score}}`` and qrels are ``{qid: {docid: relevance}}``, the
form ir_measures, pytrec_eval and ranx all take. Reading is strict: a malformed line stops
with an :class:`~stores.errors.InputError` naming the file and line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from benchsmith.stores.errors import InputError
from benchsmith.stores.files import atomic_writer

Run = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]
Qrel = tuple[str, str, int]


def read_trec_run(path: str | Path) -> Run:
    run: Run = {}
    for line_number, fields in _lines(path):
        if len(fields) != 6:
            raise InputError(f"{path}:{line_number}: a TREC run line has 6 fields (qid Q0 docid rank score tag), "
                             f"found {len(fields)}")
        query_id, _, doc_id, _, score, _ = fields
        try:
            run.setdefault(query_id, {})[doc_id] = float(score)
        except ValueError:
            raise InputError(f"{path}:{line_number}: score {score!r} is not a number") from None
    return run


def read_trec_qrels(path: str | Path) -> Qrels:
    qrels: Qrels = {}
    for line_number, fields in _lines(path):
        if len(fields) != 4:
            raise InputError(f"{path}:{line_number}: a TREC qrels line has 4 fields (qid iteration docid relevance), "
                             f"found {len(fields)}")
        query_id, _, doc_id, relevance = fields
        try:
            qrels.setdefault(query_id, {})[doc_id] = int(relevance)
        except ValueError:
            raise InputError(f"{path}:{line_number}: relevance {relevance!r} is not an integer") from None
    return qrels


def write_trec_run(path: str | Path, run: Mapping[str, Mapping[str, float]], tag: str) -> None:
    """Write atomically (stores/files.py), each query's documents by descending
    score, ties broken by document id so the file is the same on every machine."""
    safe_tag = "".join(character if not character.isspace() else "_" for character in tag) or "benchsmith"
    with atomic_writer(path) as handle:
        for query_id in sorted(run):
            ranked = sorted(run[query_id].items(), key=lambda item: (-item[1], item[0]))
            for rank, (doc_id, score) in enumerate(ranked, start=1):
                # Full precision: rounded scores would tie, and trec_eval orders ties by doc id, not rank.
                handle.write(f"{query_id} Q0 {doc_id} {rank} {float(score)!r} {safe_tag}\n")


def write_trec_qrels(path: str | Path, qrels: Iterable[Qrel]) -> None:
    with atomic_writer(path) as handle:
        for query_id, doc_id, relevance in qrels:
            handle.write(f"{query_id} 0 {doc_id} {relevance}\n")


def _lines(path: str | Path) -> Iterable[tuple[int, list[str]]]:
    path = Path(path)
    try:
        handle = path.open(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    with handle:
        try:
            for line_number, line in enumerate(handle, start=1):
                fields = line.split()
                if fields:
                    yield line_number, fields
        except UnicodeDecodeError:
            raise InputError(f"{path}: not valid UTF-8") from None
