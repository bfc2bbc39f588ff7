"""Chroma collections: an embedded ``PersistentClient`` in the workspace by default, a
Chroma server with ``--chroma-host HOST:PORT``.

A collection is always opened with the caller's embedding function: Chroma's default one
downloads an ONNX model on first use, which fails offline and would silently mix embedders.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import chromadb
import chromadb.errors
import numpy as np
from chromadb.api import ClientAPI
from chromadb.config import Settings

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.files import exclusive_lock
from benchsmith.stores.persistence.workspace import Workspace

# Chroma refuses larger adds (5,461 items at most); stay well below.
MAX_UPSERT_BATCH = 4096
# Items per page when the whole collection is read (iter_all): under SQLite's 32,766 bound variables
# per statement, which Chroma binds per item (a page of 32,768 with documents and metadata failed:
# 'too many SQL variables').
READ_PAGE = 8192
T = TypeVar("T")


def open_client(workspace: Workspace, host: str | None = None) -> ClientAPI:
    """``PersistentClient`` under ``<workspace>/chroma``, or an ``HttpClient`` for ``HOST:PORT``."""
    settings = Settings(anonymized_telemetry=False)
    if host is None:
        # Two processes opening a new workspace at once both run Chroma's schema migrations and
        # one fails ("table collections already exists"): the first open is serialized.
        with exclusive_lock(workspace.root / "chroma.lock"):
            return chromadb.PersistentClient(path=str(workspace.chroma_dir), settings=settings)
    hostname, _, port = host.rpartition(":")
    if not hostname or not port.isdigit():
        raise InputError(f"--chroma-host must be HOST:PORT, got {host!r}")
    return chromadb.HttpClient(host=hostname, port=int(port), settings=settings)


def _asked(column: Sequence[T] | np.ndarray | None) -> Sequence[T] | np.ndarray:
    """A column a read asked Chroma for: its result types every column optional, as it is when not asked."""
    if column is None:
        raise RuntimeError("Chroma returned no column that the read asked for")
    return column


class VectorStore:
    """One collection, tagged with the embedder that built it."""

    def __init__(self, client: ClientAPI, name: str, embedding_function: Any, embedder_name: str):
        if len(name) < 3:
            raise InputError(f"collection name {name!r} is too short: Chroma needs at least 3 characters")
        self.name = name
        self.collection = client.get_or_create_collection(
            name=name,
            embedding_function=embedding_function,
            metadata={"embedder": embedder_name, "hnsw:space": "cosine"},
        )
        built_with = (self.collection.metadata or {}).get("embedder")
        if built_with not in (None, embedder_name):
            raise InputError(
                f"collection {name!r} was built with embedder {built_with!r}, not {embedder_name!r}: "
                "use another --collection per embedder"
            )

    @classmethod
    def open_existing(cls, client: ClientAPI, name: str, embedding_function_for: Callable[[str], Any]) -> VectorStore:
        """A collection that must exist, with the embedding function of the embedder that built it."""
        try:
            metadata = client.get_collection(name).metadata or {}
        except chromadb.errors.NotFoundError:
            raise InputError(
                f"no collection {name!r} in this workspace: run `benchsmith ingest ... --collection {name}` first"
            ) from None
        embedder = metadata.get("embedder", "")
        return cls(client, name, embedding_function_for(embedder), embedder)

    def fetch(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """``{id: {"text": ..., **metadata}}`` for the given ids; unknown ids are absent."""
        found = self.collection.get(ids=list(dict.fromkeys(ids)), include=["documents", "metadatas"])
        return {
            chunk_id: {"text": text, **(metadata or {})}
            for chunk_id, text, metadata in zip(found["ids"], _asked(found["documents"]), _asked(found["metadatas"]))
        }

    def embeddings(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """``{id: embedding}`` for the given ids; unknown ids are absent."""
        found = self.collection.get(ids=list(dict.fromkeys(ids)), include=["embeddings"])
        return {
            chunk_id: np.asarray(vector, dtype=np.float32)
            for chunk_id, vector in zip(found["ids"], _asked(found["embeddings"]))
        }

    def chunks(self, ids: Sequence[str]) -> dict[str, tuple[dict[str, Any], np.ndarray]]:
        """``{id: (record, embedding)}``: :meth:`fetch` and :meth:`embeddings` in one read of the store."""
        found = self.collection.get(ids=list(dict.fromkeys(ids)), include=["documents", "metadatas", "embeddings"])
        return {
            chunk_id: ({"text": text, **(metadata or {})}, np.asarray(vector, dtype=np.float32))
            for chunk_id, text, metadata, vector in zip(
                found["ids"], _asked(found["documents"]), _asked(found["metadatas"]), _asked(found["embeddings"])
            )
        }

    def iter_all(
        self, include: Sequence[str] = ("documents", "metadatas"), page: int = READ_PAGE
    ) -> Iterator[dict[str, Any]]:
        """Every stored item in pages: ``{"ids": [...], <include>: [...]}``, in Chroma's order.

        The ids come first, in one read; then each page is read by its ids. Paging by offset
        costs time in proportion to the offset (0.33 s for 8,192 items at offset 0 of a
        million-chunk collection, 0.95 s at 870,000), so a whole read grew with the square of
        the size; a page read by ids costs 0.23-0.29 s wherever it lies."""
        ids = self.collection.get(include=[])["ids"]
        for start in range(0, len(ids), page):
            wanted = ids[start : start + page]
            if not include:
                yield {"ids": wanted}
                continue
            found: dict[str, Any] = dict(self.collection.get(ids=wanted, include=list(include)))  # type: ignore[arg-type]  # its keys as asked: Chroma's names
            if found["ids"] != wanted:  # an item deleted meanwhile; Chroma otherwise keeps the asked order
                at = {chunk_id: position for position, chunk_id in enumerate(found["ids"])}
                order = [at[chunk_id] for chunk_id in wanted if chunk_id in at]
                found = {
                    "ids": [found["ids"][i] for i in order],
                    **{field: [found[field][i] for i in order] for field in include},
                }
            yield found

    def count(self) -> int:
        return self.collection.count()

    def stored_texts(self, ids: Sequence[str]) -> dict[str, str]:
        """``{id: stored text}`` of the ``ids`` stored already (the resume check before embedding: an id
        names a span of a file, so a changed file brings the same id with another text)."""
        found: dict[str, str] = {}
        for start in range(0, len(ids), MAX_UPSERT_BATCH):
            batch = self.collection.get(ids=list(ids[start : start + MAX_UPSERT_BATCH]), include=["documents"])
            found.update(zip(batch["ids"], _asked(batch["documents"])))
        return found

    def upsert(
        self,
        ids: Sequence[str],
        embeddings: Sequence[Sequence[float]] | np.ndarray,
        documents: Sequence[str],
        metadatas: Sequence[dict[str, Any] | None],
    ) -> None:
        """Idempotent write: an id is stored once, its text and vector the last written."""
        for start in range(0, len(ids), MAX_UPSERT_BATCH):
            end = start + MAX_UPSERT_BATCH
            self.collection.upsert(
                ids=list(ids[start:end]),
                embeddings=embeddings[start:end],  # type: ignore[arg-type]  # Chroma takes lists of floats too
                documents=list(documents[start:end]),
                metadatas=list(metadatas[start:end]),  # type: ignore[arg-type]  # None: no metadata (Chroma refuses {})
            )
