"""Retrievers from outside benchsmith: the user's own search, wherever a built-in retriever goes.

Three kinds, each a retriever spec (tools/retrieval/retriever_specs.py) of kind ``outside``:

* ``http://HOST/PATH`` (or ``https://``): an HTTP search endpoint. The contract, per query::

      POST HOST/PATH   {"query": "...", "history": [{"user": "...", "agent": "..."}, ...], "k": 100}
      200            → {"results": [{"id": "corpus-doc-id", "score": 12.5, "text": "..."}, ...]}

  ``text`` is optional (a string or null): the passage as the system holds it, which ``select``'s
  judges read and by which a result whose id the corpus lacks is mapped, as a LangChain Document's.

  ``$BENCHSMITH_RETRIEVER_API_KEY``, when set, is sent as ``Authorization: Bearer`` (a URL with
  credentials in it is refused: the spec is recorded). ``history`` holds the conversation's earlier turns, oldest first, under the ``raw`` history
  mode (the system builds its own query from them); under every other mode it is empty and
  ``query`` is the query benchsmith built (current question, full history, rewrite, oracle).
  429, 408 and 5xx replies, timeouts and refused connections are retried with backoff (a 429's
  ``Retry-After`` waited for); any other status, or a reply off the contract, stops the run.
* ``py:package.module:object``: an importable LangChain ``BaseRetriever`` instance, or a callable
  ``(query, history, k) -> [(doc_id, score), ...]`` (``history`` as in the HTTP contract).
* a name given to :func:`register_retriever` (the Python API registers an object passed directly
  under its own name).

A LangChain retriever returns Documents, not ids: each maps to the corpus id in its metadata under
``id_key`` (default :data:`DEFAULT_ID_KEY`, ``"id"``), else its ``Document.id`` (what
langchain-chroma and most vector stores set to the stored id), else the corpus document whose text
(or title and text, as benchsmith embeds them) is exactly its ``page_content``. Its scores are
its ranks (``n - rank``): LangChain's interface returns an order, not scores. A result that maps
to no corpus document (any kind's) is kept out of the ranking, counted and listed by id
(:class:`Retrieved.unmapped`): the measures are computed on the rest and the report says so.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import httpx
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from benchsmith.stores.errors import InputError
from benchsmith.tools.retrieval.named_objects import NamedObjects

DEFAULT_ID_KEY = "id"
HTTP_PREFIXES = ("http://", "https://")
PY_PREFIX = "py:"
RETRIEVER_KEY_VARIABLE = "BENCHSMITH_RETRIEVER_API_KEY"  # sent as a bearer token to an HTTP retriever
BUILT_IN_NAMES = ("bm25", "dense", "hybrid")  # tools/retrieval/retriever_specs.py's own retrievers: no registered name
TRANSIENT_STATUS = frozenset({408, 409, 429})
T = TypeVar("T")
UNMAPPED_TEXT_CHARS = 60  # how much of an id-less document's text names it in a report


class OutsideRetrieverError(RuntimeError):
    """A retriever that failed for good (after its retries), or replied off the contract."""


class TransientFailure(OutsideRetrieverError):
    """A failure worth another attempt: a 429, 408, 409 or 5xx reply, a timeout, a refused connection."""


@dataclass(frozen=True)
class Found:
    """One result as the outside system gave it: an id (None when it gave none), its text when
    it gave one (a LangChain Document's ``page_content``), and its score."""

    id: str | None
    score: float
    text: str | None = None


class Searcher(Protocol):
    def __call__(self, query: str, history: list[dict[str, str]], k: int) -> list[Found]: ...


@dataclass
class OutsideRetriever:
    """A ready outside retriever: ``search(query, history, k)`` gives its results, mapped or not."""

    name: str
    searcher: Searcher
    kind: str  # "http", "langchain" or "callable": what the dry run and the report say it is

    def search(self, query: str, history: list[dict[str, str]], k: int) -> list[Found]:
        return self.searcher(query, history, k)


# ---------------------------------------------------------------------------------------
# The three kinds.


def endpoint_client(url: str, key_variable: str, timeout_s: float) -> httpx.Client:
    """A client of the user's endpoint; ``Authorization: Bearer $key_variable`` when that variable is set.
    A URL with a user or password in it is refused: it would be written in the run's record and reports."""
    if httpx.URL(url).userinfo:
        raise InputError(
            f"{httpx.URL(url).copy_with(userinfo=b'')}: keep credentials out of the URL (it is recorded); set {key_variable}"
        )
    key = os.environ.get(key_variable)
    return httpx.Client(timeout=timeout_s, headers={"Authorization": f"Bearer {key}"} if key else {})


def post_json(client: httpx.Client, url: str, body: dict[str, Any]) -> httpx.Response:
    """The user's endpoint's 200 reply to ``body``; a timeout, a lost connection, 408, 409, 429 or
    5xx is a :class:`TransientFailure` (retried), any other status an :class:`OutsideRetrieverError`."""
    try:
        response = client.post(url, json=body)
    except (httpx.TimeoutException, httpx.NetworkError) as error:
        raise TransientFailure(f"{url}: {type(error).__name__}: {error}") from None
    if response.status_code in TRANSIENT_STATUS or response.status_code >= 500:
        raise TransientFailure(f"{url}: HTTP {response.status_code}")
    if response.status_code != 200:
        raise OutsideRetrieverError(f"{url} answered HTTP {response.status_code}: {response.text[:200]!r}")
    return response


def http_searcher(url: str, timeout_s: float = 60.0) -> Searcher:
    """POST the documented JSON request to ``url``; the reply's ``results`` as :class:`Found`."""
    client = endpoint_client(url, RETRIEVER_KEY_VARIABLE, timeout_s)

    def search(query: str, history: list[dict[str, str]], k: int) -> list[Found]:
        response = post_json(client, url, {"query": query, "history": history, "k": k})
        try:
            payload = response.json()
            results = payload["results"]
            return [Found(str(item["id"]), float(item["score"]), _text_of(item)) for item in results]
        except (ValueError, KeyError, TypeError) as error:
            raise OutsideRetrieverError(
                f'{url} replied off the contract ({{"results": [{{"id": ..., "score": ..., "text"?: ...}}]}}): '
                f"{type(error).__name__}: {error}"
            ) from None

    return search


def _text_of(item: Mapping[str, Any]) -> str | None:
    """A result's optional ``text``: a string, or absent or null."""
    text = item.get("text")
    if text is not None and not isinstance(text, str):
        raise TypeError(f"result {item.get('id')!r}: text must be a string or null, got {type(text).__name__}")
    return text


def callable_searcher(function: Callable[..., Sequence[Any]]) -> Searcher:
    """A callable ``(query, history, k) -> [(doc_id, score), ...]``."""

    def search(query: str, history: list[dict[str, str]], k: int) -> list[Found]:
        try:
            return [Found(str(doc_id), float(score)) for doc_id, score in function(query, history, k)]
        except (TypeError, ValueError) as error:
            raise OutsideRetrieverError(
                f"{getattr(function, '__name__', function)!r} must return [(doc_id, score), ...]: {error}"
            ) from None

    return search


def langchain_searcher(retriever: Any, id_key: str = DEFAULT_ID_KEY) -> Searcher:
    """A LangChain ``BaseRetriever``: the query alone (LangChain's interface takes no history),
    its Documents in order, scored by rank."""

    def search(query: str, history: list[dict[str, str]], k: int) -> list[Found]:
        documents = list(retriever.invoke(query))[:k]
        return [
            Found(
                _document_id(document, id_key),
                float(len(documents) - rank),
                document.page_content,
            )
            for rank, document in enumerate(documents)
        ]

    return search


def _document_id(document: Any, id_key: str) -> str | None:
    value = (document.metadata or {}).get(id_key)
    if value is None:
        value = getattr(document, "id", None)
    return None if value is None else str(value)


def is_langchain_retriever(value: Any) -> bool:
    try:
        from langchain_core.retrievers import BaseRetriever
    except ImportError:  # pragma: no cover - langchain-core is a dependency
        return False
    return isinstance(value, BaseRetriever)


def outside_retriever(name: str, value: Any, *, id_key: str = DEFAULT_ID_KEY) -> OutsideRetriever:
    """An :class:`OutsideRetriever` of a LangChain retriever or a callable; anything else is an InputError."""
    if isinstance(value, OutsideRetriever):
        return value
    if is_langchain_retriever(value):
        return OutsideRetriever(name, langchain_searcher(value, id_key), "langchain")
    if callable(value):
        return OutsideRetriever(name, callable_searcher(value), "callable")
    raise InputError(
        f"retriever {name!r}: {type(value).__name__} is neither a LangChain BaseRetriever nor a callable "
        "(query, history, k) -> [(doc_id, score), ...]"
    )


# ---------------------------------------------------------------------------------------
# Ready objects by name, and specs.

_retrievers: NamedObjects[OutsideRetriever] = NamedObjects()


def register_retriever(name: str, retriever: Any, *, id_key: str = DEFAULT_ID_KEY) -> str:
    """Make ``name`` a retriever spec (``--retriever NAME``, ``retrievers=[NAME]``) that resolves to
    ``retriever``: a LangChain ``BaseRetriever`` (its Documents mapped by metadata ``id_key``, see
    the module docstring) or a callable ``(query, history, k) -> [(doc_id, score), ...]``."""
    if not name or name.startswith((*HTTP_PREFIXES, PY_PREFIX)) or name.split(":")[0] in BUILT_IN_NAMES or "@" in name:
        raise InputError(f"retriever name {name!r} is taken or malformed: choose another (no '@', not a built-in)")
    return _retrievers.register(name, retriever, outside_retriever(name, retriever, id_key=id_key))


def spec_for(value: Any) -> str:
    """The spec of a retriever the Python API was given: a string as it is; an object registered
    under its own name (``.name``, else its function or class name) and that name."""
    return _retrievers.spec_of(
        value,
        register_retriever,
        "another retriever is registered as {name}: register this one under its own name "
        "(benchsmith.register_retriever(name, retriever)) and pass the name",
    )


def is_outside_spec(text: str) -> bool:
    return text in _retrievers or text.startswith((*HTTP_PREFIXES, PY_PREFIX))


def resolve_retriever(spec: str, timeout_s: float = 60.0) -> OutsideRetriever:
    """The outside retriever of a spec (registered name, URL or ``py:module:object``); an
    unknown name or an import that fails is an InputError."""
    if (found := _retrievers.find(spec)) is not None:
        return found
    if spec.startswith(HTTP_PREFIXES):
        built = OutsideRetriever(spec, http_searcher(spec, timeout_s), "http")
    elif spec.startswith(PY_PREFIX):
        built = outside_retriever(spec, import_object(spec))
    else:
        raise InputError(f"unknown retriever {spec!r}: not a built-in, a URL, py:module:object or a registered name")
    return _retrievers.built_once(spec, built)


def import_object(spec: str, option: str = "--retriever") -> Any:
    """The object a ``py:package.module:object`` spec names; an InputError naming ``option`` if none."""
    module_name, _, attribute = spec.removeprefix(PY_PREFIX).partition(":")
    if not module_name or not attribute:
        raise InputError(f"{option} {spec!r}: write py:package.module:object")
    try:
        value: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise InputError(f"{option} {spec!r}: cannot import {module_name!r}: {error}") from None
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise InputError(f"{option} {spec!r}: module {module_name!r} has no {attribute!r}")
        value = getattr(value, part)
    return value


def clear_retrievers() -> None:
    """Forget every registered and built outside retriever (a test's or an app's teardown)."""
    _retrievers.clear()


# ---------------------------------------------------------------------------------------
# Mapping results to the corpus, and calling with retries.


@dataclass
class CorpusIds:
    """The corpus's ids, and its documents by exact text (built on the first id-less result)."""

    documents: Mapping[str, tuple[str, str]]  # {doc id: (title, text)}
    joined_text: Callable[[str, str], str]  # title and text as one, as retrievers read a document
    _by_text: dict[str, str] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def by_text(self, text: str) -> str | None:
        with self._lock:
            if self._by_text is None:
                by_text: dict[str, str] = {}
                for doc_id, (title, body) in self.documents.items():
                    by_text.setdefault(body, doc_id)
                    by_text.setdefault(self.joined_text(title, body), doc_id)
                self._by_text = by_text
        return self._by_text.get(text)


def map_to_corpus(found: Sequence[Found], corpus: CorpusIds) -> tuple[list[tuple[str, float]], list[str]]:
    """``(ranking, unmapped)``: each result's corpus id (its own, else the document of its exact
    text), the first of each id kept; the results that map to none, named by their id (or the
    start of their text when they have none)."""
    ranking: dict[str, float] = {}
    unmapped: list[str] = []
    for result in found:
        doc_id = result.id if result.id is not None and result.id in corpus.documents else None
        if doc_id is None and result.text is not None:
            doc_id = corpus.by_text(result.text)
        if doc_id is None:
            unmapped.append(result.id if result.id is not None else "text:" + (result.text or "")[:UNMAPPED_TEXT_CHARS])
        elif doc_id not in ranking:
            ranking[doc_id] = result.score
    return list(ranking.items()), unmapped


def is_transient(error: BaseException) -> bool:
    return isinstance(error, TransientFailure | TimeoutError | ConnectionError)


def with_retries(call: Callable[[], T], max_attempts: int, backoff_initial_s: float = 0.5) -> T:
    """``call()`` retried on transient failures with exponential backoff and jitter (tenacity), as
    model calls are; the last failure is raised when the attempts run out."""
    try:
        return call()  # the first attempt is a plain call: one that succeeds pays nothing for retrying
    except Exception as error:
        if max_attempts <= 1 or not is_transient(error):
            raise
    return Retrying(
        retry=retry_if_exception(is_transient),
        wait=wait_exponential_jitter(initial=backoff_initial_s, max=30.0, jitter=backoff_initial_s),
        stop=stop_after_attempt(max_attempts - 1),
        reraise=True,
    )(call)
