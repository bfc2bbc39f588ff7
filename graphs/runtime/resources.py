"""What the graphs share within one process: the settings every job's context has, Chroma
clients, model seams, and a registry of ready objects (a scripted model, an embedder, a
reranker) that an app or a test hands in by name.

Contexts stay JSON-serializable (LangGraph Studio draws them as forms): they hold names and
specs, never objects. ``register_model("my-judge", seam)`` makes ``"my-judge"`` usable
wherever a model spec goes (``llm=``, ``judges=``); ``register_embedder`` and
``register_scorer`` do the same for embedders and rerankers. ``openai:<model>`` embeds through
an OpenAI-compatible embeddings server, with its vector cache and usage ledger in the workspace.

Opening a Chroma client or a seam costs time, and Chroma fails ("Could not connect to
tenant") when threads create clients of one path at once, so each is created once, under a
lock, and shared.
"""

from __future__ import annotations

import contextvars
import functools
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.agents.seam.backends import ModelSettings
from benchsmith.agents.seam.embeddings import (
    OpenAIEmbedder,
    embeddings_api_key,
    embeddings_base_url,
    parse_embedder_spec,
)
from benchsmith.agents.seam.endpoints import resolve_api_key, resolve_base_url
from benchsmith.agents.seam.errors import MissingAPIKeyError
from benchsmith.agents.seam.models import BASELINE, ModelSeam, build_seam, parse_model_spec
from benchsmith.graphs.runtime.settings import ModelOptions, StoreOptions
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.bounded_cache import BoundedCache
from benchsmith.stores.persistence.embedding_cache import workspace_embedding_cache
from benchsmith.stores.persistence.jsonl import record_log
from benchsmith.stores.persistence.llm_cache import LLMCache
from benchsmith.stores.persistence.postgres import connection
from benchsmith.stores.persistence.postgres_cache import PostgresLLMCache
from benchsmith.stores.persistence.postgres_runs import PostgresUsageLedger, usage_totals_of
from benchsmith.stores.persistence.run_items import RunItems
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.vectors import open_client
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.benchmark.assistants import clear_assistants
from benchsmith.tools.defaults import DEFAULT_EMBEDDER
from benchsmith.tools.retrieval.embedding import Embedder, is_server_spec, load_embedder
from benchsmith.tools.retrieval.outside_retrievers import clear_retrievers
from benchsmith.tools.retrieval.rerank import PairScorer, cross_encoder_scorer

if TYPE_CHECKING:  # a type hint only: chromadb itself loads when a client opens (stores/persistence/vectors.py)
    from chromadb.api import ClientAPI


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


def registered_objects() -> dict[str, dict[str, Any]]:
    """What this process has registered, by kind and name: a Ray task takes it to its node
    (graphs/runtime/ray_items.py), where :func:`register_objects` makes the same names resolve."""
    with _lock:
        return {"models": dict(_models), "embedders": dict(_embedders), "scorers": dict(_scorers)}


def register_objects(registered: dict[str, dict[str, Any]]) -> None:
    """Register the objects :func:`registered_objects` gave, under their names."""
    with _lock:
        _models.update(registered.get("models", {}))
        _embedders.update(registered.get("embedders", {}))
        _scorers.update(registered.get("scorers", {}))


def clear_registry() -> None:
    """Forget every registered model, embedder, reranker, retriever and assistant (a test's or an app's teardown)."""
    with _lock:
        _models.clear()
        _embedders.clear()
        _scorers.clear()
    clear_retrievers()
    clear_assistants()


# Set while a dry run estimates: a missing key is then a note of the estimate, not an error.
_estimating: contextvars.ContextVar[bool] = contextvars.ContextVar("estimating", default=False)


@contextmanager
def estimating() -> Iterator[None]:
    token = _estimating.set(True)
    try:
        yield
    finally:
        _estimating.reset(token)


def asks_offline(spec: str) -> bool:
    """Is ``spec`` the offline baseline (its name, or a registered seam without a model), told without
    building a client (a run's own process builds none when its conversations ran on Ray)?"""
    with _lock:
        return spec == BASELINE or (spec in _models and _models[spec].is_baseline)


def missing_key(spec: str) -> str | None:
    """Why ``spec``'s server would refuse every call for want of a key (None: it would not)."""
    if spec in _models or spec == BASELINE:
        return None
    try:
        resolve_api_key(resolve_base_url())
    except MissingAPIKeyError as error:
        return str(error)
    return None


def check_model_spec(spec: str) -> None:
    """A registered name, ``baseline`` or ``openai:<model>`` with the key its server needs
    (a run without it would stop at its first call, after whatever work came before);
    anything else is an InputError."""
    if spec in _models:
        return
    try:
        parse_model_spec(spec)
    except ValueError as error:
        raise InputError(str(error)) from None
    if not _estimating.get() and (reason := missing_key(spec)):
        raise InputError(f"{spec}: {reason}")


def check_embedder_spec(spec: str) -> None:
    """A registered name, ``openai:<model>`` (with a key where the server needs one), or a
    sentence-transformers model this machine has (a path, the default, or a hub name in the
    local cache while offline); anything else is an InputError, before a run starts."""
    if spec in _embedders or spec in ("default", DEFAULT_EMBEDDER):
        return
    if is_server_spec(spec) or (":" in spec and spec.partition(":")[0].isidentifier() and not Path(spec).exists()):
        try:
            parse_embedder_spec(spec)
            embeddings_api_key(embeddings_base_url())
        except (ValueError, MissingAPIKeyError) as error:
            raise InputError(f"--embedder: {error}") from None
        return
    if Path(spec).expanduser().exists() or os.environ.get("HF_HUB_OFFLINE", "1") in ("0", "false", "False"):
        return
    if not _in_hub_cache(spec):
        raise InputError(
            f"--embedder {spec!r}: no such path, and no sentence-transformers model of that name in the local "
            "Hugging Face cache (models load offline; set HF_HUB_OFFLINE=0 to download it). Use the default, "
            "a local path, or openai:<model> for an embedding server"
        )


def _in_hub_cache(name: str) -> bool:
    """Is the hub model ``name`` (or sentence-transformers' ``sentence-transformers/<name>``) cached?"""
    from huggingface_hub import try_to_load_from_cache  # deferred: heavy, needed only for a hub model

    candidates = [name] if "/" in name else [name, f"sentence-transformers/{name}"]
    for repo in candidates:
        try:
            if isinstance(try_to_load_from_cache(repo, "config.json"), str):
                return True
        except ValueError:  # not a valid repository id
            continue
    return False


def embedder_for(
    spec: str | None, workspace: Workspace | None = None, run_id: str | None = None, options: ModelOptions | None = None
) -> Embedder:
    """The registered embedder of that name; for ``openai:<model>`` a client of the embedding server
    (one per workspace, run, spec, settings and server) whose vector cache lives in ``workspace``
    and whose requests go to run ``run_id``'s usage ledger (each only when given); else the
    sentence-transformers model (loaded once)."""
    spec = spec or DEFAULT_EMBEDDER
    with _lock:
        registered = _embedders.get(spec)
    if registered is not None:
        return registered
    if is_server_spec(spec):
        return _server_embedder(spec, workspace, run_id, options)
    return load_embedder(spec)


# Bounded like every per-run or per-workspace object here: a long-lived process (Studio) runs job after job.
_server_embedders: BoundedCache[tuple[str | None, str | None, str, ModelSettings, str], OpenAIEmbedder] = BoundedCache(
    16
)


def _server_embedder(
    spec: str, workspace: Workspace | None, run_id: str | None, options: ModelOptions | None
) -> OpenAIEmbedder:
    try:
        model = parse_embedder_spec(spec)
    except ValueError as error:
        raise InputError(str(error)) from None
    settings = (options or ModelOptions()).model_settings()
    root = str(workspace.root) if workspace is not None else None
    key = (root, run_id if workspace is not None else None, spec, settings, embeddings_base_url())
    with _lock:
        if key not in _server_embedders:
            cache = workspace_embedding_cache(workspace) if workspace is not None else None
            usage = usage_ledger(workspace, run_id, None) if workspace is not None and run_id else None
            _server_embedders[key] = OpenAIEmbedder(model, settings, cache=cache, usage=usage)
        return _server_embedders[key]


@functools.lru_cache(maxsize=2)
def _cross_encoder(model: str) -> PairScorer:
    return cross_encoder_scorer(model)


def check_reranker(spec: str) -> None:
    """A reranker spec that is registered or a model on this machine; otherwise an InputError
    that says how to point at a local model folder."""
    with _lock:
        registered = spec in _scorers
    if registered or os.environ.get("HF_HUB_OFFLINE", "1") in ("0", "false", "False"):
        return
    if Path(spec).expanduser().is_dir():
        return
    if Path(spec).expanduser().exists():
        raise InputError(f"--rerank {spec}: not a model folder (give the folder that holds config.json)")
    if not _in_hub_cache(spec):
        raise InputError(
            f"--rerank {spec!r}: this cross-encoder is not on this machine, and models load offline. Give the path "
            "of a local sentence-transformers model folder (on a connected machine: "
            'CrossEncoder(NAME).save("DIR"), then copy DIR here), or set HF_HUB_OFFLINE=0 to let it be '
            "downloaded"
        )


def scorer_for(spec: str) -> PairScorer:
    """The registered reranker of that name, else a sentence-transformers CrossEncoder."""
    with _lock:
        registered = _scorers.get(spec)
    return registered if registered is not None else _cross_encoder(spec)


_seams: BoundedCache[tuple[str, str, str, ModelSettings, str | None], ModelSeam] = BoundedCache(64)


def run_seam(workspace: Workspace, run_id: str, spec: str, options: ModelOptions | None = None) -> ModelSeam:
    """The seam for ``spec`` in run ``run_id``: a registered one as it is, else one per (workspace,
    run, spec, settings, database) whose response cache and usage ledger live in the workspace,
    or in the database when the options name one (shared by every process)."""
    with _lock:
        if spec in _models:
            return _models[spec]
        options = options or ModelOptions()
        settings = options.model_settings()
        database = options.database_url() if isinstance(options, StoreOptions) else None
        key = (str(workspace.root), run_id, spec, settings, database)
        if key not in _seams:
            _seams[key] = build_seam(
                spec,
                settings,
                cache=response_cache(workspace, database),
                usage=usage_ledger(workspace, run_id, database),
            )
        return _seams[key]


def response_cache(workspace: Workspace, database: str | None) -> Any:
    """The model response cache: SQLite in the workspace, or the shared one in the database."""
    if database:
        return PostgresLLMCache(database)
    return LLMCache(workspace.llm_cache_path)


def usage_totals(workspace: Workspace, run_id: str, database: str | None) -> dict[str, Any]:
    """The run's usage totals, read once (in the database: on a connection closed after)."""
    if database:
        with connection(database) as handle:
            return usage_totals_of(handle, run_id)
    return RunDirectory(workspace, run_id).usage.totals()


class CollectedUsage:
    """Model calls recorded in memory, in a process that is not the run's (a Ray task's): the
    run's own process books them in its ledger with the item's result (graphs/runtime/ray_items.py)."""

    def __init__(self) -> None:
        self._calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def record(self, call: dict[str, Any]) -> None:
        with self._lock:
            self._calls.append(call)

    def sync(self) -> None:
        """Nothing of the run's to write here (the run's process syncs its ledger)."""

    def take(self) -> list[dict[str, Any]]:
        """The calls recorded since the last take, forgotten here."""
        with self._lock:
            calls, self._calls = self._calls, []
        return calls


_collected_usage: CollectedUsage | None = None


def collect_usage_in_memory() -> CollectedUsage:
    """From now on every run's model calls in this process are recorded in memory (this process
    works for a run another process owns): the one collector, to :meth:`CollectedUsage.take` from."""
    global _collected_usage
    with _lock:
        if _collected_usage is None:
            _collected_usage = CollectedUsage()
        return _collected_usage


def usage_ledger(workspace: Workspace, run_id: str, database: str | None) -> Any:
    """The run's usage ledger: a file in its run directory, or rows in the database; in a process
    working for another's run, the calls collected in memory (:func:`collect_usage_in_memory`)."""
    if _collected_usage is not None:
        return _collected_usage
    if database:
        return PostgresUsageLedger(database, run_id)
    return RunDirectory(workspace, run_id).usage


# ---------------------------------------------------------------------------------------
# Run items: what a run has left to do, its plan held here between its nodes.

_items: dict[tuple[str, str, str], RunItems] = {}


def run_items(workspace: Workspace, run_id: str, log_name: str, key: str) -> RunItems:
    """Run ``run_id``'s items (stores/persistence/run_items.py): the records of the run
    directory's ``log_name`` keyed by ``key``, one object per run while it runs here."""
    identity = (str(workspace.root), run_id, log_name)
    with _lock:
        if identity not in _items:
            _items[identity] = RunItems(record_log(RunDirectory(workspace, run_id).file(log_name), key))
        return _items[identity]


def release_run_items(run_id: str) -> None:
    """Forget a run's items (its run ended here)."""
    with _lock:
        for identity in [identity for identity in _items if identity[1] == run_id]:
            del _items[identity]


# ---------------------------------------------------------------------------------------
# Chroma and concurrency.


@functools.lru_cache(maxsize=4)
def _client(workspace: Workspace, chroma_host: str | None) -> ClientAPI:
    return open_client(workspace, chroma_host)


def chroma_client(workspace: Workspace, chroma_host: str | None) -> ClientAPI:
    with _lock:
        return _client(workspace, chroma_host)


_slots: BoundedCache[str, threading.BoundedSemaphore] = BoundedCache(256)


def concurrency_slot(run_id: str, concurrency: int) -> threading.BoundedSemaphore:
    """The semaphore that holds one run's parallel tasks to ``concurrency`` exactly: LangGraph's
    worker pool alone lets one more through at times (measured)."""
    with _lock:
        return _slots.setdefault(f"{run_id}:{concurrency}", threading.BoundedSemaphore(concurrency))
