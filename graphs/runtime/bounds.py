"""The bounds of the count settings (docs/design.md rule 11: a field's ``min``/``max``; ``--help``
shows them, the CLI and the API refuse a value outside them with exit 2 before any work).

A count without a bound let a typo start work that could never finish or was never meant:
``synthesize --turns 1000000`` ran 83 s into the conversation graph's step limit, ``hardneg build
--conditions 100000`` wrote 133 MB of header-only tables. Each bound is far above what a real run
uses and below what the code can do; why each is where it is, beside it.
"""

from __future__ import annotations

MAX_TURNS = 50  # per conversation: published ones have 5-20 (TREC CAsT, MTRAG); a turn takes at most ~45 of
# the 10,000 steps a conversation may run (graphs/runtime/inline.py)
MAX_CONVERSATIONS = 100_000  # each is one cluster of the collection, and one work item
MAX_CLUSTER_SIZE = 256  # chunks a conversation walks; the turns use a few of them
MAX_NEIGHBOURS = 1_000  # of the k-nearest-neighbour graph, held for every chunk
MAX_RETRIES = 10  # corrective turns and re-plans of one turn, each a model call or more

MAX_CONDITIONS = 20  # per document (MultiConIR: 10); each is a table column, a query and a negative per row
MAX_VARIANTS = 50  # paraphrases per turn, asked for in one model reply
MAX_TEST_SETS = 1_000  # test sets R1..Rn, one query file each
MAX_NUGGETS = 100  # per question; each is judged against every pooled chunk
MAX_NEGATIVES = 100  # hard negatives shown beside the gold in one judge prompt

MAX_DEPTH = 100_000  # documents retrieved per query (TREC runs: 1,000)
MAX_POOL_DEPTH = 1_000  # documents per query a judge or reranker reads
MAX_JUDGES = 20  # votes asked of a judge ensemble
MAX_JUDGE_BATCH = 100  # pairs in one judge prompt
MAX_RESAMPLES = 1_000_000  # bootstrap and randomization resamples (10,000 is the usual)
MAX_CURVES = 100  # precision-recall curves drawn in one plot
MAX_ITEMS = 10_000_000  # items sampled, read or scored in one batch: far above any corpus here

MIN_CHUNK_SIZE = 20  # characters: a few words; below, every chunk is a word or less
MAX_CHUNK_SIZE = 1_000_000  # characters; embedders read the first ~2,000 of a chunk
MAX_DOCUMENT_CHARS = 10_000_000  # characters of a document a model is shown
MAX_NUM_PERM = 1_024  # MinHash permutations: deduplication costs grow with them (128 is the usual)
MAX_INDEX_BATCH = 5_461  # chunks per Chroma add: Chroma refuses larger ones
MAX_CONCURRENCY = 1_024  # items in flight in one process
MAX_ATTEMPTS = 100  # per model call
SEED_BOUNDS = {"min": 0, "max": 2**32 - 1}  # numpy's seed range
PORT_BOUNDS = {"min": 1, "max": 65_535}
