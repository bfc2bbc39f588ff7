"""What the graphs share within one process: the settings every job's context has, Chroma
clients, model seams, and a registry of ready objects (a scripted model, an embedder, a
reranker) that an app or a test hands in by name.

Contexts stay JSON-serializable (LangGraph Studio draws them as forms): they hold names and
specs, never objects. ``register_model("my-judge", seam)`` makes ``"my-judge"`` usable
wherever a model spec goes (``llm=``, ``judges=``); ``register_embedder`` and
``register_scorer`` do the same for embedders and rerankers.

Opening a Chroma client or a seam costs time, and Chroma fails ("Could not connect to
tenant") when threads create clients of one path at once, so each is created once, under a
lock, and shared.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field
from typing import Any

from chromadb.api import ClientAPI

from benchsmith.agents.models import ModelSeam, ModelSettings, build_seam, parse_model_spec
from benchsmith.agents.structured_output import StructuredOutput
from benchsmith.stores.errors import InputError
from benchsmith.stores.llm_cache import LLMCache
from benchsmith.stores.postgres import database_url
from benchsmith.stores.runs import RunDirectory
from benchsmith.stores.vectors import open_client
from benchsmith.stores.workspace import Workspace
from benchsmith.tools.embedding import DEFAULT_EMBEDDER, Embedder, load_embedder
from benchsmith.tools.rerank import PairScorer, cross_encoder_scorer


@dataclass(kw_only=True)
class StoreOptions:
    """Where a job's files and vectors live (every job's context has these)."""

    workspace: str | None = field(default=None, metadata={
        "description": "Folder holding the Chroma index, checkpoints, model cache and runs. "
                       "Default: $BENCHSMITH_WORKSPACE, else ./.benchsmith."})
    chroma_host: str | None = field(default=None, metadata={
        "description": "HOST:PORT of a Chroma server; empty: the embedded store in the workspace."})
    database: str | None = field(default=None, metadata={
        "description": "postgresql://… for state shared by workers on many machines (checkpoints, model cache, "
                       "run records, work items); empty: $BENCHSMITH_DATABASE_URL, else SQLite in the workspace."})

    def database_url(self) -> str | None:
        return database_url(self.database)


@dataclass(kw_only=True)
class ModelOptions:
    """How a job talks to its model server (every job that calls a model has these)."""

    seed: int = field(default=0, metadata={"description": "Seed for sampling, choices and model calls."})
    requests_per_second: float | None = field(default=None, metadata={
        "description": "At most this many model requests per second to one endpoint; empty: no limit."})
    timeout_s: float = field(default=60.0, metadata={"description": "Seconds before a model request times out."})
    max_attempts: int = field(default=6, metadata={
        "description": "Attempts per model call (retries on 429, 5xx, timeouts and invalid replies)."})
    structured_output: StructuredOutput = field(default="auto", metadata={
        "description": "How replies are asked for: auto (JSON schema, then function calling, then JSON mode, "
                       "remembered per endpoint), json_schema, function_calling or json_mode."})

    def model_settings(self) -> ModelSettings:
        """The seam's settings; an impossible value is an InputError."""
        try:
            return ModelSettings(seed=self.seed, requests_per_second=self.requests_per_second,
                                 timeout_s=self.timeout_s, max_attempts=self.max_attempts,
                                 structured_output=self.structured_output)
        except ValueError as error:
            raise InputError(str(error)) from None


def workspace_of(options: StoreOptions) -> Workspace:
    return Workspace.resolve(options.workspace)


# ---------------------------------------------------------------------------------------
# Ready objects, by name.

_lock = threading.Lock()
_models: dict[str, ModelSeam] = {}
_embedders: dict[str, Embedder] = {}
_scorers: dict[str, PairScorer] = {}


def register_model(name: str, seam: ModelSeam) -> str:
    """Make ``name`` a model spec that resolves to ``seam`` in this process; returns the name."""
    with _lock:
        _models[name] = seam
    return name


def register_embedder(embedder: Embedder, name: str | None = None) -> str:
    """Make ``name`` (default: ``embedder.name``) an embedder spec that resolves to ``embedder``."""
    name = name or embedder.name
    with _lock:
        _embedders[name] = embedder
    return name


def register_scorer(name: str, scorer: PairScorer) -> str:
    """Make ``name`` a reranker spec that resolves to ``scorer``."""
    with _lock:
        _scorers[name] = scorer
    return name


def clear_registry() -> None:
    """Forget every registered model, embedder and reranker (a test's or an app's teardown)."""
    with _lock:
        _models.clear()
        _embedders.clear()
        _scorers.clear()


def check_model_spec(spec: str) -> None:
    """A registered name, ``baseline`` or ``openai:<model>``; anything else is an InputError."""
    if spec in _models:
        return
    try:
        parse_model_spec(spec)
    except ValueError as error:
        raise InputError(str(error)) from None


def embedder_for(spec: str | None) -> Embedder:
    """The registered embedder of that name, else the sentence-transformers model (loaded once)."""
    spec = spec or DEFAULT_EMBEDDER
    with _lock:
        registered = _embedders.get(spec)
    return registered if registered is not None else load_embedder(spec)


@functools.lru_cache(maxsize=2)
def _cross_encoder(model: str) -> PairScorer:
    return cross_encoder_scorer(model)


def scorer_for(spec: str) -> PairScorer:
    """The registered reranker of that name, else a sentence-transformers CrossEncoder."""
    with _lock:
        registered = _scorers.get(spec)
    return registered if registered is not None else _cross_encoder(spec)


_seams: dict[tuple[str, str, str, ModelSettings, str | None], ModelSeam] = {}


def run_seam(workspace: Workspace, run_id: str, spec: str, options: ModelOptions | None = None) -> ModelSeam:
    """The seam for ``spec`` in run ``run_id``: a registered one as it is, else one per (workspace,
    run, spec, settings, database) whose response cache and usage ledger live in the workspace,
    or in the database when the options name one (shared by every worker)."""
    with _lock:
        if spec in _models:
            return _models[spec]
        options = options or ModelOptions()
        settings = options.model_settings()
        database = options.database_url() if isinstance(options, StoreOptions) else None
        key = (str(workspace.root), run_id, spec, settings, database)
        if key not in _seams:
            _seams[key] = build_seam(spec, settings, cache=response_cache(workspace, database),
                                     usage=usage_ledger(workspace, run_id, database))
        return _seams[key]


def response_cache(workspace: Workspace, database: str | None) -> Any:
    """The model response cache: SQLite in the workspace, or the shared one in the database."""
    if database:
        from benchsmith.stores.postgres_cache import PostgresLLMCache

        return PostgresLLMCache(database)
    return LLMCache(workspace.llm_cache_path)


def usage_ledger(workspace: Workspace, run_id: str, database: str | None) -> Any:
    """The run's usage ledger: a file in its run directory, or rows in the database."""
    if database:
        from benchsmith.stores.postgres_runs import PostgresUsageLedger

        return PostgresUsageLedger(database, run_id)
    return RunDirectory(workspace, run_id).usage


# ---------------------------------------------------------------------------------------
# Chroma and concurrency.

@functools.lru_cache(maxsize=4)
def _client(workspace_root: str, chroma_host: str | None) -> ClientAPI:
    return open_client(Workspace.resolve(workspace_root), chroma_host)


def chroma_client(workspace: Workspace, chroma_host: str | None) -> ClientAPI:
    with _lock:
        return _client(str(workspace.root), chroma_host)


_slots: dict[str, threading.BoundedSemaphore] = {}


def concurrency_slot(run_id: str, concurrency: int) -> threading.BoundedSemaphore:
    """The semaphore that holds one run's parallel tasks to ``concurrency`` exactly: LangGraph's
    worker pool alone lets one more through at times (measured)."""
    with _lock:
        return _slots.setdefault(f"{run_id}:{concurrency}", threading.BoundedSemaphore(concurrency))

