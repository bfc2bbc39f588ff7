"""The overlap retry policy of synthesis: how a turn's question is asked again while its lexical
overlap with its gold passage is above ``max_overlap`` or it is ill-formed.

Two loops, one inside the other:

- corrective turns (`ask_with_corrections`): the questioner asks again with the rejected drafts
  and their overlaps fed back, while the last draft is above the limit, at most ``attempts``
  times for one gold passage;
- re-plans (`ask_with_replans`): when a gold passage's drafts stay above the limit, or its
  question is ill-formed, the turn moves to another gold passage (``replan``), up to
  ``replans`` plans beyond the first, and an ill-formed question beyond them up to
  ``form_replans`` re-plans for form (real documentation holds many chunks with nothing a user
  asks: index pages, tables, release notes).

The question kept is the earliest of the best: a well-formed one first, then the lowest overlap.
The policy only calls what it is given (asking, re-planning), so it is deterministic whenever they
are; the synthesis graph's questioner node (graphs/synthesis/conversation.py) runs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

Draft = TypeVar("Draft")
Plan = TypeVar("Plan")

# Re-plans for form a turn takes beyond its overlap re-plans. Offline, a chunk with nothing to ask
# costs nothing to find out (a third of documentation chunks have something the offline questioner
# asks): try more of them before a turn is given up.
FORM_REPLANS = 12
BASELINE_FORM_REPLANS = 40


@dataclass(frozen=True)
class RetryLimits:
    max_overlap: float  # a question above this lexical overlap with its gold is rejected
    replans: int  # other gold passages a rejected question moves to
    form_replans: int  # re-plans an ill-formed question may take (FORM_REPLANS or BASELINE_FORM_REPLANS)


@dataclass(frozen=True)
class KeptQuestion(Generic[Draft, Plan]):
    """The draft kept, the plan it was asked on, and what it took."""

    draft: Draft
    plan: Plan
    overlap: float
    corrections: int  # corrective turns, over every plan tried
    overlap_replans: int  # re-plans made because the overlap stayed above the limit
    form_replans: int  # re-plans made because a question within the limit was ill-formed


def ask_with_corrections(
    ask: Callable[[list[tuple[float, Draft]]], Draft],
    overlap_of: Callable[[Draft], float],
    max_overlap: float,
    attempts: int,
) -> list[tuple[float, Draft]]:
    """``[(overlap, draft)]`` for one gold passage: the first draft, then one per corrective turn
    while the last is above ``max_overlap``, at most ``attempts`` corrections. ``ask`` receives
    the drafts rejected so far (none on the first call)."""
    drafts: list[tuple[float, Draft]] = []
    while True:
        draft = ask(drafts)
        drafts.append((overlap_of(draft), draft))
        if drafts[-1][0] <= max_overlap or len(drafts) - 1 >= attempts:
            return drafts


def ask_with_replans(
    first: Plan,
    ask: Callable[[Plan], list[tuple[bool, float, Draft]]],
    replan: Callable[[list[Plan]], Plan | None],
    limits: RetryLimits,
) -> KeptQuestion[Draft, Plan]:
    """Ask on ``first``, then on the plans ``replan`` gives (it receives the plans tried so far; None:
    none left) while the last draft is rejected and the limits allow. ``ask`` gives a plan's drafts
    as ``[(ill-formed, overlap, draft)]``, corrective turns included."""
    tried: list[Plan] = []
    # (ill-formed, overlap, order, draft, plan): ordered so that min() is the one kept
    drafts: list[tuple[bool, float, int, Draft, Plan]] = []
    corrections = form_replans = overlap_replans = 0
    plan: Plan | None = first
    while plan is not None:
        tried.append(plan)
        asked = ask(plan)
        corrections += len(asked) - 1
        drafts += [
            (ill_formed, overlap, len(drafts) + order, draft, plan)
            for order, (ill_formed, overlap, draft) in enumerate(asked)
        ]
        ill_formed, overlap = drafts[-1][:2]
        if (overlap <= limits.max_overlap and not ill_formed) or (
            len(tried) > limits.replans and (not ill_formed or form_replans >= limits.form_replans)
        ):
            break
        for_form = ill_formed and overlap <= limits.max_overlap
        plan = replan(tried)
        if plan is not None:  # a re-plan made, counted by its reason
            form_replans += for_form
            overlap_replans += not for_form
    _, overlap, _, draft, kept = min(drafts, key=lambda item: item[:3])  # the earliest of the best
    return KeptQuestion(
        draft=draft,
        plan=kept,
        overlap=overlap,
        corrections=corrections,
        overlap_replans=overlap_replans,
        form_replans=form_replans,
    )
