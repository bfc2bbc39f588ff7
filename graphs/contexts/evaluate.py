"""The settings of an evaluation (graphs/evaluate/)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

from benchsmith.agents.defaults import BASELINE
from benchsmith.evals.defaults import DEFAULT_MEASURES, DEFAULT_QUERIES_PER_BATCH, DEFAULT_SIGNIFICANCE_RESAMPLES
from benchsmith.graphs.runtime.bounds import MAX_DEPTH, MAX_ITEMS, MAX_POOL_DEPTH, MAX_RESAMPLES
from benchsmith.graphs.runtime.ray_options import RayOptions
from benchsmith.graphs.runtime.settings import ModelOptions, StoreOptions, concurrency_field, setting_field
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
class RetrievalOptions:
    """How a job that ranks as an evaluation does retrieves (evaluate, validate, robustness)."""

    depth: int = setting_field(DEFAULT_DEPTH, "Documents retrieved per query.", low=1, high=MAX_DEPTH)
    embedder: str = setting_field(DEFAULT_EMBEDDER, DENSE_EMBEDDER_DESCRIPTION)
    llm: str = setting_field(BASELINE, REWRITER_DESCRIPTION)

    def retrieval_settings(self) -> dict[str, Any]:
        """These settings by name (and the reranker's, where there is one): what an evaluation run
        on the way is given."""
        shared = RerankOptions if isinstance(self, RerankOptions) else RetrievalOptions
        return {item.name: getattr(self, item.name) for item in fields(shared)}


@dataclass(kw_only=True)
class RerankOptions(RetrievalOptions):
    """A job that ranks configurations as an evaluation does, each of them reranked on request."""

    rerank: str | None = setting_field(
        None,
        "Also rerank each configuration's top rerank-depth with this sentence-transformers "
        "CrossEncoder (name, path or registered name); empty: no reranking.",
    )
    rerank_depth: int = setting_field(
        DEFAULT_RERANK_DEPTH, "Documents per query the reranker re-scores.", low=1, high=MAX_POOL_DEPTH
    )


@dataclass(kw_only=True)
class EvaluationContext(RayOptions, StoreOptions, ModelOptions, RerankOptions):
    """Settings of one evaluation (not checkpointed: the CLI passes them again on resume)."""

    split: str = setting_field("test", SPLIT_DESCRIPTION)
    qrels: str | None = setting_field(
        None,
        "Judgments, TREC qrels (qid iteration docid relevance) or BEIR TSV (query-id corpus-id score, "
        "header or not), told apart by their first line: what run files are measured against "
        "without a benchmark; with one, used instead of its own.",
    )
    extra_qrels: str | None = setting_field(
        None,
        "More judgments (TREC qrels or BEIR TSV) added to the benchmark's, e.g. the extra_qrels.tsv "
        "of `benchsmith audit`.",
    )
    nugget_qrels: str | None = setting_field(
        None,
        "Nugget qrels (qid nugget_id doc_id label: a `benchsmith nuggets` run's nugget-qrels.trec) "
        "for the measures alpha_nDCG@k and Coverage@k beside the others (added to the default "
        "measures). With run files and no benchmark it can stand in for qrels: a document's label "
        "is then the sum of its nugget labels.",
    )
    measures: tuple[str, ...] = setting_field(
        DEFAULT_MEASURES,
        "Any ir_measures measure (nDCG@10, R@100, RR@10, AP, Judged@10, P(rel=2)@5...), or with "
        "nugget qrels alpha_nDCG@10 and Coverage@20. Repeat; replaces the defaults.",
        cli="--measure",
    )
    concurrency: int = concurrency_field(
        "Rewriter calls in flight; with --ray, also the blocks of queries a retriever ranks at once."
    )
    significance_test: Literal["randomization", "t-test"] = setting_field(
        "randomization", "Paired test between configurations (Holm-corrected over all pairs): randomization or t-test."
    )
    resamples: int = setting_field(
        DEFAULT_SIGNIFICANCE_RESAMPLES, "Resamples of the randomization test.", low=1, high=MAX_RESAMPLES
    )
    batch_size: int = setting_field(
        DEFAULT_QUERIES_PER_BATCH,
        "Queries per batch: BM25, fusion, reranking and measuring hold one batch of rankings in "
        "memory at a time (dense retrieval always takes 256); results do not depend on it.",
        low=1,
        high=MAX_ITEMS,
        recorded=False,
    )
    strict: bool = setting_field(
        False,
        "Stop on judged query or document ids the benchmark lacks, run-file queries it lacks, or "
        "document ids its corpus repeats (warnings otherwise).",
    )
