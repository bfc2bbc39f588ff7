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

HARDNEG_SCORERS = ("bm25", "dense")

INGEST_COLLECTION = "corpus"

ROBUSTNESS_RETRIEVERS = ("bm25",)
ROBUSTNESS_HISTORIES = ("full", "oracle")

SELECT_JUDGES = (BASELINE,)

SYNTHESIS_CONVERSATIONS, SYNTHESIS_TURNS = 20, 6

# bm25, dense, their RRF fusion and weighted hybrids across the range (as benchmarks/validity.py).
VALIDATE_RETRIEVERS = (
    "bm25",
    "dense",
    "hybrid:rrf(dense,bm25)",
    "hybrid:combsum(dense,bm25)",
    "hybrid:wsum(dense=0.7,bm25=0.3)",
    "hybrid:wsum(dense=0.3,bm25=0.7)",
    "hybrid:wsum(dense=0.9,bm25=0.1)",
)
