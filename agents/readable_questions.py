"""Would a reader call a generated question broken? Checks for the offline typed questioner
(agents/turn_types.py), which skips a question that fails them and asks about another sentence.

These catch what the extractive questioner gets wrong when a sentence's grammar misleads it,
beyond the audit's ill-formed rule (evals/question_form.py):

* a pronoun as the subject ("How does it try to compile?"): a turn of several questions, or
  one about a held-out passage, cannot lean on the last turn's subject;
* a code name twice ("How does TypeAlias use TypeAlias to indicate?"), a word twice in a row;
* a "how" or "why" question ending on a verb that needs an object ("How does X use?");
* a stray symbol before the question mark ("How does any run of non-alphanumeric/?");
* a second clause glued on ("How does NodeVisitor soe a node visit function would be ...?",
  "How does the function either reference func?");
* a contraction read as a noun ("the don't score", "the aren't regular files").
"""

from __future__ import annotations

import re

from benchsmith.words import MEASURE_STOPWORDS

PRONOUN_SUBJECT = re.compile(
    r"^(?:(?:And|Also,)\s+)?(?:In [^,]+, )?(?:(?:how|what|why|when|where|which|who)\s+(?:\w+\s+)?)?"
    r"(?:does|do|did|is|are|was|were|can|could|will|would|should|must|may)\s+(?:it|they|this|these|those|he|she)\b",
    re.IGNORECASE)
# Verbs that need an object: a "how" question ending on one has lost it.
OBJECT_VERBS = frozenset("use indicate specify provide give take make set get contain include require need mean "
                         "call pass create add remove replace define support accept allow change determine handle "
                         "reference refer produce hold".split())
DANGLING_VERB = re.compile(rf"^(?:(?:And|Also,)\s+)?(?:In [^,]+, )?(?:how|why)\b.*\s(?:to\s+)?"
                           rf"(?:{'|'.join(sorted(OBJECT_VERBS))})\s*\?$", re.IGNORECASE)
STRAY_SYMBOL = re.compile(r"[/\\|=<>(\[{,;:-]\s*\?$|(?<=\s)[^\w\s\"'“‘(]+(?=\s)")
SECOND_CLAUSE = re.compile(r"^(?:(?:And|Also,)\s+)?(?:In [^,]+, )?how\s+(?:does|do)\s+\S+.*?\s"
                           r"(?:(?:would|could|should|might)\s+(?:be|have)\b|(?:either|neither)\s(?!.*\s(?:or|nor)\s))"
                           r"|\s(?:either|neither)\s*\?$", re.IGNORECASE)
CONTRACTION_AS_NOUN = re.compile(r"\b(?:the|a|an)\s+\w+n[’']t\b", re.IGNORECASE)
TOKEN = re.compile(r"[A-Za-z_][\w.]*\w|[A-Za-z_]")
CODE_LIKE = re.compile(r"[._]|\w[A-Z]")  # json.dumps, ensure_ascii, TypeAlias


def unreadable_reasons(question: str) -> list[str]:
    """Why a reader would call one question (not several joined) broken; empty: it reads as a
    question."""
    reasons = []
    if PRONOUN_SUBJECT.search(question):
        reasons.append("a pronoun as the subject")
    tokens = TOKEN.findall(question)
    # A code name twice ("TypeAlias use TypeAlias"), or any word twice in a row ("open open").
    named = [token.lower() for token in tokens if len(token) >= 3 and token.lower() not in MEASURE_STOPWORDS
             and CODE_LIKE.search(token)]
    doubled = {first.lower() for first, second in zip(tokens, tokens[1:]) if first.lower() == second.lower()}
    if repeated := sorted({token for token in named if named.count(token) > 1} | doubled):
        reasons.append("a word twice: " + ", ".join(repeated))
    if DANGLING_VERB.search(question):
        reasons.append("a verb without its object")
    if STRAY_SYMBOL.search(question):
        reasons.append("a stray symbol")
    if SECOND_CLAUSE.search(question):
        reasons.append("a second clause glued on")
    if CONTRACTION_AS_NOUN.search(question):
        reasons.append("a contraction read as a noun")
    return reasons
