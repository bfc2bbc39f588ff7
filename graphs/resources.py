"""Resources the graphs share within one process: Chroma clients and model seams.

Opening them costs time, and Chroma fails ("Could not connect to tenant") when threads
create clients of one path at once, so each is created once, under a lock, and shared.
"""

from __future__ import annotations

import functools
import threading

from chromadb.api import ClientAPI

from benchsmith.agents.models import ModelSeam, ModelSettings, build_seam
from benchsmith.stores.llm_cache import LLMCache
from benchsmith.stores.runs import RunDirectory
from benchsmith.stores.vectors import open_client
from benchsmith.stores.workspace import Workspace

_lock = threading.Lock()
_seams: dict[tuple[str, str, str], ModelSeam] = {}


@functools.lru_cache(maxsize=4)
def _client(workspace_root: str, chroma_host: str | None) -> ClientAPI:
    return open_client(Workspace.resolve(workspace_root), chroma_host)


def chroma_client(workspace: Workspace, chroma_host: str | None) -> ClientAPI:
    with _lock:
        return _client(str(workspace.root), chroma_host)


def run_seam(workspace: Workspace, run_id: str, llm: str, seed: int = 0,
             requests_per_second: float | None = None) -> ModelSeam:
    """One seam per (workspace, run, model): its cache and usage ledger live in the workspace."""
    key = (str(workspace.root), run_id, llm)
    with _lock:
        if key not in _seams:
            settings = ModelSettings(seed=seed, requests_per_second=requests_per_second)
            _seams[key] = build_seam(llm, settings, cache=LLMCache(workspace.llm_cache_path),
                                     usage=RunDirectory(workspace, run_id).usage)
        return _seams[key]


_slots: dict[str, threading.BoundedSemaphore] = {}


def concurrency_slot(run_id: str, concurrency: int) -> threading.BoundedSemaphore:
    """The semaphore that holds one run's parallel tasks to ``concurrency`` exactly: LangGraph's
    worker pool alone lets one more through at times (measured)."""
    with _lock:
        return _slots.setdefault(f"{run_id}:{concurrency}", threading.BoundedSemaphore(concurrency))
