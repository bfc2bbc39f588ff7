"""Each graph Studio serves, with the CLI command and the API function that run it."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GRAPHS = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))["graphs"]
# Graph id → (the CLI command that runs it, the API job function's name).
COMMANDS = {
    "synthesize": ("synthesize", "synthesize"),
    "conversation": ("synthesize", "synthesize"),  # the synthesis graph's subgraph: the same context
    "evaluate": ("evaluate", "evaluate"),
    "audit": ("audit", "audit"),
    "ingest": ("ingest", "ingest"),
    "validate": ("validate", "validate"),
    "robustness": ("robustness", "robustness"),
    "paraphrase": ("paraphrase", "paraphrase"),
    "select": ("select", "select"),
    "nuggets": ("nuggets", "nuggets"),
    "hardneg": ("hardneg build", "build_hardneg"),  # a subcommand: its words, space-separated
    "hardneg-score": ("hardneg score", "score_hardneg"),
    "replay": ("replay", "replay"),
}


def compiled(graph_id: str) -> Any:
    module, attribute = GRAPHS[graph_id].split(":")
    return getattr(importlib.import_module(module), attribute)
