"""benchsmith: build, audit and use retrieval benchmarks for RAG systems.

The Python API: one function per job, each returning a typed result, with the CLI's resume
semantics (the same call with the same ``run_id`` resumes an interrupted run and returns a
finished one without redoing it)::

    import benchsmith

    corpus = benchsmith.ingest(["docs/"], collection="mydocs")
    bench = benchsmith.synthesize("mydocs", conversations=10, turns=4)          # offline baseline agents
    scores = benchsmith.evaluate(bench.run_dir, retrievers=["bm25", "dense"])
    verdict = benchsmith.audit(bench.run_dir, judges=["baseline"])
    validity = benchsmith.validate(bench.run_dir, human="my-questions.jsonl")  # ranks as mine?
    for run in benchsmith.runs(): print(run.run_id, run.job, run.status, run.usage.cost_usd)
    chosen = benchsmith.select("queries.txt", corpus=["docs/"], retrievers=["bm25", "dense"])  # no labels needed
    shared = benchsmith.synthesize("mydocs", database="postgresql://…")  # other machines: benchsmith.work(run_id)

Every graph is importable too (``benchsmith.graphs.synthesize.conversation_graph`` and its
siblings), runs with no context given, and streams. Objects a context cannot hold (a
scripted model, an embedder, a reranker) are registered by name with
:func:`register_model`, :func:`register_embedder` and :func:`register_scorer`.

The folders of the repository (graphs/, agents/, tools/, stores/, evals/) are installed
under this one package: ``benchsmith.graphs``, ``benchsmith.agents`` and so on.
"""

from __future__ import annotations

import importlib
import inspect
from typing import TYPE_CHECKING, Any

# The API is loaded on first use (PEP 562 module __getattr__): ``import benchsmith`` and ``benchsmith --help``
# must not pay for model clients, Chroma, torch or scipy. Type checkers and IDEs read the names from these imports.

if TYPE_CHECKING:
    from benchsmith.graphs.jobs.audit import AuditResult, Verdict, audit, estimate_audit
    from benchsmith.graphs.jobs.common import CostEstimate, Usage
    from benchsmith.graphs.jobs.evaluate import EvaluationResult, estimate_evaluation, evaluate, measure_runs
    from benchsmith.graphs.jobs.hardneg import (HardnegBuildResult, HardnegScoreResult, build_hardneg,
                                                estimate_hardneg, rescore_tables, score_hardneg)
    from benchsmith.graphs.jobs.ingest import IngestPreview, IngestResult, ingest, preview_ingest
    from benchsmith.graphs.jobs.paraphrase import ParaphraseResult, estimate_paraphrase, paraphrase
    from benchsmith.graphs.jobs.publish import PublishResult, publish
    from benchsmith.graphs.jobs.robustness import RobustnessResult, estimate_robustness, robustness
    from benchsmith.graphs.jobs.runs import RunInfo, runs
    from benchsmith.graphs.jobs.nuggets import NuggetsResult, estimate_nuggets, nuggets
    from benchsmith.graphs.jobs.select import SelectionResult, estimate_selection, select
    from benchsmith.graphs.jobs.synthesize import (ClusterResult, SynthesisResult, cluster, estimate_synthesis,
                                                   synthesize)
    from benchsmith.graphs.jobs.validate import ValidationResult, estimate_validation, validate
    from benchsmith.graphs.jobs.work import export, work
    from benchsmith.graphs.runtime.resources import register_embedder, register_model, register_scorer
    from benchsmith.stores.benchmark_files import Dialogue, Turn
    from benchsmith.stores.errors import InputError

# Where each public name lives: its module is imported the first time the name is asked for.
_API_MODULES: dict[str, str] = {
    "AuditResult": "benchsmith.graphs.jobs.audit",
    "Verdict": "benchsmith.graphs.jobs.audit",
    "audit": "benchsmith.graphs.jobs.audit",
    "estimate_audit": "benchsmith.graphs.jobs.audit",
    "CostEstimate": "benchsmith.graphs.jobs.common",
    "Usage": "benchsmith.graphs.jobs.common",
    "EvaluationResult": "benchsmith.graphs.jobs.evaluate",
    "estimate_evaluation": "benchsmith.graphs.jobs.evaluate",
    "evaluate": "benchsmith.graphs.jobs.evaluate",
    "measure_runs": "benchsmith.graphs.jobs.evaluate",
    "HardnegBuildResult": "benchsmith.graphs.jobs.hardneg",
    "HardnegScoreResult": "benchsmith.graphs.jobs.hardneg",
    "build_hardneg": "benchsmith.graphs.jobs.hardneg",
    "estimate_hardneg": "benchsmith.graphs.jobs.hardneg",
    "rescore_tables": "benchsmith.graphs.jobs.hardneg",
    "score_hardneg": "benchsmith.graphs.jobs.hardneg",
    "IngestPreview": "benchsmith.graphs.jobs.ingest",
    "IngestResult": "benchsmith.graphs.jobs.ingest",
    "ingest": "benchsmith.graphs.jobs.ingest",
    "preview_ingest": "benchsmith.graphs.jobs.ingest",
    "PublishResult": "benchsmith.graphs.jobs.publish",
    "publish": "benchsmith.graphs.jobs.publish",
    "ParaphraseResult": "benchsmith.graphs.jobs.paraphrase",
    "estimate_paraphrase": "benchsmith.graphs.jobs.paraphrase",
    "paraphrase": "benchsmith.graphs.jobs.paraphrase",
    "RobustnessResult": "benchsmith.graphs.jobs.robustness",
    "estimate_robustness": "benchsmith.graphs.jobs.robustness",
    "robustness": "benchsmith.graphs.jobs.robustness",
    "RunInfo": "benchsmith.graphs.jobs.runs",
    "runs": "benchsmith.graphs.jobs.runs",
    "NuggetsResult": "benchsmith.graphs.jobs.nuggets",
    "estimate_nuggets": "benchsmith.graphs.jobs.nuggets",
    "nuggets": "benchsmith.graphs.jobs.nuggets",
    "SelectionResult": "benchsmith.graphs.jobs.select",
    "estimate_selection": "benchsmith.graphs.jobs.select",
    "select": "benchsmith.graphs.jobs.select",
    "ClusterResult": "benchsmith.graphs.jobs.synthesize",
    "SynthesisResult": "benchsmith.graphs.jobs.synthesize",
    "cluster": "benchsmith.graphs.jobs.synthesize",
    "estimate_synthesis": "benchsmith.graphs.jobs.synthesize",
    "synthesize": "benchsmith.graphs.jobs.synthesize",
    "ValidationResult": "benchsmith.graphs.jobs.validate",
    "estimate_validation": "benchsmith.graphs.jobs.validate",
    "validate": "benchsmith.graphs.jobs.validate",
    "export": "benchsmith.graphs.jobs.work",
    "work": "benchsmith.graphs.jobs.work",
    "register_embedder": "benchsmith.graphs.runtime.resources",
    "register_model": "benchsmith.graphs.runtime.resources",
    "register_scorer": "benchsmith.graphs.runtime.resources",
    "Dialogue": "benchsmith.stores.benchmark_files",
    "Turn": "benchsmith.stores.benchmark_files",
    "InputError": "benchsmith.stores.errors",
}

__all__ = [
    "AuditResult", "ClusterResult", "CostEstimate", "Dialogue", "EvaluationResult", "HardnegBuildResult",
    "HardnegScoreResult", "IngestPreview", "IngestResult", "InputError", "NuggetsResult", "ParaphraseResult",
    "RobustnessResult", "SelectionResult", "SynthesisResult", "Turn", "Usage", "Verdict", "audit", "build_hardneg",
    "cluster", "estimate_audit", "estimate_evaluation", "estimate_hardneg", "estimate_nuggets", "estimate_paraphrase",
    "estimate_robustness", "estimate_selection", "estimate_synthesis", "evaluate", "export", "ingest", "measure_runs", "nuggets",
    "paraphrase", "preview_ingest", "register_embedder", "register_model", "register_scorer", "rescore_tables",
    "robustness", "RunInfo", "runs", "score_hardneg", "select", "synthesize", "work", "PublishResult", "publish",
    "ValidationResult", "estimate_validation", "validate",
]


def __getattr__(name: str) -> Any:
    module = _API_MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    if module.startswith("benchsmith.graphs.jobs.") and inspect.isfunction(value):
        # Its bad-input errors name this API's keywords, not the command line's flags (human=, not --human).
        value = importlib.import_module("benchsmith.graphs.jobs.api_names").speaking_the_api(value)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
