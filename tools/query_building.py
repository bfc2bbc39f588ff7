"""The query sent to a retriever for one benchmark turn.

History modes (how much of the conversation the retriever sees):

* ``full``: every earlier turn serialized as ``User:``/``Agent:`` lines, then the question;
* ``last:K``: the same with only the last K earlier turns;
* ``current``: the current question alone;
* ``rewrite``: a self-contained rewrite of the turn by a model through the seam (CQR);
* ``oracle``: the benchmark's own self-contained rewrite: the gap between ``current`` and
  ``oracle`` is how much of the difficulty is conversational context (MTR-Bench).

Single-turn queries have no history: every mode but ``oracle`` sends the query text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from benchsmith.history import Exchange, query_text
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import Benchmark, BenchmarkQuery

HISTORY_MODES = ("full", "last:K", "current", "rewrite", "oracle")
LAST_K = re.compile(r"last:(\d+)")

Rewrite = Callable[[list[Exchange], str], str]  # (history, question) -> self-contained query


@dataclass(frozen=True)
class HistoryMode:
    kind: str  # full, last, current, rewrite, oracle
    window: int | None = None  # K for last:K

    @property
    def label(self) -> str:
        return f"last:{self.window}" if self.kind == "last" else self.kind


def parse_history_mode(text: str) -> HistoryMode:
    text = text.strip()
    if text in ("full", "current", "rewrite", "oracle"):
        return HistoryMode(text)
    match = LAST_K.fullmatch(text)
    if match and int(match.group(1)) >= 1:
        return HistoryMode("last", int(match.group(1)))
    raise InputError(f"unknown history mode {text!r}: use one of full, last:K (K ≥ 1), current, rewrite, oracle")


def require_oracle_rewrites(benchmark: Benchmark, histories: Iterable[HistoryMode]) -> None:
    """``oracle`` needs the benchmark's own rewrite of every query: the first query without one
    stops the job before any work, named with its file."""
    if not any(mode.kind == "oracle" for mode in histories):
        return
    if missing := next((query.id for query in benchmark.queries if not query.rewrite), None):
        source = benchmark.queries_file or benchmark.directory / "queries.jsonl"
        raise InputError(
            f"--history oracle needs each query's metadata.rewrite; query {missing!r} of {source} has none"
        )


def build_query(query: BenchmarkQuery, mode: HistoryMode, rewrite: Rewrite | None = None) -> str:
    if mode.kind == "oracle":
        if not query.rewrite:
            raise InputError(
                f"query {query.id!r} has no self-contained rewrite (metadata.rewrite): "
                "--history oracle needs a benchmark that carries one"
            )
        return query.rewrite
    if not query.conversational:
        return query.text
    if mode.kind == "current":
        return query.question
    if mode.kind == "rewrite":
        if rewrite is None:
            raise ValueError("--history rewrite needs a rewrite function")
        return rewrite(query.history, query.question) if query.history else query.question
    return query_text(query.history, query.question, mode.window)
