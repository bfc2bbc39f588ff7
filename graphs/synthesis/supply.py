"""How many questions a collection gives the offline questioner: the bound on the distinct turns its benchmark holds.

Each chunk is asked as a conversation's first turn, again with the questions before refused, up to
``per_chunk`` times; a question counts when :func:`~benchsmith.graphs.synthesis.turn_checks.ill_formed_question`
(the audit's form rule and the quality gate's rules that read a question with its passage) passes it. A chunk
with nothing left to ask gives the page-as-a-whole question, which ends its count. A chunk's questions count
once per reply: the same fact in another frame is a repeat. On a tutorial whose prose leans on its examples the
supply is small (typer, test half: 18 chunks of 435, 18 distinct questions), and a benchmark of 20
conversations × 6 turns then repeats and drops turns; the dry run says so before a run is made.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from benchsmith.agents.offline.asking import answer
from benchsmith.agents.questioner import Questioner
from benchsmith.agents.text import WordStatistics
from benchsmith.graphs.synthesis.turn_checks import ill_formed_question
from benchsmith.stores.persistence.vectors import VectorStore
from benchsmith.tools.text.page_kinds import chunk_page_kind

SUPPLY_SAMPLE = 200  # chunks a dry run asks: a few seconds, and a share within about ±7 points (95%)
QUESTIONS_PER_CHUNK = 4  # more than a benchmark asks of one passage, so the count is of what it could ask
FETCH_PAGE = 500  # chunks read from the store at once


@dataclass(frozen=True)
class QuestionSupply:
    """Questions the offline questioner finds in a sample of a collection's chunks, and the whole estimated."""

    chunks: int  # chunks synthesis draws from (of the page kinds asked for)
    asked: int  # chunks of the sample
    with_question: int  # chunks of the sample with at least one passing question
    questions: int  # distinct passing questions in the sample (one per reply of a chunk)

    @property
    def share(self) -> float:
        """The share of chunks with a passing question."""
        return self.with_question / self.asked if self.asked else 0.0

    @property
    def estimated_questions(self) -> int:
        """Distinct passing questions in the whole collection, scaled from the sample."""
        return round(self.questions * self.chunks / self.asked) if self.asked else 0


def chunk_supply(
    gold: dict[str, str], questioner: Questioner, statistics: WordStatistics | None, per_chunk: int
) -> int:
    """The distinct passing first questions of one chunk, of ``per_chunk`` asked: one per reply, since a
    benchmark cuts a turn that gets another's reply on the same gold as a repeat (the same fact in another
    frame: evals/measures/repeated_turns.py)."""
    refused: list[str] = []
    replies: set[str] = set()
    for _ in range(per_chunk):
        try:
            asked = questioner.baseline(gold=gold, history=[], switch="start", corpus_stats=statistics, refused=refused)
        except StopIteration:  # every page-as-a-whole question refused too
            break
        if asked.subject is None and asked.question_type == "summary":
            break  # the page-as-a-whole question: nothing left to ask of this chunk
        if not ill_formed_question(asked.question, False, [gold]):
            replies.add(answer(gold, asked.question) or asked.question)
        refused.append(asked.question)
    return len(replies)


def chunks_of_kinds(store: VectorStore, page_kinds: Collection[str] | None) -> list[str]:
    """The ids of the collection's chunks of ``page_kinds`` (None: all), sorted: those synthesis draws from."""
    return sorted(
        chunk_id
        for page in store.iter_all(include=("metadatas",))
        for chunk_id, metadata in zip(page["ids"], page["metadatas"])
        if page_kinds is None or chunk_page_kind(metadata) in page_kinds
    )


def question_supply(
    store: VectorStore,
    statistics: WordStatistics | None,
    eligible: Sequence[str],
    *,
    sample: int | None = SUPPLY_SAMPLE,
    seed: int = 0,
    per_chunk: int = QUESTIONS_PER_CHUNK,
) -> QuestionSupply:
    """The supply of the ``eligible`` chunks (:func:`chunks_of_kinds`, or what a caller read already), asked of
    ``sample`` of them drawn with ``seed`` (None: every chunk)."""
    drawn = (
        list(eligible) if sample is None or sample >= len(eligible) else random.Random(seed).sample(eligible, sample)
    )
    questioner = Questioner()
    asked = with_question = questions = 0
    for start in range(0, len(drawn), FETCH_PAGE):
        for chunk_id, chunk in store.fetch(drawn[start : start + FETCH_PAGE]).items():
            gold = {"id": chunk_id, "text": chunk["text"], "title": chunk.get("title", "")}
            passing = chunk_supply(gold, questioner, statistics, per_chunk)
            asked, with_question, questions = asked + 1, with_question + (passing > 0), questions + passing
    return QuestionSupply(chunks=len(eligible), asked=asked, with_question=with_question, questions=questions)
