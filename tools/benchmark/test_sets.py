"""Test sets of a paraphrased benchmark (ECAsT's R1..Rn): each is the benchmark's conversations
with every turn replaced by one of its variants, so a system can be scored on the same
information needs and the same judgments under other phrasings.

Drawing is seeded and reproducible: each turn's variants are put in an order drawn from
``(seed, turn id)``, and test set j takes the j-th of them (cycling when a turn has fewer
variants than test sets), so the test sets use different variants wherever there are enough.
A turn without variants keeps its original phrasing.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

DEFAULT_TEST_SETS = 5


def test_set_names(count: int) -> list[str]:
    return [f"R{number}" for number in range(1, count + 1)]


def draw_test_sets(
    turn_ids: Sequence[str], variants: Mapping[str, Sequence[str]], count: int, seed: int = 0
) -> dict[str, dict[str, str | None]]:
    """``{test set name: {turn id: variant id, or None for the original}}``."""
    orders = {}
    for turn_id in turn_ids:
        choices = sorted(variants.get(turn_id, ()))
        random.Random(f"{seed}:{turn_id}").shuffle(choices)
        orders[turn_id] = choices
    return {
        name: {
            turn_id: (orders[turn_id][index % len(orders[turn_id])] if orders[turn_id] else None)
            for turn_id in turn_ids
        }
        for index, name in enumerate(test_set_names(count))
    }
