"""The user's own retrievers in a configuration search (issue 34): each is one fixed configuration
(tools/retrieval/strategy_space.OutsideConfiguration), asked for its top K per query as evaluate
asks (tools/retrieval/outside_retrieval.py: in parallel, rate-limited, retried, each finished query
logged in ``outside/<configuration>.jsonl`` so a resumed search never asks it again), its passages
pooled and judged beside select's chunks.

The judges read text. A result's text is the one the system gave (a LangChain Document's
``page_content``, an HTTP result's ``text``), else that of select's own chunk with the result's id
(a chunk id of one of the space's chunkings, or a document id: the whole document). A text equal
to one of select's chunks is that chunk's pair, judged once for both. A result with no text
anywhere keeps its place in the ranking and counts as not relevant (no facts), as it would be to
a generator handed it; the report's notes name the configuration, how many and their ids.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.evals.measures.selection_measures import QueryCounts, query_counts
from benchsmith.graphs.contexts.select import SelectContext
from benchsmith.graphs.select.inputs import job, queries_of, run_file_of
from benchsmith.graphs.select.judging import pair_id
from benchsmith.graphs.select.results import JudgedPool
from benchsmith.graphs.select.retrieval import Corpus, chunk_index
from benchsmith.stores.formats.trec import write_trec_run
from benchsmith.tools.corpus.documents import content_id
from benchsmith.tools.retrieval.chunking_strategies import SelectChunk, parse_chunking
from benchsmith.tools.retrieval.outside_retrieval import (
    UNMAPPED_SHOWN,
    OutsideCall,
    finished_queries,
    outside_record_batches,
    unmapped_results,
)
from benchsmith.tools.retrieval.outside_retrievers import Found, resolve_retriever
from benchsmith.tools.retrieval.query_building import HistoryMode, build_query, history_records
from benchsmith.tools.retrieval.strategy_space import OWN_LEVEL, RAW, OutsideConfiguration

OUTSIDE_DIR = "outside"  # each outside configuration's log of finished queries, in the run directory
WHOLE = "whole"  # the chunking whose chunk ids are the documents' ids


@dataclass
class SelectPassages:
    """Select's own chunks, by id and by text (content hash), over the space's chunkings then whole
    documents, the first found kept."""

    by_id: dict[str, tuple[str, SelectChunk]]  # {chunk id: (chunking label, chunk)}
    by_key: dict[str, tuple[str, SelectChunk]]


def select_passages(corpus: Corpus, chunkings: Sequence[str]) -> SelectPassages:
    passages = SelectPassages({}, {})
    for label in dict.fromkeys([*chunkings, WHOLE]):
        for chunk in chunk_index(corpus, parse_chunking(label)).chunks:
            passages.by_id.setdefault(chunk.id, (label, chunk))
            passages.by_key.setdefault(chunk.key, (label, chunk))
    return passages


def ranked_passages(found: Sequence[Found], passages: SelectPassages, top_k: int) -> dict[str, Any]:
    """A query's log record: its top K results (by score, ties by id, each id once) with the text
    the judges read, and the ids of those with no text anywhere (``unmapped``)."""
    entries: dict[str, dict[str, Any]] = {}
    for result in found:
        entry = passage_entry(result, passages)
        entries.setdefault(entry["id"], entry)
    ranking = sorted(entries.values(), key=lambda entry: (-entry["score"], entry["id"]))[:top_k]
    return {"ranking": ranking, "unmapped": [entry["id"] for entry in ranking if entry["key"] is None]}


def passage_entry(result: Found, passages: SelectPassages) -> dict[str, Any]:
    key = content_id(result.text) if result.text is not None else None
    known = passages.by_key.get(key) if key is not None else passages.by_id.get(str(result.id))
    result_id = result.id if result.id is not None else f"text:{key}"
    if known is not None:
        chunking, chunk = known
        return {
            "id": result_id,
            "score": result.score,
            "key": chunk.key,
            "text": chunk.text,
            "chunk_id": chunk.id,
            "doc_id": chunk.doc_id,
            "title": chunk.title,
            "chunking": chunking,
        }
    if key is None:  # no text given, and no chunk of select's with this id
        return {"id": result_id, "score": result.score, "key": None}
    return {
        "id": result_id,
        "score": result.score,
        "key": key,
        "text": result.text,
        "chunk_id": result_id,
        "doc_id": result_id,
        "title": "",
        "chunking": OWN_LEVEL,
    }


def outside_log(runtime: Runtime[SelectContext], run_id: str, configuration: OutsideConfiguration) -> Path:
    return job.run_dir(runtime, run_id).file(OUTSIDE_DIR) / f"{configuration.file_stem}.jsonl"


def outside_call(query: Any, configuration: OutsideConfiguration) -> OutsideCall:
    """What one query sends: select's query (the question with its conversation, as its rewrite
    level ``none`` builds it) and no history; under ``raw`` the question and the earlier turns."""
    if configuration.history == RAW:
        return OutsideCall(query.question, history_records(query, HistoryMode(RAW)))
    return OutsideCall(build_query(query, HistoryMode("full")), [])


def retrieve_outside(
    runtime: Runtime[SelectContext],
    run_id: str,
    queries_path: str,
    passages: SelectPassages,
    configuration: OutsideConfiguration,
) -> None:
    """Ask the user's retriever for every query not yet logged; then write its TREC run file (what
    it returned, by the ids it gave), which marks the configuration retrieved."""
    context = job.context(runtime)
    queries = queries_of(queries_path)
    query_ids = [query.id for query in queries]
    log = outside_log(runtime, run_id, configuration)
    for _ in outside_record_batches(
        resolve_retriever(configuration.spec, context.timeout_s),
        {query.id: outside_call(query, configuration) for query in queries},
        query_ids,
        configuration.top_k,
        log,
        lambda found: ranked_passages(found, passages, configuration.top_k),
        batch_size=max(1, len(query_ids)),  # one batch: every query in flight as concurrency allows
        concurrency=context.concurrency,
        max_attempts=context.max_attempts,
        rate_limit=context.rate_limit,
    ):
        pass
    records = finished_queries(log)
    run = {query_id: {entry["id"]: entry["score"] for entry in records[query_id]["ranking"]} for query_id in query_ids}
    write_trec_run(run_file_of(runtime, run_id, configuration), run, tag=configuration.name)


def outside_rankings(
    runtime: Runtime[SelectContext], run_id: str, configuration: OutsideConfiguration
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """``(query id, its ranked entries)`` from the configuration's log."""
    for query_id, record in finished_queries(outside_log(runtime, run_id, configuration)).items():
        yield query_id, record["ranking"]


def outside_pool_records(
    runtime: Runtime[SelectContext], run_id: str, configuration: OutsideConfiguration
) -> Iterator[dict[str, Any]]:
    """The pool's records of the configuration's passages with text, one per (query, text)."""
    for query_id, ranking in outside_rankings(runtime, run_id, configuration):
        for entry in ranking:
            if entry["key"] is not None:
                yield {
                    "pair": pair_id(query_id, entry["key"]),
                    "query_id": query_id,
                    **{field: entry[field] for field in ("key", "chunk_id", "doc_id", "chunking", "title", "text")},
                }


def outside_counts(
    runtime: Runtime[SelectContext], run_id: str, configuration: OutsideConfiguration, judged: JudgedPool
) -> QueryCounts:
    """Its ranking per query read as (relevant, facts) per rank; a result without text is not relevant."""
    rankings = {}
    for query_id, ranking in outside_rankings(runtime, run_id, configuration):
        pairs = [None if entry["key"] is None else pair_id(query_id, entry["key"]) for entry in ranking]
        missing = [pair for pair in pairs if pair is not None and pair not in judged.relevant]
        if missing:
            raise RuntimeError(f"configuration {configuration.name!r}: pair {missing[0]!r} of its run was never judged")
        rankings[query_id] = [
            (False, frozenset()) if pair is None else (judged.relevant[pair], frozenset(judged.facts_of.get(pair, ())))
            for pair in pairs
        ]
    return query_counts(rankings, judged.facts_per_query, judged.query_ids, configuration.top_k)


def outside_notes(
    runtime: Runtime[SelectContext], run_id: str, configurations: Mapping[str, OutsideConfiguration]
) -> list[str]:
    """What the report says of the outside configurations: what they are, and the results of each
    that had no text anywhere."""
    if not configurations:
        return []
    notes = [
        "Outside configurations ("
        + ", ".join(configurations)
        + "): your own retrievers, fixed: asked once per query for their top K (the space's first top_k level) "
        "with select's query (the question with its conversation) and no history, or under @raw the question "
        "and the earlier turns; their chunking, filters and reranking are their own. A result's text is the "
        "one it gave, else that of select's chunk (or whole document) with its id; its passages are pooled and "
        "judged with select's chunks, a text equal to one of them judged once for both."
    ]
    for name, configuration in configurations.items():
        results, queries, ids = unmapped_results(outside_log(runtime, run_id, configuration))
        if results:
            shown = ", ".join(repr(doc_id) for doc_id in ids[:UNMAPPED_SHOWN]) + (
                ", …" if len(ids) > UNMAPPED_SHOWN else ""
            )
            notes.append(
                f"{name}: {results} results in {queries} queries have no text (none given, and select holds no "
                f"chunk or document with that id; {len(ids)} distinct: {shown}); each keeps its rank and counts as "
                f"not relevant, with no facts (all listed in {OUTSIDE_DIR}/{configuration.file_stem}.jsonl)"
            )
    return notes
