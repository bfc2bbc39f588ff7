"""Light constants of the measures, importable without numpy, scipy or ir_measures.

The CLI's option declarations and ``--help`` read their defaults from here; the measure modules
import them from here, under their own names.
"""

# A benchmark ranks retrievers on its questions, and which retriever wins changes with the questions asked:
# Voorhees and Buckley (2002, "The effect of topic set size on retrieval experiment error", SIGIR) measured
# how often a conclusion flips with another topic set of the same size for sets of up to 25 topics, and found
# those rates larger than anticipated, the more so the fewer the topics (TREC's tracks use 50). Below the
# largest set they measured, no noise or sparsity rate makes a ranking reliable (evals/measures/audit_verdicts.py).
MIN_RANKING_QUERIES = 25
DEFAULT_MIN_VOTES = 2  # judges that must call a pair irrelevant before it counts (evals/measures/audit_verdicts.py)
DEFAULT_CONFIDENCE = 0.95  # confidence level of the bootstrap intervals (evals/measures/intervals.py)
DEFAULT_RESAMPLES = 2000  # bootstrap resamples of an interval (evals/measures/intervals.py)
DEFAULT_BOOTSTRAP = 1000  # resamples of Kendall's τ interval (evals/measures/validity.py)
DEFAULT_SELECTION_BETAS = (0.5, 1.0, 2.0)  # F-beta weights of selection (evals/measures/selection_measures.py)
DEFAULT_SELECTION_RESAMPLES = (
    1000  # bootstrap resamples of selection's intervals (evals/measures/selection_measures.py)
)
DEFAULT_QUERIES_PER_BATCH = 1000  # queries measured per batch (evals/measures/standard.py)
DEFAULT_SIGNIFICANCE_RESAMPLES = 10_000  # resamples of the paired randomization test (evals/measures/significance.py)
# What `benchsmith evaluate` measures unless told (evals/measures/standard.py): the one default set. Every measure
# another job reports by default is in it (the audit's shortcuts R@10, RR@10 and nDCG@10; robustness's
# defaults), so its figures can be read against an evaluation's (tests/test_default_measures.py).
DEFAULT_MEASURES = (
    "R@1",
    "R@5",
    "R@10",
    "R@20",
    "R@100",
    "R@1000",
    "nDCG@3",
    "nDCG@10",
    "nDCG@20",
    "RR@10",
    "RR@20",
    "AP",
    "Judged@10",
    "Judged@20",
)
