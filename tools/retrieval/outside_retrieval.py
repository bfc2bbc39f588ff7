"""One outside retriever's run over a benchmark's queries: calls in parallel (``concurrency`` in
flight, at most ``rate_limit`` a second), each retried on transient failures, each finished query
appended to a log in the run directory (``outside/<configuration>.jsonl``: its ranking and the
results that mapped to no corpus document) so that a killed evaluation never asks again for a
query it finished. Rankings come out a batch of query ids at a time, in the order given.

A resumed run reads the log's finished queries once; the log is the one place they are held.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.stores.formats.trec import Run
from benchsmith.stores.persistence.jsonl import record_log
from benchsmith.tools.retrieval.outside_retrievers import (
    CorpusIds,
    Found,
    OutsideRetriever,
    map_to_corpus,
    with_retries,
)

UNMAPPED_SHOWN = 10  # ids a warning names; the log holds them all


@dataclass(frozen=True)
class OutsideCall:
    """What one query sends: the query text and the earlier turns (empty unless history is ``raw``)."""

    query: str
    history: list[dict[str, str]]


def finished_queries(log_path: Path) -> dict[str, dict[str, Any]]:
    """``{query id: record}`` of the complete lines of a log (a line cut by a kill is asked again)."""
    if not log_path.exists():
        return {}
    data = log_path.read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    return {record["_id"]: record for record in map(json.loads, complete.splitlines()) if record}


def outside_run_batches(
    retriever: OutsideRetriever,
    calls: Mapping[str, OutsideCall],
    query_ids: Sequence[str],
    depth: int,
    corpus: CorpusIds,
    log_path: Path,
    *,
    batch_size: int,
    concurrency: int,
    max_attempts: int,
    rate_limit: float | None = None,
) -> Iterator[tuple[int, Run]]:
    """``(queries done, the batch's rankings)``, batches of ``query_ids`` in their order."""

    def mapped(found: Sequence[Found]) -> dict[str, Any]:
        ranking, unmapped = map_to_corpus(found, corpus)
        return {"ranking": ranking, "unmapped": unmapped}

    for done, records in outside_record_batches(
        retriever,
        calls,
        query_ids,
        depth,
        log_path,
        mapped,
        batch_size=batch_size,
        concurrency=concurrency,
        max_attempts=max_attempts,
        rate_limit=rate_limit,
    ):
        yield done, {query_id: dict(record["ranking"]) for query_id, record in records.items()}


def outside_record_batches(
    retriever: OutsideRetriever,
    calls: Mapping[str, OutsideCall],
    query_ids: Sequence[str],
    depth: int,
    log_path: Path,
    record_of: Callable[[Sequence[Found]], dict[str, Any]],
    *,
    batch_size: int,
    concurrency: int,
    max_attempts: int,
    rate_limit: float | None = None,
) -> Iterator[tuple[int, dict[str, dict[str, Any]]]]:
    """``(queries done, the batch's log records by query id)``, batches of ``query_ids`` in their
    order: each query asked for ``depth`` results, its record ``record_of(results)`` (with an
    ``unmapped`` list, :func:`unmapped_results`) logged under its ``_id`` once finished."""
    log = record_log(log_path, "_id")
    done_before = finished_queries(log_path)
    wait_for_turn = rate_limiter(rate_limit)

    def ask(query_id: str) -> dict[str, Any]:
        call = calls[query_id]

        def attempt() -> Any:
            wait_for_turn()
            return retriever.search(call.query, call.history, depth)

        record = {"_id": query_id, **record_of(with_retries(attempt, max_attempts))}
        log.append_once(record)
        return record

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        for start in range(0, len(query_ids), batch_size):
            batch = query_ids[start : start + batch_size]
            pending = {query_id: pool.submit(ask, query_id) for query_id in batch if query_id not in done_before}
            yield (
                start + len(batch),
                {query_id: done_before.get(query_id) or pending[query_id].result() for query_id in batch},
            )


def unmapped_results(log_path: Path) -> tuple[int, int, list[str]]:
    """``(results, queries, ids)``: how many results of the log mapped to no corpus document, in
    how many queries, and their distinct ids (or text starts), first seen first."""
    results, queries = 0, 0
    ids: dict[str, None] = {}
    for record in finished_queries(log_path).values():
        if record["unmapped"]:
            results += len(record["unmapped"])
            queries += 1
            ids.update(dict.fromkeys(record["unmapped"]))
    return results, queries, list(ids)


def unmapped_warning(name: str, log_path: Path) -> str | None:
    """What the report says of a configuration whose results named documents the corpus lacks."""
    results, queries, ids = unmapped_results(log_path)
    if not results:
        return None
    shown = ", ".join(repr(doc_id) for doc_id in ids[:UNMAPPED_SHOWN]) + (", …" if len(ids) > UNMAPPED_SHOWN else "")
    return (
        f"{name}: {results} retrieved documents in {queries} queries are not in the corpus ({len(ids)} distinct: "
        f"{shown}); they are left out of its rankings and its measures are computed on the rest "
        f"(all listed in {log_path.name})"
    )


def rate_limiter(requests_per_second: float | None) -> Callable[[], None]:
    if not requests_per_second:
        return lambda: None
    # Deferred: langchain_core is needed only when a rate limit is asked for (as the model seam's).
    from langchain_core.rate_limiters import InMemoryRateLimiter

    limiter = InMemoryRateLimiter(
        requests_per_second=requests_per_second, check_every_n_seconds=0.01, max_bucket_size=1
    )

    def wait() -> None:
        limiter.acquire(blocking=True)

    return wait
