"""The workspace: one folder holding every store of a project.

Layout::

    <workspace>/
      chroma/               Chroma PersistentClient data
      checkpoints.sqlite    LangGraph checkpoints, one thread per run id
      llm-cache.sqlite      model responses, keyed by model, messages, schema and sampling
      embedding-cache.sqlite  vectors from embedding servers, keyed by endpoint, model and text
      runs/<run-id>/        one folder per run: run.json, stage files, outputs, usage
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from benchsmith.stores.errors import InputError

DEFAULT_WORKSPACE = ".benchsmith"
WORKSPACE_ENV = "BENCHSMITH_WORKSPACE"


@dataclass(frozen=True)
class Workspace:
    root: Path

    @classmethod
    def resolve(cls, path: str | Path | None = None) -> Workspace:
        """The workspace given, else ``$BENCHSMITH_WORKSPACE``, else ``./.benchsmith``."""
        chosen = path or os.environ.get(WORKSPACE_ENV) or DEFAULT_WORKSPACE
        root = Path(chosen).expanduser().resolve()
        if root.exists() and not root.is_dir():
            raise InputError(f"--workspace {root}: is a file, not a folder; name a folder (it is created if missing)")
        try:
            root.mkdir(parents=True, exist_ok=True)
            (root / "runs").mkdir(exist_ok=True)
        except (FileExistsError, NotADirectoryError) as error:  # a file where a folder of the path should be
            raise InputError(f"--workspace {root}: {error.filename} is a file, not a folder") from None
        return cls(root)

    @property
    def chroma_dir(self) -> Path:
        return self.root / "chroma"

    @property
    def checkpoints_path(self) -> Path:
        return self.root / "checkpoints.sqlite"

    @property
    def llm_cache_path(self) -> Path:
        return self.root / "llm-cache.sqlite"

    @property
    def embedding_cache_path(self) -> Path:
        return self.root / "embedding-cache.sqlite"

    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    def run_dir(self, run_id: str) -> Path:
        return self.runs_dir / run_id
