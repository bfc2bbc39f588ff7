"""Candidate pools for the discriminability test (MTR-Eval): the gold document among hard
negatives, in an order that is recorded and balanced.

Hard negatives are the best-ranked documents of several retrievers (BM25 and dense) that are
not judged relevant, taken round-robin so that each retriever contributes its hardest.
Where the gold document is shown is balanced across instances: instances are put in a
seeded random order and the i-th gets the gold at slot i mod pool size, so every slot holds
the gold equally often (within one) and a judge's position bias cannot pass for accuracy.
The negatives fill the other slots in a seeded random order. The position-bias check shows
the same pool rotated by half its size, so every document moves.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence


def hard_negatives(rankings: Sequence[Sequence[str]], exclude: Collection[str], count: int) -> list[str]:
    """Up to ``count`` documents, round-robin over ``rankings`` (each best first), skipping
    ``exclude`` (the judged-relevant ones) and repeats."""
    chosen: list[str] = []
    seen = set(exclude)
    for depth in range(max((len(ranking) for ranking in rankings), default=0)):
        for ranking in rankings:
            if depth < len(ranking) and ranking[depth] not in seen:
                seen.add(ranking[depth])
                chosen.append(ranking[depth])
                if len(chosen) == count:
                    return chosen
    return chosen


def balanced_gold_slots(instance_ids: Sequence[str], pool_size: int, seed: int) -> dict[str, int]:
    """``{instance id: 0-based slot of the gold}``, each slot used equally often (within one)."""
    order = sorted(instance_ids)
    random.Random(f"{seed}:gold-slots").shuffle(order)
    return {instance_id: index % pool_size for index, instance_id in enumerate(order)}


def arrange_pool(instance_id: str, gold_id: str, negatives: Sequence[str], gold_slot: int, seed: int) -> list[str]:
    """The pool as shown: the negatives in a seeded order with the gold inserted at its slot."""
    shuffled = list(negatives)
    random.Random(f"{seed}:{instance_id}:pool").shuffle(shuffled)
    shuffled.insert(min(gold_slot, len(shuffled)), gold_id)
    return shuffled


def rotated(pool: Sequence[str]) -> list[str]:
    """The pool rotated by half its size (at least one): every document changes slot."""
    shift = max(1, len(pool) // 2)
    return list(pool[shift:]) + list(pool[:shift])
