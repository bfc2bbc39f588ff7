"""The settings of an evaluation (graphs/evaluate/)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from benchsmith.agents.defaults import BASELINE
from benchsmith.evals.defaults import DEFAULT_MEASURES, DEFAULT_QUERIES_PER_BATCH, DEFAULT_SIGNIFICANCE_RESAMPLES
from benchsmith.graphs.runtime.bounds import MAX_DEPTH, MAX_ITEMS, MAX_POOL_DEPTH, MAX_RESAMPLES
from benchsmith.graphs.runtime.ray_options import RayOptions
from benchsmith.graphs.runtime.settings import ModelOptions, StoreOptions, concurrency_field
from benchsmith.tools.defaults import DEFAULT_EMBEDDER
from benchsmith.tools.retrieval.rerank import DEFAULT_RERANK_DEPTH

DEFAULT_DEPTH = 1000

# Shared with the contexts that evaluate on the way (robustness, validate).
SPLIT_DESCRIPTION = "BEIR qrels split (qrels/<split>.tsv)."
DENSE_EMBEDDER_DESCRIPTION = (
    "Embedder of the 'dense' retriever (dense:MODEL names its own): a sentence-transformers model name or path, "
    "openai:<model> for an OpenAI-compatible embedding server (BENCHSMITH_EMBEDDINGS_BASE_URL, else "
    "OPENAI_BASE_URL: TEI, vLLM, Ollama, OpenAI), batched, cached in the workspace and counted in the run's usage, "
    "or a registered name."
)
REWRITER_DESCRIPTION = "Model of the 'rewrite' history: 'baseline', openai:<model> or a registered name."


@dataclass(kw_only=True)
class EvaluationContext(RayOptions, StoreOptions, ModelOptions):
    """Settings of one evaluation (not checkpointed: the CLI passes them again on resume)."""

    split: str = field(default="test", metadata={"description": SPLIT_DESCRIPTION})
    qrels: str | None = field(
        default=None,
        metadata={
            "description": "Judgments, TREC qrels (qid iteration docid relevance) or BEIR TSV (query-id corpus-id score, "
            "header or not), told apart by their first line: what run files are measured against "
            "without a benchmark; with one, used instead of its own."
        },
    )
    extra_qrels: str | None = field(
        default=None,
        metadata={
            "description": "More judgments (TREC qrels or BEIR TSV) added to the benchmark's, e.g. the extra_qrels.tsv "
            "of `benchsmith audit`."
        },
    )
    nugget_qrels: str | None = field(
        default=None,
        metadata={
            "description": "Nugget qrels (qid nugget_id doc_id label: a `benchsmith nuggets` run's nugget-qrels.trec) "
            "for the measures alpha_nDCG@k and Coverage@k beside the others (added to the default "
            "measures). With run files and no benchmark it can stand in for qrels: a document's label "
            "is then the sum of its nugget labels."
        },
    )
    depth: int = field(
        default=DEFAULT_DEPTH, metadata={"description": "Documents retrieved per query.", "min": 1, "max": MAX_DEPTH}
    )
    measures: tuple[str, ...] = field(
        default=DEFAULT_MEASURES,
        metadata={
            "description": "Any ir_measures measure (nDCG@10, R@100, RR@10, AP, Judged@10, P(rel=2)@5...), or with "
            "nugget qrels alpha_nDCG@10 and Coverage@20. Repeat; replaces the defaults.",
            "cli": "--measure",
        },
    )
    embedder: str = field(default=DEFAULT_EMBEDDER, metadata={"description": DENSE_EMBEDDER_DESCRIPTION})
    rerank: str | None = field(
        default=None,
        metadata={
            "description": "Also rerank each configuration's top rerank-depth with this sentence-transformers "
            "CrossEncoder (name, path or registered name); empty: no reranking."
        },
    )
    rerank_depth: int = field(
        default=DEFAULT_RERANK_DEPTH,
        metadata={"description": "Documents per query the reranker re-scores.", "min": 1, "max": MAX_POOL_DEPTH},
    )
    llm: str = field(default=BASELINE, metadata={"description": REWRITER_DESCRIPTION})
    concurrency: int = concurrency_field(
        "Rewriter calls in flight; with --ray, also the blocks of queries a retriever ranks at once."
    )
    significance_test: Literal["randomization", "t-test"] = field(
        default="randomization",
        metadata={
            "description": "Paired test between configurations (Holm-corrected over all pairs): randomization or "
            "t-test."
        },
    )
    resamples: int = field(
        default=DEFAULT_SIGNIFICANCE_RESAMPLES,
        metadata={"description": "Resamples of the randomization test.", "min": 1, "max": MAX_RESAMPLES},
    )
    batch_size: int = field(
        default=DEFAULT_QUERIES_PER_BATCH,
        metadata={
            "description": "Queries per batch: BM25, fusion, reranking and measuring hold one batch of rankings in "
            "memory at a time (dense retrieval always takes 256); results do not depend on it.",
            "min": 1,
            "max": MAX_ITEMS,
            "recorded": False,
        },
    )
    strict: bool = field(
        default=False,
        metadata={
            "description": "Stop on judged query or document ids the benchmark lacks, run-file queries it lacks, or "
            "document ids its corpus repeats (warnings otherwise)."
        },
    )
