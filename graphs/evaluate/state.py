"""The evaluation graph's state, its retrieval task and the files of its run directory."""

from __future__ import annotations

import operator
from typing import Annotated, NotRequired

from typing_extensions import TypedDict

from benchsmith.evals.defaults import DEFAULT_QUERIES_PER_BATCH
from benchsmith.graphs.contexts.evaluate import DEFAULT_DEPTH, EvaluationContext  # noqa: F401 (re-exported)
from benchsmith.tools.retrieval.dense_retrieval import QUERY_BATCH
from benchsmith.tools.retrieval.retriever_specs import (
    Configuration,
    RunFileConfiguration,
)

RUN_FILES_DIR, QUERIES_DIR, TIMINGS_FILE = "run-files", "queries", "timings.jsonl"
DEFAULT_BATCH_SIZE = DEFAULT_QUERIES_PER_BATCH
DENSE_QUERY_BLOCK = QUERY_BATCH  # queries embedded and searched together
AnyConfiguration = Configuration | RunFileConfiguration


class EvaluationInput(TypedDict):
    run_id: str
    benchmark: str  # a BEIR directory, a synthesis run directory or a run id
    retrievers: list[str]
    histories: list[str]
    runs: NotRequired[list[str]]  # TREC run files of the user's own systems, evaluated beside the retrievers


class EvaluationOutput(TypedDict, total=False):
    run_id: str
    report: dict[str, str]  # {"markdown", "html", "results"}: paths
    primary_measure: str
    aggregate: dict[str, dict[str, float]]  # {configuration: {measure: mean}}
    warnings: Annotated[list[str], operator.add]  # what the input checks found (see the module docstring)


class EvaluationState(EvaluationInput, EvaluationOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    configurations: list[str]  # names, stage order
    finished: Annotated[list[str], operator.add]


class RetrievalTask(TypedDict):
    run_id: str
    benchmark: str
    configuration: str
    retrievers: list[str]
    histories: list[str]
    runs: list[str]
