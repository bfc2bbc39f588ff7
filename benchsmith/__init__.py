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
    big = benchsmith.synthesize("mydocs", ray="auto", database="postgresql://…")  # items on a Ray cluster

Every graph is importable too (``benchsmith.graphs.synthesis.conversation.conversation_graph`` and its
siblings), runs with no context given, and streams. Objects a context cannot hold (a
scripted model, an embedder, a reranker, your own retriever) are registered by name with
:func:`register_model`, :func:`register_embedder`, :func:`register_scorer` and :func:`register_retriever`
(a retriever object passed directly is registered under its own name).

The folders of the repository (graphs/, agents/, tools/, stores/, evals/) are installed
under this one package: ``benchsmith.graphs``, ``benchsmith.agents`` and so on.
"""

from __future__ import annotations

import importlib
import inspect
from typing import TYPE_CHECKING, Any

from benchsmith.jobs.registry import api_modules

# The API is loaded on first use (PEP 562 module __getattr__): ``import benchsmith`` and ``benchsmith --help``
# must not pay for model clients, Chroma, torch or scipy. Type checkers and IDEs read the names from these imports
# (tests/test_job_registry.py checks that they are the names of the job table below, no more, no fewer).

if TYPE_CHECKING:  # `name as name`: a re-export (PEP 484), what type checkers and linters read as exported
    from benchsmith.graphs.runtime.resources import register_embedder as register_embedder
    from benchsmith.graphs.runtime.resources import register_model as register_model
    from benchsmith.graphs.runtime.resources import register_scorer as register_scorer
    from benchsmith.jobs.audit import AuditResult as AuditResult
    from benchsmith.jobs.audit import Verdict as Verdict
    from benchsmith.jobs.audit import audit as audit
    from benchsmith.jobs.audit import estimate_audit as estimate_audit
    from benchsmith.jobs.common import CostEstimate as CostEstimate
    from benchsmith.jobs.common import Usage as Usage
    from benchsmith.jobs.evaluate import EvaluationResult as EvaluationResult
    from benchsmith.jobs.evaluate import estimate_evaluation as estimate_evaluation
    from benchsmith.jobs.evaluate import evaluate as evaluate
    from benchsmith.jobs.evaluate import measure_runs as measure_runs
    from benchsmith.jobs.hardneg import HardnegBuildResult as HardnegBuildResult
    from benchsmith.jobs.hardneg import HardnegScoreResult as HardnegScoreResult
    from benchsmith.jobs.hardneg import build_hardneg as build_hardneg
    from benchsmith.jobs.hardneg import estimate_hardneg as estimate_hardneg
    from benchsmith.jobs.hardneg import rescore_tables as rescore_tables
    from benchsmith.jobs.hardneg import score_hardneg as score_hardneg
    from benchsmith.jobs.ingest import IngestPreview as IngestPreview
    from benchsmith.jobs.ingest import IngestResult as IngestResult
    from benchsmith.jobs.ingest import ingest as ingest
    from benchsmith.jobs.ingest import preview_ingest as preview_ingest
    from benchsmith.jobs.label import LabelResult as LabelResult
    from benchsmith.jobs.label import label as label
    from benchsmith.jobs.label import open_label_session as open_label_session
    from benchsmith.jobs.nuggets import NuggetsResult as NuggetsResult
    from benchsmith.jobs.nuggets import estimate_nuggets as estimate_nuggets
    from benchsmith.jobs.nuggets import nuggets as nuggets
    from benchsmith.jobs.paraphrase import ParaphraseResult as ParaphraseResult
    from benchsmith.jobs.paraphrase import estimate_paraphrase as estimate_paraphrase
    from benchsmith.jobs.paraphrase import paraphrase as paraphrase
    from benchsmith.jobs.publish import PublishResult as PublishResult
    from benchsmith.jobs.publish import publish as publish
    from benchsmith.jobs.replay import ReplayResult as ReplayResult
    from benchsmith.jobs.replay import estimate_replay as estimate_replay
    from benchsmith.jobs.replay import replay as replay
    from benchsmith.jobs.review import ReviewResult as ReviewResult
    from benchsmith.jobs.review import review as review
    from benchsmith.jobs.robustness import RobustnessResult as RobustnessResult
    from benchsmith.jobs.robustness import estimate_robustness as estimate_robustness
    from benchsmith.jobs.robustness import robustness as robustness
    from benchsmith.jobs.runs import RunInfo as RunInfo
    from benchsmith.jobs.runs import runs as runs
    from benchsmith.jobs.select import SelectionResult as SelectionResult
    from benchsmith.jobs.select import estimate_selection as estimate_selection
    from benchsmith.jobs.select import select as select
    from benchsmith.jobs.synthesize import ClusterResult as ClusterResult
    from benchsmith.jobs.synthesize import SynthesisResult as SynthesisResult
    from benchsmith.jobs.synthesize import cluster as cluster
    from benchsmith.jobs.synthesize import estimate_synthesis as estimate_synthesis
    from benchsmith.jobs.synthesize import synthesize as synthesize
    from benchsmith.jobs.validate import ValidationResult as ValidationResult
    from benchsmith.jobs.validate import estimate_validation as estimate_validation
    from benchsmith.jobs.validate import validate as validate
    from benchsmith.stores.errors import InputError as InputError
    from benchsmith.stores.formats.benchmark_files import Dialogue as Dialogue
    from benchsmith.stores.formats.benchmark_files import Turn as Turn
    from benchsmith.tools.benchmark.assistants import register_assistant as register_assistant
    from benchsmith.tools.retrieval.outside_retrievers import register_retriever as register_retriever

# Where each public name lives: its module is imported the first time the name is asked for. The jobs'
# names come from the job table (benchsmith/jobs/registry.py, which imports nothing); these are the rest.
_API_MODULES: dict[str, str] = {
    **api_modules(),
    "CostEstimate": "benchsmith.jobs.common",
    "Usage": "benchsmith.jobs.common",
    "register_embedder": "benchsmith.graphs.runtime.resources",
    "register_model": "benchsmith.graphs.runtime.resources",
    "register_scorer": "benchsmith.graphs.runtime.resources",
    "register_retriever": "benchsmith.tools.retrieval.outside_retrievers",
    "register_assistant": "benchsmith.tools.benchmark.assistants",
    "Dialogue": "benchsmith.stores.formats.benchmark_files",
    "Turn": "benchsmith.stores.formats.benchmark_files",
    "InputError": "benchsmith.stores.errors",
}

__all__ = sorted(_API_MODULES)


def __getattr__(name: str) -> Any:
    module = _API_MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    if module.startswith("benchsmith.jobs.") and inspect.isfunction(value):
        # Its bad-input errors name this API's keywords, not the command line's flags (human=, not --human).
        value = importlib.import_module("benchsmith.jobs.api_names").speaking_the_api(value)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
