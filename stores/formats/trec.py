"""TREC run and qrels files.

Run: ``qid Q0 docid rank score tag`` per line, ranks from 1 in descending score order.
Qrels: ``qid iteration docid relevance`` per line (the iteration column carries nugget or
subtopic ids for alpha-nDCG; it is 0 otherwise).

In memory a run is ``{qid: {docid: score}}`` and qrels are ``{qid: {docid: relevance}}``, the
form ir_measures and pytrec_eval take. Reading is strict: a malformed line stops with an
:class:`~stores.errors.InputError` naming the file and line.

Runs too large to hold whole are streamed a batch of queries at a time. The run files this
package writes are sorted by query id (then by descending score, ties by document id), so
several of them can be read side by side, query by query (:func:`iter_aligned_batches`); a
run file from elsewhere, in any order, is first copied into that form
(:func:`write_sorted_copy`). Every writer writes a temporary file and renames it when the
last line is written: a run file that exists is complete.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.files import atomic_writer
from benchsmith.stores.persistence.jsonl import decoded_line, open_user_file

Run = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]
Qrel = tuple[str, str, int]


def read_trec_run(path: str | Path) -> Run:
    """A whole run file, in any line order (large runs: :func:`iter_run_batches`)."""
    run: Run = {}
    for line_number, fields in _lines(path):
        query_id, doc_id, score = _run_fields(path, line_number, fields)
        ranking = run.setdefault(query_id, {})
        if doc_id in ranking:
            raise InputError(_repeated(path, line_number, query_id, doc_id))
        ranking[doc_id] = score
    return run


def _repeated(path: str | Path, line_number: int | None, query_id: str, doc_id: str) -> str:
    where = f"{path}:{line_number}" if line_number is not None else str(path)
    return (
        f"{where}: query {query_id!r} ranks document {doc_id!r} twice; a run lists each document once per "
        "query (which score is meant?)"
    )


def read_trec_qrels(path: str | Path) -> Qrels:
    qrels: Qrels = {}
    for line_number, fields in _lines(path):
        query_id, _, doc_id, grade = judgment_fields(
            path, line_number, fields, "TREC qrels", "qid iteration docid relevance"
        )
        judged = qrels.setdefault(query_id, {})
        if judged.get(doc_id, grade) != grade:
            raise InputError(conflicting_judgment(path, line_number, query_id, doc_id, judged[doc_id], grade))
        judged[doc_id] = grade
    return qrels


def judgment_fields(
    path: str | Path, line_number: int, fields: list[str], kind: str, columns: str
) -> tuple[str, str, str, int]:
    """A qrels line's four fields (``columns`` names them), the last an integer grade; else an
    InputError naming the file and line."""
    if len(fields) != 4:
        raise InputError(f"{path}:{line_number}: a {kind} line has 4 fields ({columns}), found {len(fields)}")
    try:
        grade = int(fields[3])
    except ValueError:
        raise InputError(f"{path}:{line_number}: {columns.split()[-1]} {fields[3]!r} is not an integer") from None
    return fields[0], fields[1], fields[2], grade


def conflicting_judgment(
    path: str | Path, line_number: int, query_id: str, doc_id: str, first: int, second: int
) -> str:
    """The message for a document judged twice for one query with different grades (the same
    grade twice is harmless and accepted: some published qrels repeat lines)."""
    return (
        f"{path}:{line_number}: query {query_id!r} judges document {doc_id!r} {second} here and {first} on an "
        "earlier line; which is meant?"
    )


def write_trec_run(path: str | Path, run: Mapping[str, Mapping[str, float]], tag: str) -> None:
    """Write atomically (stores/persistence/files.py), queries sorted by id, each query's documents by
    descending score, ties broken by document id so the file is the same on every machine."""
    with trec_run_writer(path, tag) as write:
        write(run)


@contextmanager
def trec_run_writer(path: str | Path, tag: str) -> Iterator[Callable[[Mapping[str, Mapping[str, float]]], None]]:
    """A function that appends a batch of queries to the run file ``path``; the file appears
    (atomically) when the block ends without error. Batches must come in query id order: each
    batch's queries after every query of the batches before (they are sorted within a batch)."""
    safe_tag = "".join(character if not character.isspace() else "_" for character in tag) or "benchsmith"
    with atomic_writer(path) as handle:
        last: str | None = None

        def write(batch: Mapping[str, Mapping[str, float]]) -> None:
            nonlocal last
            query_ids = sorted(batch)
            if not query_ids:
                return
            if last is not None and query_ids[0] <= last:
                raise ValueError(
                    f"{path}: query {query_ids[0]!r} written after {last!r}: batches must come in query id order"
                )
            _write_queries(handle, query_ids, batch, safe_tag)
            last = query_ids[-1]

        yield write


def _write_queries(handle: IO[str], query_ids: Iterable[str], run: Mapping[str, Mapping[str, float]], tag: str) -> None:
    for query_id in query_ids:
        ranked = sorted(run[query_id].items(), key=lambda item: (-item[1], item[0]))
        # Full precision: rounded scores would tie, and trec_eval orders ties by doc id, not rank.
        handle.writelines(
            f"{query_id} Q0 {doc_id} {rank} {float(score)!r} {tag}\n"
            for rank, (doc_id, score) in enumerate(ranked, start=1)
        )


# ---------------------------------------------------------------------------------------
# Streaming: a batch of queries at a time.


def iter_trec_run(path: str | Path) -> Iterator[tuple[str, dict[str, float]]]:
    """Each query's ranking ``(qid, {docid: score})`` in file order, for a file sorted by query
    id (every run file this package writes); any other order stops with an InputError."""
    current: str | None = None
    ranking: dict[str, float] = {}
    path = Path(path)
    with _open_text(path) as handle:
        line_number = 0
        try:
            # The hot loop of every streamed stage: checks inline, no call per line.
            for line_number, line in enumerate(handle, start=1):
                fields = line.split()
                if len(fields) != 6:
                    if not fields:
                        continue
                    _run_fields(path, line_number, fields)  # raises, naming the line
                try:
                    score = float(fields[4])
                except ValueError:
                    _run_fields(path, line_number, fields)
                    raise
                if fields[0] != current:
                    if current is not None:
                        if fields[0] < current:
                            raise InputError(
                                f"{path}:{line_number}: query {fields[0]!r} comes after {current!r}; "
                                "run files are read in query id order (copy others with "
                                "write_sorted_copy)"
                            )
                        yield current, ranking
                    current, ranking = fields[0], {}
                if fields[2] in ranking:
                    raise InputError(_repeated(path, line_number, current, fields[2]))
                ranking[fields[2]] = score
        except UnicodeDecodeError as error:
            raise InputError(
                f"{path}:{line_number + 1}: not valid UTF-8 ({error.reason}); save the file as UTF-8"
            ) from None
    if current is not None:
        yield current, ranking


def iter_run_batches(path: str | Path, queries_per_batch: int) -> Iterator[dict[str, dict[str, float]]]:
    """The run file ``path`` (sorted by query id) as runs of at most ``queries_per_batch`` queries."""
    batch: dict[str, dict[str, float]] = {}
    for query_id, ranking in iter_trec_run(path):
        batch[query_id] = ranking
        if len(batch) == queries_per_batch:
            yield batch
            batch = {}
    if batch:
        yield batch


def iter_aligned_batches(
    paths: Sequence[str | Path], queries_per_batch: int
) -> Iterator[list[dict[str, dict[str, float]]]]:
    """Several run files (each sorted by query id) read side by side: per batch, one run per
    file over the same queries (at most ``queries_per_batch``, in id order); a file without a
    query has no entry for it."""
    streams = [iter_trec_run(path) for path in paths]
    heads = [next(stream, None) for stream in streams]
    batch: list[dict[str, dict[str, float]]] = [{} for _ in paths]
    queries = 0
    while any(head is not None for head in heads):
        query_id = min(head[0] for head in heads if head is not None)
        for index, head in enumerate(heads):
            if head is not None and head[0] == query_id:
                batch[index][query_id] = head[1]
                heads[index] = next(streams[index], None)
        queries += 1
        if queries == queries_per_batch:
            yield batch
            batch, queries = [{} for _ in paths], 0
    if queries:
        yield batch


def run_file_query_ids(path: str | Path) -> list[str]:
    """The query ids of a run file in first-seen order, every line checked on the way: its
    fields, a document listed twice within a query's lines (files from elsewhere list a query's
    documents together; :func:`write_sorted_copy` checks the rest), and that there is a line."""
    seen: dict[str, None] = {}
    current: str | None = None
    documents: set[str] = set()
    for line_number, fields in _lines(path):
        query_id, doc_id, _ = _run_fields(path, line_number, fields)
        if query_id != current:
            current, documents = query_id, set()
        if doc_id in documents:
            raise InputError(_repeated(path, line_number, query_id, doc_id))
        documents.add(doc_id)
        seen.setdefault(query_id)
    if not seen:
        raise InputError(f"{path}: no run lines (an empty run file would score zero everywhere)")
    return list(seen)


@dataclass
class RunFileSummary:
    """What a copied run file held."""

    queries: list[str] = field(default_factory=list)  # query ids, sorted
    lines: int = 0


def write_sorted_copy(source: str | Path, target: str | Path, tag: str) -> RunFileSummary:
    """Copy the TREC run file ``source`` (any line order) to ``target`` in this package's form:
    queries by id, each query's documents by descending score, ties by document id, ranks from
    1. Every line is checked first (an InputError names the file and line; so does a document
    listed twice for one query, and a file without any run line). Memory holds one query's
    lines and the byte ranges of each query's lines, never the whole run."""
    source = Path(source)
    ranges: dict[str, array[int]] = {}  # query id -> [start, end, start, end, ...] byte offsets of its lines
    summary = RunFileSummary()
    with _open_binary(source) as handle:
        offset = 0
        for line_number, raw in enumerate(handle, start=1):
            end = offset + len(raw)
            fields = _decoded(source, line_number, raw).split()
            if fields:
                query_id, _, _ = _run_fields(source, line_number, fields)
                spans = ranges.get(query_id)
                if spans is None:
                    ranges[query_id] = spans = array("q")
                if spans and spans[-1] == offset:
                    spans[-1] = end  # the line right after this query's previous one
                else:
                    spans.extend((offset, end))
                summary.lines += 1
            offset = end
    summary.queries = sorted(ranges)
    if not summary.queries:
        raise InputError(f"{source}: no run lines (an empty run file would score zero everywhere)")
    with _open_binary(source) as handle, trec_run_writer(target, tag) as write:
        for query_id in summary.queries:
            spans = ranges.pop(query_id)
            ranking: dict[str, float] = {}
            for start, end in zip(spans[::2], spans[1::2]):
                handle.seek(start)
                for line in handle.read(end - start).decode("utf-8").splitlines():
                    fields = line.split()
                    if fields:
                        if fields[2] in ranking:
                            raise InputError(_repeated(source, None, query_id, fields[2]))
                        ranking[fields[2]] = float(fields[4])
            write({query_id: ranking})
    return summary


def _run_fields(path: str | Path, line_number: int, fields: list[str]) -> tuple[str, str, float]:
    if len(fields) != 6:
        raise InputError(
            f"{path}:{line_number}: a TREC run line has 6 fields (qid Q0 docid rank score tag), found {len(fields)}"
        )
    try:
        return fields[0], fields[2], float(fields[4])
    except ValueError:
        raise InputError(f"{path}:{line_number}: score {fields[4]!r} is not a number") from None


def _open_text(path: Path) -> IO[str]:
    return open_user_file(path)


def _open_binary(path: Path) -> IO[bytes]:
    return open_user_file(path, "rb")


def _decoded(path: Path, line_number: int, raw: bytes) -> str:
    return decoded_line(path, line_number, raw)


def write_trec_qrels(path: str | Path, qrels: Iterable[Qrel]) -> None:
    with atomic_writer(path) as handle:
        for query_id, doc_id, relevance in qrels:
            handle.write(f"{query_id} 0 {doc_id} {relevance}\n")


def _lines(path: str | Path) -> Iterable[tuple[int, list[str]]]:
    """Each non-blank line's fields, decoded line by line so bad bytes name their line."""
    path = Path(path)
    with open_user_file(path, "rb") as handle:
        for line_number, raw in enumerate(handle, start=1):
            fields = decoded_line(path, line_number, raw).split()
            if fields:
                yield line_number, fields
