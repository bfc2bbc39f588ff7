"""Conversational paraphrasing (the ECAsT chain) of any conversational benchmark.

    plan ─→ dispatch ─┬→ Send × a batch of turns not yet paraphrased ─→ paraphrase_turn ─→ gather ─→ dispatch
                      └→ finish ─→ END        (all done, or --per-turn 0)

``plan`` reads the benchmark once (CAsT topic files, a BEIR directory, a synthesis run or a
turn JSONL file) into ``turns.jsonl`` and joins imported ECAsT rows to its turns
(``imported.jsonl``; rows of turns it lacks go to ``unjoined.jsonl``, counted and reported).
Per turn, ``paraphrase_turn`` takes the turn's self-contained form (the benchmark's own
rewrite, else a CQR rewrite through the seam), asks for K paraphrases of it, turns each back
into a mid-conversation turn given the history (so each variant has a raw and a
self-contained form), filters them (near-duplicates by sentence BLEU or chrF, meaning
changes by embedding cosine, optionally a judge ensemble's 1-5 equivalence and fit) and
records the turn once, as a run item (its line of ``generated.jsonl``): a killed run resumes with the turns not
yet there, and every model reply is cached. ``finish`` writes ``paraphrases.jsonl``,
``diversity.json``, the test sets R1..Rn (BEIR query sets sharing the benchmark's qrels) and
the report.

The package: the graph (graph.py), its state and run files (state.py), what its nodes read
(inputs.py), the nodes up to finishing (nodes.py) and the finish node with its exports (finish.py).
"""
