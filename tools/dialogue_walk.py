"""How a simulated conversation moves through the clustered corpus.

Each turn after the first is a follow-up (same gold chunk, drilling down), a soft switch
(the next chunk on the cluster's semantic path: a related topic) or a hard switch (a chunk
of a distant cluster: a new topic while the old history stays). Users change topic about
every two turns (2.11 in Spink et al. 2002), so by default a turn switches with probability
1/2.11 ≈ 0.47, and ``hard_switch_rate`` of those switches are hard.

Randomness comes from a generator seeded by (seed, conversation, turn): the same run gives
the same conversations whatever the concurrency, and a resumed turn draws what it drew.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

Switch = Literal["start", "follow-up", "soft", "hard"]
DEFAULT_SWITCH_PROBABILITY = round(1 / 2.11, 3)
DEFAULT_HARD_SWITCH_RATE = 0.2


@dataclass(frozen=True)
class SwitchPolicy:
    switch_probability: float = DEFAULT_SWITCH_PROBABILITY
    hard_switch_rate: float = DEFAULT_HARD_SWITCH_RATE

    def __post_init__(self) -> None:
        for name in ("switch_probability", "hard_switch_rate"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be within [0, 1], got {getattr(self, name)}")

    def probabilities(self) -> dict[str, float]:
        switch = self.switch_probability
        return {"follow-up": 1 - switch, "soft": switch * (1 - self.hard_switch_rate), "hard": switch * self.hard_switch_rate}


@dataclass(frozen=True)
class Position:
    cluster: int
    offset: int


def turn_rng(seed: int, conversation_id: str, turn: int, purpose: str) -> random.Random:
    return random.Random(f"{seed}:{conversation_id}:{turn}:{purpose}")


def draw_switch(policy: SwitchPolicy, rng: random.Random) -> Switch:
    draw = rng.random()
    probabilities = policy.probabilities()
    if draw < probabilities["follow-up"]:
        return "follow-up"
    return "soft" if draw < probabilities["follow-up"] + probabilities["soft"] else "hard"


def next_position(clusters: list[list[str]], here: Position, switch: Switch, rng: random.Random) -> Position:
    """Where the gold chunk of the next turn lies."""
    if switch in ("start", "follow-up"):
        return here
    if switch == "soft":
        size = len(clusters[here.cluster])
        if here.offset + 1 < size:
            return Position(here.cluster, here.offset + 1)
        # The cluster's path is exhausted: the path continues into the next cluster.
        return Position((here.cluster + 1) % len(clusters), 0)
    # Hard: a cluster far along the path (between a quarter and three quarters of it away).
    count = len(clusters)
    if count == 1:
        return Position(here.cluster, rng.randrange(len(clusters[0])))
    distance = rng.randint(max(1, count // 4), max(1, (3 * count) // 4))
    target = (here.cluster + distance) % count
    return Position(target, rng.randrange(len(clusters[target])))
