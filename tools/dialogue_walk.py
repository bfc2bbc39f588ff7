"""How a simulated conversation moves through the clustered corpus.

Each turn after the first is a follow-up (same gold chunk, drilling down), a soft switch
(the next chunk on the cluster's semantic path: a related topic) or a hard switch (a chunk
of a distant cluster: a new topic while the old history stays).

A soft switch must mean what it says: its gold's embedding similarity to the previous gold
must exceed what two random chunks share (the collection's random-pair mean plus a margin of
standard deviations). The path's next chunk is taken when it does; otherwise the most similar
chunk of the neighbourhood (this cluster and the next one on the path) not yet used; when no
chunk clears the bar the turn goes to the path's next chunk and is labelled hard, which is
what it is. Users change topic about
every two turns (2.11 in Spink et al. 2002), so by default a turn switches with probability
1/2.11 ≈ 0.47, and ``hard_switch_rate`` of those switches are hard.

Randomness comes from a generator seeded by (seed, conversation, turn): the same run gives
the same conversations whatever the concurrency, and a resumed turn draws what it drew.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from collections.abc import Callable
from typing import Literal

Switch = Literal["start", "follow-up", "soft", "hard"]
DEFAULT_SWITCH_PROBABILITY = round(1 / 2.11, 3)
DEFAULT_HARD_SWITCH_RATE = 0.2
DEFAULT_SOFT_SWITCH_MARGIN = 1.0  # standard deviations of the random-pair similarity


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


def soft_switch_candidates(clusters: list[list[str]], here: Position, used: set[str]) -> list[Position]:
    """The path's next chunk, then the rest of the neighbourhood (this cluster and the next
    one on the path) in path order, without chunks the conversation already used."""
    path_next = next_position(clusters, here, "soft", random.Random(0))
    neighbourhood = [here.cluster] if len(clusters) == 1 else [here.cluster, (here.cluster + 1) % len(clusters)]
    others = [Position(cluster, offset) for cluster in neighbourhood for offset in range(len(clusters[cluster]))
              if Position(cluster, offset) not in (here, path_next) and clusters[cluster][offset] not in used]
    return [path_next, *others]


def choose_soft_switch(candidates: list[Position], similarity: Callable[[Position], float],
                       threshold: float) -> tuple[Position, Switch]:
    """The first candidate (the path's next chunk) if it is similar enough, else the most
    similar other candidate if that one is; else the path's next chunk, labelled hard."""
    path_next, others = candidates[0], candidates[1:]
    if similarity(path_next) > threshold:
        return path_next, "soft"
    best = max(others, key=similarity, default=None)  # the first of equals: path order
    if best is not None and similarity(best) > threshold:
        return best, "soft"
    return path_next, "hard"
