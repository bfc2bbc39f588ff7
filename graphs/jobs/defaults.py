"""The jobs' defaults, importable without loading a job: no model client, Chroma, torch or scipy.

The defaults of a job's inputs (what the graph's state carries: retrievers, histories, conversations...):
the CLI's arguments and the API's signatures read them from here. A job's settings are fields of its
graph's context instead (graphs/contexts/), each with its default.
"""

from benchsmith.agents.defaults import BASELINE
from benchsmith.evals.defaults import DEFAULT_QUERIES_PER_BATCH

EVALUATE_RETRIEVERS = ("dense", "bm25", "hybrid:rrf(dense,bm25)")
EVALUATE_HISTORIES = ("full",)
EVALUATE_BATCH_SIZE = DEFAULT_QUERIES_PER_BATCH

HARDNEG_CONDITIONS, HARDNEG_MAX_CHARS, HARDNEG_CONCURRENCY = 10, 6000, 4
HARDNEG_SCORERS = ("bm25", "dense")

INGEST_COLLECTION = "corpus"

PARAPHRASE_PER_TURN = 5
PARAPHRASE_MIN_JUDGE_SCORE = 4

ROBUSTNESS_JUDGE_DEPTH = 3
ROBUSTNESS_RETRIEVERS = ("bm25",)
ROBUSTNESS_HISTORIES = ("full", "oracle")
ROBUSTNESS_MEASURES = ("nDCG@3", "nDCG@10", "R@100", "AP")

SELECT_JUDGES = (BASELINE,)
SELECT_BATCH_SIZE = 8
SELECT_RERANK_DEPTH = 50

SYNTHESIS_CONVERSATIONS, SYNTHESIS_TURNS = 20, 6

# bm25, dense, their RRF fusion and weighted hybrids across the range (as benchmarks/validity.py).
VALIDATE_RETRIEVERS = ("bm25", "dense", "hybrid:rrf(dense,bm25)", "hybrid:combsum(dense,bm25)",
                       "hybrid:wsum(dense=0.7,bm25=0.3)", "hybrid:wsum(dense=0.3,bm25=0.7)",
                       "hybrid:wsum(dense=0.9,bm25=0.1)")
VALIDATE_MEASURE = "nDCG@10"
VALIDATE_JUDGE_DEPTH = 10

WORKER_CONCURRENCY = 4
