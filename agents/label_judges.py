"""One judge's verdict on a labelled turn, for the audit's label checks (issue 22;
evals/label_checks.py decides from the verdicts). No new prompt: each check asks a judge the
synthesis side or the audit already has.

* unanswerable: the pool judge (agents/pool_judge.py) names the chunks of the retrievers'
  pool that answer the question, as synthesis's label judge does before it keeps the turn;
* underspecified: the pool judge names the candidates (else the pooled chunks) the question
  fits, fully or in part: an ambiguous question fits several;
* multi-passage: the contribution judge (agents/turn_types.py) says which gold chunks give
  something the reference answer uses and no other gold gives (without a reference answer,
  the question stands for it: what it asks of each chunk);
* partial: the alignment judge (agents/judges.py) scores how far the gold answers the
  question (3 partly, 4 with gaps, 5 fully).

Offline, the pool judge's baseline keeps a passage whose lexical support is within 90% of the
best passage judged with it. Synthesis shows it the held-out chunk first, as what answering
looks like; the audit has no held-out chunk (it is out of the corpus), so
:class:`UnansweredPoolJudge`'s baseline measures the pool against the question itself, a passage
holding every term it asks: a pooled chunk answers when it holds nearly all of them. The model
sees only the pooled chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchsmith.agents.judges import AlignmentJudge
from benchsmith.agents.models import ModelSeam
from benchsmith.agents.pool_judge import PassageJudgments, PoolJudge
from benchsmith.agents.text import WordStatistics
from benchsmith.agents.turn_types import ContributionJudge
from benchsmith.history import Exchange


class UnansweredPoolJudge(PoolJudge):
    """The pool judge, whose offline baseline compares each passage with the question itself."""

    def baseline(self, *, history: list[Exchange], question: str, passages: list[str],
                 passage_titles: Sequence[str] | None = None, statistics: WordStatistics | None = None,
                 **_: Any) -> PassageJudgments:
        titles = list(passage_titles) if passage_titles is not None else [""] * len(passages)
        anchored = PoolJudge(len(passages) + 1).baseline(history=history, question=question,
                                                         passages=[question, *passages], passage_titles=["", *titles],
                                                         statistics=statistics)
        return self.schema.model_validate({"judgments": [{**judgment.model_dump(), "passage": judgment.passage - 1}
                                                         for judgment in anchored.judgments[1:]]})


def _relevant(verdict: PassageJudgments, ids: Sequence[str]) -> tuple[list[str], str]:
    """The ids judged relevant, and the rationales of those (else of all), joined."""
    chosen = [judgment for judgment in verdict.judgments if judgment.relevant]
    rationale = " ".join(f"[{ids[judgment.passage - 1]}] {judgment.rationale}"
                         for judgment in (chosen or verdict.judgments))
    return [ids[judgment.passage - 1] for judgment in chosen], rationale


def unanswerable_verdict(seam: ModelSeam, *, history: list[Exchange], question: str, chunks: Sequence[str],
                         texts: Sequence[tuple[str, str]], statistics: WordStatistics | None) -> dict[str, Any]:
    """``{"supporting": [pooled chunk ids that answer], "rationale"}``; ``texts``: each pooled
    chunk's ``(title, text)``."""
    if not chunks:
        return {"supporting": [], "rationale": "The retrievers returned no chunk for the question."}
    supporting, rationale = _judged(seam, UnansweredPoolJudge(len(chunks)), history, question, chunks, texts, statistics)
    return {"supporting": supporting, "rationale": rationale}


def underspecified_verdict(seam: ModelSeam, *, history: list[Exchange], question: str, chunks: Sequence[str],
                           texts: Sequence[tuple[str, str]], statistics: WordStatistics | None) -> dict[str, Any]:
    """``{"fits": [chunk ids the question fits], "rationale"}`` over the candidates (or pooled chunks)."""
    if not chunks:
        return {"fits": [], "rationale": "No candidate chunk to judge."}
    fits, rationale = _judged(seam, PoolJudge(len(chunks)), history, question, chunks, texts, statistics)
    return {"fits": fits, "rationale": rationale}


def _judged(seam: ModelSeam, judge: PoolJudge, history: list[Exchange], question: str, chunks: Sequence[str],
            texts: Sequence[tuple[str, str]], statistics: WordStatistics | None) -> tuple[list[str], str]:
    """The chunks ``judge`` calls relevant to the question, and its rationale."""
    verdict = seam.run(judge, history=history, question=question, passages=[text for _, text in texts],
                       passage_titles=[title for title, _ in texts], statistics=statistics)
    return _relevant(verdict, chunks)


def multi_passage_verdict(seam: ModelSeam, *, question: str, answer: str | None, golds: Sequence[str],
                          texts: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """``{"idle": [gold ids that do not contribute], "rationale"}``."""
    passages = [{"title": title, "text": text} for title, text in texts]
    verdict = seam.run(ContributionJudge(), question=question, answer=answer or question, passages=passages)
    flags = list(verdict.contributes) + [False] * (len(golds) - len(verdict.contributes))  # an unanswered gold: idle
    idle = [gold for gold, contributes in zip(golds, flags) if not contributes]
    against = "the reference answer" if answer else "the question (the benchmark has no answer)"
    return {"idle": idle, "rationale": f"Judged against {against}: "
                                       + (f"no contribution from {', '.join(idle)}." if idle
                                          else "every gold contributes.")}


def partial_verdict(seam: ModelSeam, *, history: list[Exchange], question: str, gold_text: str) -> dict[str, Any]:
    """``{"score": alignment 1-5, "rationale"}`` of the gold (all golds, joined) for the question."""
    verdict = seam.run(AlignmentJudge(), history=history, question=question, document=gold_text)
    return {"score": verdict.score, "rationale": verdict.rationale}
