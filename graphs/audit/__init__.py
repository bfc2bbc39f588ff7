"""Benchmark audit (MTR-Eval): grade any retrieval benchmark with a judge ensemble and find
the gold documents it misses.

    plan ─→ dispatch ─┬→ Send × a batch of instances not yet judged ─→ judge ─→ gather ─→ dispatch
                      └→ shortcuts ─→ labels ─→ report ─→ END        (all judged)

One instance per judged query (for conversations: the current turn with its history). Each
judge of the ensemble rates query–evidence alignment, picks the best document of a pool of
the gold and hard negatives (discriminability; a non-gold pick suggests an unlabelled
answering document), and, where the benchmark has answers, rates their faithfulness to the
gold document and their quality. ``plan`` fixes every pool and its recorded order once
(``instances.jsonl``), so a resumed or repeated audit shows the judges the same prompts and
their cached verdicts are reused; each judged instance is recorded once, as a run item
(its line of ``judgments.jsonl``). ``shortcuts`` measures, without a model, the shortcuts a retriever
can exploit (evals/measures/shortcuts.py: lexical overlap, query-only BM25, answer leakage, history
dependence, ill-formed questions) into ``shortcuts.json``. ``labels`` checks the turn labels
a benchmark carries (issue 22; evals/measures/label_checks.py, agents/label_check_judges.py): every judge asks
whether an unanswerable turn is answered by a chunk of the retrievers' pool, whether an
underspecified one fits two of its candidates, whether each gold of a multi-passage turn
contributes, whether a partial turn's gold answers part of it and no pooled chunk the part its
reference answer says is missing; into ``label_checks.json``. An instance's gold is the chunk
its question was asked from first (a synthesis run's ``gold_ids`` order), else the first by id.
``report`` aggregates, writes the report and ``extra_qrels.tsv`` (non-gold documents a majority
of judges picked).
"""
