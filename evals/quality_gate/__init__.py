"""The offline quality gate: per turn, the reading rubric's broken classes, by rules, without a model.

A reader of generated turns (data/readings/RUBRIC.md) calls a turn broken for one of seven
reasons; each has a rule here, run on any benchmark's turns whatever wrote them (the offline
agents, a model, an imported benchmark). Thresholds were set on the development half's readings
(data/readings/, corpora stdlib, requests, mkdocs, git, pytest) and are measured on the test half's
(flask, markdown, attrs, click) by ``benchmarks/gate_agreement.py``.

* ``unaskable``: the audit's form rule (evals/measures/question_form.py: markup, templates, a page as a
  whole, fragments) or a question that does not parse as one: no verb where a sentence needs
  one, a word run twice, an unbalanced bracket, more than ``MAX_QUESTION_WORDS`` words, several
  questions in one whose parts share no content word.
* ``topic_not_noun_phrase``: the thing a question frame asks about ("What is the role of X",
  "What is X for", "How does X work", "What will I find in X", ...) is not a noun phrase
  (benchsmith/language.py ``is_noun_phrase``: "the come back", "Don't treat").
* ``reply_mismatch``: an answerable reply that shares none of the question's topic words (stems,
  frame words left out) and does not come from the entry the question names; a reply drawn from
  under another entry of the gold than the one asked ("answers another entry"); an unanswerable
  turn whose reply answers; an underspecified turn whose reply asks nothing; a question that asks
  what a thing is, holds or does answered only by version notes ("Soft-deprecated, prefer X.") or by
  a first sentence that tells the user what they must do ("You will need to ...") and names neither
  the asked code name nor, without one, any topic word; a question that asks what a thing does or is
  for answered only by where it applies ("Only used with the dcommit command."); a definition
  question whose reply defines the asked thing with a phrase or clause the question dropped ("What
  exactly is Support?" answered "Support for these types of ... is ..."); a question whether or how
  a thing can be done answered for a case it never names ("If you have a test suite where ..., you
  can ..."); a how-question answered only that it can be done (a recommendation, "To X, do Y", "If
  you want to X, do Y", a means wherever the parser hangs it and an instruction say how). A question
  for what a thing returns may be answered by a type alone ("Optional[jinja2.Environment]"). A reply
  that runs on past the next entry's signature line into its description (entry_crossing.py: "Clear
  the auth info and enable basic auth. Clear the auth info and enable digest auth." for set_basic;
  development readings 4 flagged, all broken); "what do I need to do?" answered with no move of the
  user's ("you're probably using the built-in server": no must, should, can or instruction; 2
  flagged, both broken, none of the frame's 24 read ok).
* ``dangling_referent``: a first question that says "it", "this", "they"; a reply whose first
  sentence's subject is a pronoun or demonstrative ("This is useful for ...") that nothing in the
  reply or the question names; a condition question ("What happens if I provide no ids?") with no
  "In X," context, no code name or proper name, whose condition shares no word with the earlier
  turns (ids of what?), when the condition is the user's own move ("if I ...": "if chardet is
  installed" names what it is about); a first question on "the setpos() method" of no class or
  module it names; "the chunk_size parameter" of nothing the question names (a return value is the
  named function's, an "In X," scope or a second name names the owner).
* ``fake_ambiguity``: an underspecified turn whose candidates do not document two different
  entries of the asked name (one concept on two pages is no ambiguity).
* ``unanswerable_answered``: an unanswerable turn whose answer a passage of what remains contains
  (evals/measures/answer_containment.py, on the pool dense and BM25 retrieval give the caller).
* ``copies_passage``: the question repeats at least ``COPIED_RUN`` consecutive words of a gold or
  held-out passage.

Beside the rules, the reading model (reading_model.py): gradient-boosted trees over a turn's
structure and the rules' verdicts, fitted on the development half's readings, flags a turn no rule
flags when its probability of being called broken reaches the threshold chosen leave-one-corpus-out
on every round's ungated development sheets: the lowest whose worst corpus agrees at least 0.8, keeping
recall 0.7 (0.700: held out, agreement 0.89, recall 0.74, precision 0.59; reading_model.py says how);
its flag takes the class ``unaskable`` or ``reply_mismatch`` by whether the question's or the reply's
features weighed more. It judges the answerable and multi-passage turns of synthesized benchmarks only
(``judge_turn(..., reading_model=True)``). Synthesis records its flags and keeps the turn (a model
that is right about six times in ten re-planning turns emptied small trees); the audit counts them.

A turn a rule flags is re-planned or dropped by synthesis (graphs/synthesis/) and counted
per class; the audit reports each class's rate with examples, and a benchmark with more than
``MAX_FLAGGED_SHARE`` of its turns flagged is never called usable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from benchsmith.evals.quality_gate.evidence import GATE_CLASSES, TurnEvidence
from benchsmith.evals.quality_gate.label_rules import fake_ambiguity, unanswerable_answered
from benchsmith.evals.quality_gate.question_rules import (
    copies_passage,
    dangling_question,
    topic_not_noun_phrase,
    unaskable,
)
from benchsmith.evals.quality_gate.reading_model import MODELLED_TURN_TYPES, trained_reading_model, turn_features
from benchsmith.evals.quality_gate.reply_rules import dangling_reply, reply_mismatch

MAX_FLAGGED_SHARE = 0.2  # the bound: a benchmark with more flagged turns is never called usable
Rule = Callable[[TurnEvidence], "str | None"]


@dataclass(frozen=True)
class GateVerdict:
    flags: dict[str, str] = field(default_factory=dict)  # class → why
    by_model: bool = False  # the flag is the reading model's, no rule's

    @property
    def broken(self) -> bool:
        return bool(self.flags)

    @property
    def first_class(self) -> str | None:
        return next((name for name in GATE_CLASSES if name in self.flags), None)


def dangling_referent(turn: TurnEvidence) -> str | None:
    return dangling_question(turn) or dangling_reply(turn)


RULES: tuple[tuple[str, Rule], ...] = (
    ("unaskable", unaskable),
    ("topic_not_noun_phrase", topic_not_noun_phrase),
    ("reply_mismatch", reply_mismatch),
    ("dangling_referent", dangling_referent),
    ("fake_ambiguity", fake_ambiguity),
    ("unanswerable_answered", unanswerable_answered),
    ("copies_passage", copies_passage),
)
QUESTION_CLASSES = frozenset({"unaskable", "topic_not_noun_phrase", "copies_passage"})  # read the question alone
QUESTION_RULES = tuple((name, rule) for name, rule in RULES if name in QUESTION_CLASSES)


def judge_turn(turn: TurnEvidence, *, reading_model: bool = False) -> GateVerdict:
    """The gate's flags for one turn (empty: it passes). With ``reading_model`` a turn no rule flags
    is also given to the reading model (reading_model.py), which was fitted on readings of turns
    benchsmith synthesized: synthesis and the audit of a synthesized benchmark ask for it; the turns
    of a benchmark people wrote are judged by the rules alone."""
    verdict = _judged(turn, RULES)
    if verdict.broken or not reading_model or turn.turn_type not in MODELLED_TURN_TYPES:
        return verdict
    model = trained_reading_model()
    chance, klass = model.judge(turn_features(turn))
    if chance < model.threshold:
        return verdict
    why = f"the reading model gives {chance:.2f} that a reader calls it broken (flags from {model.threshold:.2f})"
    return GateVerdict({klass: why}, by_model=True)


def judge_question(turn: TurnEvidence) -> GateVerdict:
    """The flags of the rules that read the question alone (with its passages and history): what a
    questioner can be asked again for before any reply is written."""
    return _judged(turn, QUESTION_RULES)


def _judged(turn: TurnEvidence, rules: Sequence[tuple[str, Rule]]) -> GateVerdict:
    flags: dict[str, str] = {}
    for name, rule in rules:
        if reason := rule(turn):
            flags[name] = reason
    return GateVerdict(flags)
