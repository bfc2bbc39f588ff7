"""The nuggets graph's state, its tasks and the files of its run directory."""

from __future__ import annotations

import operator
from typing import Annotated, NotRequired

from typing_extensions import TypedDict

QUESTIONS_FILE, CORPUS_INFO_FILE, POOLS_FILE, JUDGMENTS_FILE = (
    "questions.jsonl",
    "corpus-info.json",
    "pools.jsonl",
    "judgments.jsonl",
)
BEIR_DIR, NUGGETS_FILE, NUGGET_QRELS_FILE, POOL_RUNS_DIR = "beir", "nuggets.jsonl", "nugget-qrels.trec", "pooling-runs"
MEASURE_DEPTH = 50  # the deepest cutoff of the pooling table (Recall@50)
TABLE_MEASURES = ("alpha_nDCG@10", "Coverage@20", "R@50")  # FreshStack's Table 4
FUSED = "fused"


class NuggetsInput(TypedDict):
    run_id: str
    questions: str  # a JSONL file of {id, question, answer} or a Stack Exchange Posts.xml
    corpus: list[str]  # directories, git checkouts, files, BEIR corpora or "stdlib"; empty with collection
    collection: NotRequired[str | None]  # an ingested Chroma collection instead of corpus


class NuggetsOutput(TypedDict, total=False):
    run_id: str
    questions_read: int
    kept: int
    dropped: dict[str, int]  # {reason: questions}
    nuggets: int  # of the kept questions
    support_rate: float  # share of the kept questions' nuggets supported by a pooled chunk
    benchmark: str  # the BEIR directory
    report: dict[str, str]  # {"markdown", "html", "results"}: paths
    table: dict[str, dict[str, dict[str, float]]]  # {technique: {retriever: {measure: mean}}}


class NuggetsState(NuggetsInput, NuggetsOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    pooled: Annotated[int, operator.add]
    judged: Annotated[int, operator.add]


class PoolTask(TypedDict):
    run_id: str
    question: str


class JudgeTask(TypedDict):
    run_id: str
    question: str
    batch: int
