"""Conversational benchmark synthesis (MTR-Pipeline).

    plan ─→ dispatch ─┬→ Send × batch ─→ converse (one conversation per cluster) ─→ gather ─→ dispatch
                      └→ export ─→ END        (all recorded)

    conversation_graph (one conversation; also usable on its own):
    begin ─→ walker → turn_type ─┬→ answerable ──────┐
        └→ END                   ├→ unanswerable ────┤
                                 ├→ partial ─────────┤
                                 ├→ underspecified ──┼→ questioner → responder → label_judge ─┬→ polisher → router ─┬→ walker
                                 ├→ multi_passage ───┤                                        └→ turn_type          └→ END
                                 └→ clarification ───┘

The walker picks each turn's gold chunk along the cluster's semantic path (soft switch),
stays on it (follow-up) or jumps to a distant cluster (hard switch); labels follow the
similarity rule both ways (tools/benchmark/dialogue_walk.py: soft at or above the soft-switch threshold,
hard below it and on another document; a drawn switch that finds no such chunk is re-drawn or
relabelled), and every turn records its similarity to the previous gold. Each turn then draws its type (tools/benchmark/dialogue_walk.py, rates
``--unanswerable-rate``, ``--partial-rate``, ``--underspecified-rate``, ``--multi-gold-rate``; all 0
by default): an answerable turn (below), an unanswerable one about a chunk held out of the
corpus (one chunk per cluster is reserved for that and is never gold), a partial one, an
underspecified one (then the next turn is its clarification) or a multi-passage one; its
question type is drawn from ``--question-types``. Those turns' questions and reference replies
come from agents/turn_types.py, and ``label_judge`` checks the label (no chunk of BM25's pool
over the remaining corpus answers an unanswerable question; each gold of a multi-passage turn
contributes) or re-plans, then drops, the turn; then the quality gate (evals/quality_gate/,
turn_checks.py) keeps it, asks again or drops it, and a turn its reading model alone flags is
kept aside while it is asked again, back when no replacement passes (model_flags.py). The questioner, a
simulated user, asks what the gold chunk answers; a question whose lexical overlap with the
gold (evals/measures/lexical_overlap.py) is above ``max_overlap`` is asked again with the overlap fed
back as one corrective turn, then the turn is re-planned on another gold chunk, and a question
still above the limit is kept flagged (``overlap_rejected``); an ill-formed question (the
audit's rule, evals/measures/question_form.py) is re-planned the same way (``form_replans``). The responder, a
simulated deployed assistant, answers from the gold chunk only; the polisher makes the
question sound mid-conversation, and rewrites that change the meaning are rejected; the
router draws the next turn's switch. The conversation graph returns its turns (and streams
them one update per turn); the run's ``converse`` node records each finished conversation
once, as a run item (graphs/runtime/resources.run_items: its line of ``dialogues.jsonl``), and ``export``
writes BEIR and TREC files and the statistics.

State holds ids, counters and the one dialogue in flight; chunk texts stay in Chroma, the
plan in ``plan.jsonl``, the collection's word and similarity statistics (computed once per
collection; the baseline agents rank sentences by them) in ``corpus_stats/``. The
conversation graph is not checkpointed inside a run: a conversation cut off mid-way is
replayed from the response cache at no model cost.
"""
