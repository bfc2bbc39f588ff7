"""Retriever evaluation (the MTR-Bench protocol) on any benchmark.

    plan ─→ dispatch ─→ Send × configurations of the next stage ─→ retrieve ─→ gather ─┐
              ↑ └────────────────────── (nothing left) ──→ measure ─→ END             │
              └──────────────────────────────────────────────────────────────────────┘

A configuration is a retriever (bm25, dense[:MODEL], hybrid fusion) × a history mode (full,
last:K, current, rewrite, oracle), optionally reranked, or a TREC run file of the user's own
system (named by its file name). Stages run in order: first-stage retrievers and run files,
then fusions of their runs, then reranking. Each configuration writes one TREC run file into
the run directory, sorted by query id; a run file that exists is complete (written to a
temporary file and renamed) and is reused, never recomputed, so a killed evaluation resumes
where it stopped. ``measure`` scores every run with ir_measures (and, given nugget qrels,
with the nugget measures Coverage@k and alpha_nDCG@k), breaks the scores down by turn and
switch type, tests the differences, and writes ``report.md``, ``report.html`` and
``results.json``.

Everything streams a batch of queries at a time (``batch_size``): retrieval writes each
batch's rankings as it goes, fusion and reranking read their input run files side by side a
batch at a time, and measuring reads each run file a batch at a time (the nugget measures
scored on each batch as it passes) and keeps a row of floats per judged query. Memory holds
one batch of rankings, whatever the number of queries.

``plan`` checks the inputs first: judged query or document ids the benchmark lacks, a
document id the corpus repeats, run-file queries the benchmark lacks, and nugget-judged
query ids the judgments lack or document ids the corpus lacks are warnings
(streamed as ``{"warning": ...}`` events and recorded in results.json and the report), or
errors with ``strict``.

State holds configuration names and warnings only; queries, corpus and runs live in files.

The package: the graph and the child run (graph.py), its state and run files (state.py), what its
nodes read (inputs.py), the nodes up to retrieval (nodes.py) and the measure node (measure.py).
"""
