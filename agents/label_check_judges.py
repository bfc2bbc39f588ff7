"""One judge's verdict on a labelled turn, for the audit's label checks (issue 22;
evals/measures/label_checks.py decides from the verdicts). No new prompt: each check asks a judge the
synthesis side or the audit already has.

* unanswerable: the pool judge (agents/pool_judge.py) names the chunks of the retrievers'
  pool that answer the question, as synthesis's label judge does before it keeps the turn;
* underspecified: the pool judge names the candidates (else the pooled chunks) the question
  fits, fully or in part: an ambiguous question fits several;
* multi-passage: the contribution judge (agents/turn_types.py) says which gold chunks give
  something the reference answer uses and no other gold gives (without a reference answer,
  the question stands for it: what it asks of each chunk);
* partial: the alignment judge (agents/judges.py) scores how far the gold answers the
  question (3 partly, 4 with gaps, 5 fully); and :class:`MissingPartJudge`, the pool judge's
  verdicts over the retrievers' pool asked of the part the reference answer says is missing,
  names the pooled chunks that answer that part (a partial turn has none).

Offline, the pool judge's baseline keeps a passage whose lexical support is within 90% of the
best passage judged with it. Synthesis shows it the held-out chunk first, as what answering
looks like; the audit has no held-out chunk (it is out of the corpus), so
:class:`UnansweredPoolJudge`'s baseline measures the pool against the question itself, a passage
holding every term it asks: a pooled chunk answers when it holds nearly all of them. The model
sees only the pooled chunks. :class:`MissingPartJudge`'s baseline does the same with the missing
part's terms (:func:`missing_part`: the question's words the reference answer's "does not cover"
sentence repeats); its model reads the question, the reference answer and the pooled chunks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from benchsmith.agents.judges import AlignmentJudge, render_conversation
from benchsmith.agents.pool_judge import POOL_JUDGE_SYSTEM_PROMPT, PassageJudgments, PoolJudge, stemmed_words
from benchsmith.agents.prompt_sections import delimited, numbered, system_and_user
from benchsmith.agents.seam.backends import Message
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.agents.text import WordStatistics
from benchsmith.agents.turn_types import ContributionJudge
from benchsmith.history import Exchange
from benchsmith.passages import sentences
from benchsmith.words import content_words

MISSING_PART_TASK = """The REFERENCE ANSWER answers part of the user's latest QUESTION and says which part the
documentation does not cover. For each numbered PASSAGE, decide whether it answers that MISSING part,
fully or in part; the part the reference answer does answer does not count. Their order means nothing.
If it does, quote its minimal facts: each the shortest span of the passage, copied verbatim, that
states one piece of the missing part's answer on its own. Quote no fact from a passage that does not
answer. Answer every passage exactly once."""
# A sentence of a reference answer that says part of the question is not covered (agents/turn_types.py
# has the responder say so: "The documentation does not cover the rest of your question (...)").
NOT_COVERED = re.compile(
    r"(?:\bnot|n't|\bno)\b[^.;]*?\b(?:cover|answer|say|mention|describe|document|explain|"
    r"information|detail)",
    re.I,
)
PARENTHESIS = re.compile(r"\(([^()]+)\)")


class UnansweredPoolJudge(PoolJudge):
    """The pool judge, whose offline baseline compares each passage with the question itself."""

    def baseline(
        self, *, question: str, passages: list[str], passage_titles: Sequence[str] | None = None, **inputs: Any
    ) -> PassageJudgments:
        """The pool judge's rule with the question as the first passage: the others are measured
        against a passage holding every term it asks (``inputs``: the conversation, the statistics)."""
        titles = list(passage_titles) if passage_titles is not None else [""] * len(passages)
        anchored = PoolJudge(len(passages) + 1).baseline(
            question=question, passages=[question, *passages], passage_titles=["", *titles], **inputs
        )
        return self.schema.model_validate(
            {
                "judgments": [
                    {**judgment.model_dump(), "passage": judgment.passage - 1} for judgment in anchored.judgments[1:]
                ]
            }
        )


def missing_part(question: str, answer: str | None) -> str:
    """The part of ``question`` the reference ``answer`` says is not covered: the question's
    words (in its order) that the answer's "does not cover" sentences repeat, a parenthesis in
    them read first; empty when the answer says no such thing."""
    said = [
        piece
        for sentence in sentences(answer or "") or [answer or ""]
        for piece in re.split(r";\s*|,\s*but\s+", sentence)
        if NOT_COVERED.search(piece)
    ]
    said = [quoted for piece in said for quoted in PARENTHESIS.findall(piece)] or said
    repeated = set(stemmed_words(" ".join(said)))
    words = [word for word in content_words(question) if stemmed_words(word) and stemmed_words(word)[0] in repeated]
    return " ".join(dict.fromkeys(words))


class MissingPartJudge(UnansweredPoolJudge):
    """The pool judge asked of the part of a partial turn's question that its reference answer
    says is missing: which pooled passages answer that part."""

    name = "missing-part-judge"

    def messages(  # type: ignore[override]  # its own inputs (the reference answer), PoolJudge's schema
        self, *, history: list[Exchange], question: str, answer: str, passages: list[str], **_: Any
    ) -> list[Message]:
        user = "\n\n".join(
            [
                render_conversation(history, question),
                delimited("reference_answer", answer),
                delimited("passages", numbered("passage", passages)),
                MISSING_PART_TASK,
            ]
        )
        return system_and_user(POOL_JUDGE_SYSTEM_PROMPT, user)

    def baseline(  # type: ignore[override]  # (its own inputs, as above)
        self, *, question: str, answer: str, passages: list[str], **inputs: Any
    ) -> PassageJudgments:
        """The unanswered pool judge's rule, the missing part's terms for the question (no history:
        they are the whole of what is asked)."""
        inputs.pop("history", None)
        return super().baseline(history=[], question=missing_part(question, answer), passages=passages, **inputs)


def _relevant(verdict: PassageJudgments, ids: Sequence[str]) -> tuple[list[str], str]:
    """The ids judged relevant, and the rationales of those (else of all), joined."""
    chosen = [judgment for judgment in verdict.judgments if judgment.relevant]
    rationale = " ".join(
        f"[{ids[judgment.passage - 1]}] {judgment.rationale}" for judgment in (chosen or verdict.judgments)
    )
    return [ids[judgment.passage - 1] for judgment in chosen], rationale


# The labels the pool judge checks: its judge, the key of the chunks it picks, the rationale when
# there is no chunk to judge.
POOL_CHECKS: dict[str, tuple[type[PoolJudge], str, str]] = {
    "unanswerable": (UnansweredPoolJudge, "supporting", "The retrievers returned no chunk for the question."),
    "underspecified": (PoolJudge, "fits", "No candidate chunk to judge."),
}


def pool_verdict(
    seam: ModelSeam,
    label: str,
    *,
    history: list[Exchange],
    question: str,
    chunks: Sequence[str],
    texts: Sequence[tuple[str, str]],
    statistics: WordStatistics | None,
) -> dict[str, Any]:
    """The pool judge's verdict on an ``unanswerable`` turn, ``{"supporting": [pooled chunk ids that
    answer], "rationale"}``, or on an ``underspecified`` one, ``{"fits": [chunk ids the question
    fits], "rationale"}`` over the candidates (or pooled chunks); ``texts``: each chunk's ``(title, text)``."""
    judge, key, nothing = POOL_CHECKS[label]
    if not chunks:
        return {key: [], "rationale": nothing}
    chosen, rationale = _judged(seam, judge(len(chunks)), chunks, texts, statistics, history=history, question=question)
    return {key: chosen, "rationale": rationale}


def _judged(
    seam: ModelSeam,
    judge: PoolJudge,
    chunks: Sequence[str],
    texts: Sequence[tuple[str, str]],
    statistics: WordStatistics | None,
    **asked: Any,
) -> tuple[list[str], str]:
    """The chunks ``judge`` calls relevant to what is ``asked`` (the conversation, the question...),
    and its rationale."""
    verdict = seam.run(
        judge,
        passages=[text for _, text in texts],
        passage_titles=[title for title, _ in texts],
        statistics=statistics,
        **asked,
    )
    return _relevant(verdict, chunks)


def multi_passage_verdict(
    seam: ModelSeam, *, question: str, answer: str | None, golds: Sequence[str], texts: Sequence[tuple[str, str]]
) -> dict[str, Any]:
    """``{"idle": [gold ids that do not contribute], "rationale"}``."""
    passages = [{"title": title, "text": text} for title, text in texts]
    verdict = seam.run(ContributionJudge(), question=question, answer=answer or question, passages=passages)
    flags = list(verdict.contributes) + [False] * (len(golds) - len(verdict.contributes))  # an unanswered gold: idle
    idle = [gold for gold, contributes in zip(golds, flags) if not contributes]
    against = "the reference answer" if answer else "the question (the benchmark has no answer)"
    return {
        "idle": idle,
        "rationale": f"Judged against {against}: "
        + (f"no contribution from {', '.join(idle)}." if idle else "every gold contributes."),
    }


def partial_verdict(
    seam: ModelSeam,
    *,
    history: list[Exchange],
    question: str,
    answer: str | None,
    gold_text: str,
    chunks: Sequence[str],
    texts: Sequence[tuple[str, str]],
    statistics: WordStatistics | None,
) -> dict[str, Any]:
    """``{"score": alignment 1-5 of the gold (all golds, joined) for the question, "supporting":
    [pooled chunk ids that answer the part the reference answer says is missing], "rationale"}``;
    ``texts``: each pooled chunk's ``(title, text)``. Without a reference answer, or an offline
    judge finding no missing part in it, no chunk is judged."""
    verdict = seam.run(AlignmentJudge(), history=history, question=question, document=gold_text)
    rationale = f"Alignment {verdict.score}: {verdict.rationale}"
    if not answer or not chunks or (seam.is_baseline and not missing_part(question, answer)):
        return {
            "score": verdict.score,
            "supporting": [],
            "rationale": f"{rationale} No pooled chunk was judged for the missing part: "
            + ("the retrievers returned none." if answer and chunks else "the reference answer names no missing part."),
        }
    supporting, why = _judged(
        seam,
        MissingPartJudge(len(chunks)),
        chunks,
        texts,
        statistics,
        history=history,
        question=question,
        answer=answer,
    )
    return {"score": verdict.score, "supporting": supporting, "rationale": f"{rationale} Missing part: {why}"}
