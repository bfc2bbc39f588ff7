"""A user's own systems, as tests start them: a search endpoint served by a real web framework
(starlette under uvicorn, on a free loopback port) that keeps the documented JSON contract of
tools/retrieval/outside_retrievers.py, the word-overlap search behind it, and a LangChain retriever over
PostgreSQL's full-text search (the tests' own PostgreSQL server, tests/postgres_server.py)."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import uvicorn
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from benchsmith.graphs.runtime.resources import clear_registry
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from tests.local_servers import free_port
from tests.synthesis_fixtures import build_collection, synthesize

WORD = re.compile(r"\w+")


def words(text: str) -> set[str]:
    return {word.lower() for word in WORD.findall(text) if len(word) > 2}


def overlap_search(documents: dict[str, str], text: str, k: int) -> list[tuple[str, float]]:
    """The documents sharing words with ``text``, most shared first (ties by id)."""
    asked = words(text)
    scored = [(doc_id, float(len(asked & words(body)))) for doc_id, body in documents.items()]
    ranked = sorted((pair for pair in scored if pair[1] > 0), key=lambda pair: (-pair[1], pair[0]))
    return ranked[:k]


def conversation_text(query: str, history: list[dict[str, str]]) -> str:
    """What the user's system searches for: its own way of using the conversation (the earlier questions and the query)."""
    return " ".join([*(turn["user"] for turn in history), query])


@dataclass
class SearchEndpoint:
    """The endpoint's documents and what it has been asked; ``fail_every``: every Nth request
    first answers 503 (a retry gets the answer); ``hang_at``: request number N waits until
    ``release`` is set (a client can be killed while it waits; ``hanging`` says it is); ``rank``:
    ``(query, history, k) -> [(id, score)]`` instead of the word-overlap search over ``documents``;
    ``texts``: each result's ``text`` where it has one (the contract's optional field)."""

    documents: dict[str, str]
    rank: Callable[[str, list[dict[str, str]], int], list[tuple[str, float]]] | None = None
    texts: dict[str, str] = field(default_factory=dict)
    fail_every: int = 0
    hang_at: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    hanging: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    async def search(self, request: Request) -> JSONResponse:
        body = await request.json()
        with self.lock:
            self.requests.append(body)
            self.authorizations.add(request.headers.get("authorization", ""))
            count = len(self.requests)
        if count == self.hang_at:
            self.hanging.set()
            await asyncio.to_thread(self.release.wait, 300)  # the server keeps answering others meanwhile
        if self.fail_every and count % self.fail_every == 0:
            return JSONResponse({"error": "busy"}, status_code=503)
        if self.rank is not None:
            ranked = self.rank(body["query"], body["history"], int(body["k"]))
        else:
            ranked = overlap_search(self.documents, conversation_text(body["query"], body["history"]), int(body["k"]))
        results = [
            {"id": doc_id, "score": score, **({"text": self.texts[doc_id]} if doc_id in self.texts else {})}
            for doc_id, score in ranked
        ]
        return JSONResponse({"results": results})


@contextmanager
def serving(endpoint: SearchEndpoint) -> Iterator[str]:
    """Serve ``endpoint`` at ``POST /search`` on 127.0.0.1; yield its URL."""
    app = Starlette(routes=[Route("/search", endpoint.search, methods=["POST"])])
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the search endpoint did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/search"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


class PostgresSearch(BaseRetriever):
    """A prototype's LangChain retriever over PostgreSQL's own full-text search: a table of passages
    (``id``, ``body``) ranked by ``ts_rank`` of the query's words (any of them, ``OR``ed)."""

    url: str
    k: int = 20

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        words = " | ".join(sorted(words_of(query))) or "nothing"
        with psycopg.connect(self.url) as connection:
            rows = connection.execute(
                "SELECT id, body FROM passages, to_tsquery('simple', %s) AS asked "
                "WHERE to_tsvector('simple', body) @@ asked "
                "ORDER BY ts_rank(to_tsvector('simple', body), asked) DESC, id LIMIT %s",
                (words, self.k),
            ).fetchall()
        return [Document(body, metadata={"id": passage_id}) for passage_id, body in rows]


def words_of(text: str) -> set[str]:
    """Words PostgreSQL's tsquery takes as they are (letters and digits)."""
    return {word.lower() for word in re.findall(r"[A-Za-z0-9]+", text) if len(word) > 2}


def load_passages(url: str, passages: dict[str, str]) -> None:
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CREATE TABLE passages (id text PRIMARY KEY, body text NOT NULL)")
        with connection.cursor() as cursor:
            cursor.executemany("INSERT INTO passages VALUES (%s, %s)", list(passages.items()))


def synthesized_beir(root: Path) -> Path:
    """A benchmark synthesized offline from 24 documentation pages under ``root``: its BEIR folder."""
    workspace = Workspace.resolve(root / "ws")
    build_collection(workspace, root / "pages", documents=24)
    synthesize(workspace, "synthesized", conversations=3, turns=3)
    clear_registry()
    return RunDirectory(workspace, "synthesized").path / "beir"


def corpus_texts(beir: Path) -> dict[str, str]:
    """``{doc id: text}`` of a BEIR folder's corpus."""
    return {record["_id"]: record["text"] for record in load_jsonl(beir / "corpus.jsonl")}
