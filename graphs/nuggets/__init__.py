"""Nugget-judged benchmarks from real questions and accepted answers (FreshStack, Thakur et
al. 2025).

    prepare ─┬→ Send × questions not pooled ─→ pool ─→ gather ─┬→ Send × batches not judged ─→ judge ─→ export ─→ END
             └────────────── (all pooled) ───────────→ gather  └──────────── (all judged) ─────────────→ export

``prepare`` reads the question-answer pairs (JSONL or a Stack Exchange ``Posts.xml``) and
builds the corpus once: chunks whose ids are their path and byte span
(tools/corpus/source_corpus.py), written as the BEIR corpus of the run, and its BM25 and dense
indexes. Per question, ``pool`` has the model write the nuggets (grading notes), sub-questions
and a closed-book answer, retrieves every technique with BM25 and the dense retriever, fuses
them and pools the top ``pool_depth`` of each technique (tools/retrieval/pooling.py); each pooled
question is appended to ``pools.jsonl`` once. ``judge`` makes one support call per question and
batch of at most 20 pooled chunks, judging every nugget against every chunk, and appends it to
``judgments.jsonl`` once (keyed ``<question>#<batch>``): a killed run resumes at the first
question not pooled and the first batch not judged, and the response cache makes a call cut
off in flight free the second time. ``export`` applies the filters and writes the benchmark
(BEIR directory with query-level qrels, ``nuggets.jsonl``, nugget qrels in TREC form), the
techniques' runs, and the report with the pooling results in the layout of FreshStack's Table 4.

State holds ids and counters; pairs, corpus, pools and judgments live in run-directory files.

The package: the graph (graph.py), its state and run files (state.py), what its nodes read
(inputs.py), the nodes (nodes.py), and the records, runs and results ``export`` writes (results.py).
"""
