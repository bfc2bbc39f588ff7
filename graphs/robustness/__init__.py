"""Metric robustness under paraphrase (ECAsT): the original benchmark and its test sets R1..Rn
(from a paraphrase run) scored, their unjudged top documents re-judged, and the measures
recomputed before and after.

    plan ─┬─→ evaluate (one test set per step, `benchsmith evaluate`) ─┐
          │       ↑______________ (test sets left) ___________________│
          └──────────────── (run files given) ──────────────────────→ pool ─→ dispatch
    dispatch ─→ Send × turns not yet judged ─→ judge ─→ report ─→ END
        └──────────────── (nothing to judge) ─────────────→ ┘

With a corpus, each test set is evaluated by the evaluate job (its own resumable run, named
``<run id>-<test set>``); without one (TREC CAsT) the user's run files are given per test set.
``pool`` collects, once, the documents of every run's top k (``judge_depth``) that the qrels do
not judge for that turn; ``judge`` grades a turn's pooled documents with every judge on CAsT's
0-4 scale and appends the turn to ``judgments.jsonl`` once; ``report`` confirms grades with the
audit's vote rule, puts them on the benchmark's scale (a binary gold gets 1 for a confirmed grade
of 2 or more and 0 below, a graded gold the grades: evals/measures/robustness.py says why), writes
``augmented_qrels.tsv`` (and ``.trec``), recomputes every measure before and after, tests each
test set's change against the original and writes the report.

The evaluate runs are the robustness run's children: each is marked with its parent
(``RunDirectory.mark_child``) before it starts, and `benchsmith runs` lists it under the parent.

The package: the graph (graph.py), its state and run files (state.py), what its nodes read
(inputs.py), the nodes up to judging (nodes.py) and the report node (report.py).
"""
