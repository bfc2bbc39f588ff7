"""Validation of a benchmark against the user's own labelled questions: does it rank retriever
configurations as they do, and do the judges agree with the human labels?

    plan ─→ evaluate (one set per step: synthetic, then human; `benchsmith evaluate`) ─┐
               ↑___________________ (a set left) _____________________________________│
    ─→ pool ─→ judge ─→ report ─→ END

``plan`` checks that both sets share one corpus. The user may have labelled over the collection
the benchmark was synthesized from: judgments of the chunks the benchmark holds out (its
unanswerable and partial turns' chunks and their near-duplicates, ``Benchmark.held_out``) are
dropped, and so are questions left without gold (``held-out-labels.json`` says which). With a
labelled JSONL, or when anything was dropped, it writes the human set as a BEIR directory over
the synthetic benchmark's corpus, ``human/``, so retrievers see the same documents on both sets.
``evaluate`` scores
every configuration on one set with the evaluate job (its own resumable run, named
``<run id>-synthetic`` or ``<run id>-human``, reused when finished), as the robustness graph
does: the evaluate job already checks, retrieves, fuses, reranks and measures; calling it
keeps one implementation of each. ``pool`` (with judges) writes the (question, chunk) pairs to
judge once: every gold pair of the human set and a seeded sample, as many, of the non-gold
chunks in the top ``judge_depth`` of the configurations' runs on it. ``judge`` has each judge
label them relevant or not (the pool judge of `select`), one record per judge and question.
``report`` ranks the configurations on both sets by the measure, computes Kendall's τ-b, its
bootstrap interval over the queries, which pairs of configurations the human set's queries
cannot separate, the judges' agreement with the human labels, and writes ``validity.json`` and
the report.

State holds ids, settings and small results; scores and verdicts live in files.

The package: the graph (graph.py), its state and run files (state.py), the human set's checks
(human.py), what its nodes read (inputs.py), the nodes up to judging (nodes.py) and the report node
(report.py).
"""
