"""How a simulated conversation moves through the clustered corpus.

Each turn after the first is a follow-up (same gold chunk, drilling down), a soft switch
(the next chunk on the cluster's semantic path: a related topic) or a hard switch (a chunk
of a distant cluster: a new topic while the old history stays).

Labels follow one rule, both ways (:func:`switch_label`): with θ the soft-switch threshold (the
collection's random-pair similarity mean plus a margin of standard deviations), a turn is

* soft  when its gold's embedding similarity to the previous gold is ≥ θ;
* hard  when that similarity is < θ AND its gold lies in another document (page) than the
  previous gold;
* a follow-up when it stays on the previous gold.

A drawn soft switch takes the path's next chunk when it clears θ, else the most similar chunk
of the neighbourhood (this cluster and the next one on the path) not yet used. A drawn hard
switch draws a chunk of a distant cluster, re-drawn (at most ``HARD_SWITCH_DRAWS`` draws) while
the chunk is too similar or on the previous gold's page. When the drawn kind finds no chunk,
the other kind is tried (a failed soft switch first tries the path's next chunk as a hard
one), and when neither finds one the turn stays on its gold as a follow-up: a label never
contradicts the rule (:func:`choose_switch`). Users change topic about
every two turns (2.11 in Spink et al. 2002), so by default a turn switches with probability
1/2.11 ≈ 0.47, and ``hard_switch_rate`` of those switches are hard.

Randomness comes from a generator seeded by (seed, conversation, turn): the same run gives
the same conversations whatever the concurrency, and a resumed turn draws what it drew.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Literal

Switch = Literal["start", "follow-up", "soft", "hard"]
DEFAULT_SWITCH_PROBABILITY = round(1 / 2.11, 3)
DEFAULT_HARD_SWITCH_RATE = 0.2
DEFAULT_SOFT_SWITCH_MARGIN = 1.0  # standard deviations of the random-pair similarity
HARD_SWITCH_DRAWS = 8  # draws of a distant chunk before a hard switch gives up on the rule


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
        return {
            "follow-up": 1 - switch,
            "soft": switch * (1 - self.hard_switch_rate),
            "hard": switch * self.hard_switch_rate,
        }


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


def soft_switch_candidates(clusters: list[list[str]], here: Position, used: AbstractSet[str]) -> list[Position]:
    """The path's next chunk, then the rest of the neighbourhood (this cluster and the next
    one on the path) in path order, without chunks the conversation already used."""
    path_next = next_position(clusters, here, "soft", random.Random(0))
    neighbourhood = [here.cluster] if len(clusters) == 1 else [here.cluster, (here.cluster + 1) % len(clusters)]
    others = [
        Position(cluster, offset)
        for cluster in neighbourhood
        for offset in range(len(clusters[cluster]))
        if Position(cluster, offset) not in (here, path_next) and clusters[cluster][offset] not in used
    ]
    return [path_next, *others]


def choose_soft_switch(
    candidates: list[Position], similarity: Callable[[Position], float], threshold: float
) -> tuple[Position, Switch]:
    """The first candidate (the path's next chunk) if it is similar enough (≥ ``threshold``),
    else the most similar other candidate if that one is; else the path's next chunk, labelled
    hard (:func:`choose_switch` checks that label against the rule)."""
    path_next, others = candidates[0], candidates[1:]
    if similarity(path_next) >= threshold:
        return path_next, "soft"
    best = max(others, key=similarity, default=None)  # the first of equals: path order
    if best is not None and similarity(best) >= threshold:
        return best, "soft"
    return path_next, "hard"


def switch_label(similarity: float, threshold: float, same_document: bool) -> Switch | None:
    """The label the rule gives a move to another chunk: soft at similarity ≥ θ, hard below θ on
    another document; None for a dissimilar chunk of the same document (neither)."""
    if similarity >= threshold:
        return "soft"
    return None if same_document else "hard"


def choose_switch(
    clusters: list[list[str]],
    here: Position,
    drawn: Switch,
    *,
    similarity: Callable[[Position], float],
    same_document: Callable[[Position], bool],
    threshold: float,
    rng: random.Random,
    used: AbstractSet[str] = frozenset(),
    excluded: AbstractSet[str] = frozenset(),
    draws: int = HARD_SWITCH_DRAWS,
) -> tuple[Position, Switch] | None:
    """Where the next turn's gold lies and its label, which always agrees with
    :func:`switch_label` (the module's docstring). ``excluded`` chunks are never chosen (a
    re-planned turn excludes the golds it tried); a drawn follow-up whose gold is excluded
    moves on as a soft switch would, and None says that no chunk fits. ``rng`` draws the hard
    switch's distant chunks."""
    stay = clusters[here.cluster][here.offset]
    if drawn == "follow-up" and stay not in excluded:
        return here, "follow-up"

    def allowed(position: Position) -> bool:
        return position != here and clusters[position.cluster][position.offset] not in excluded

    def soft() -> Position | None:
        candidates = [c for c in soft_switch_candidates(clusters, here, used) if allowed(c)]
        if not candidates:
            return None
        position, label = choose_soft_switch(candidates, similarity, threshold)
        return position if label == "soft" else None

    def hard(first: list[Position]) -> Position | None:
        drawn_positions = [*first, *(next_position(clusters, here, "hard", rng) for _ in range(draws))]
        return next(
            (
                p
                for p in drawn_positions
                if allowed(p) and switch_label(similarity(p), threshold, same_document(p)) == "hard"
            ),
            None,
        )

    if drawn == "hard":
        if (position := hard([])) is not None:
            return position, "hard"
        if (position := soft()) is not None:
            return position, "soft"
    else:  # soft, or a follow-up that cannot stay
        if (position := soft()) is not None:
            return position, "soft"
        path_next = next_position(clusters, here, "soft", rng)  # no randomness: the path's next chunk
        if (position := hard([path_next])) is not None:
            return position, "hard"
    return None if stay in excluded else (here, "follow-up")


# ---------------------------------------------------------------------------------------
# Turn types (issue 22): besides the switch, each turn draws what kind of question it is.
#
# * answerable: today's turn, one gold chunk;
# * unanswerable: about a chunk of the cluster held out of the benchmark's corpus, no gold;
# * partial: needs a held-out chunk and an available one, whose gold is the available one;
# * underspecified: fits two chunks of the cluster, no gold; the reference reply asks back and
#   the next turn (a clarification, not drawn) says which chunk the user meant;
# * multi-passage: needs two or three chunks of the cluster together, all gold.
#
# A turn's kind is drawn apart from the switch (:func:`turn_kind_position`), so the switches a
# run draws do not change when these rates do, and with every rate 0 no draw changes anything.

TurnKind = Literal["answerable", "unanswerable", "partial", "underspecified", "multi-passage"]
DRAWN_KINDS: tuple[TurnKind, ...] = ("unanswerable", "partial", "underspecified", "multi-passage")
# MTRAG's question types (IBM, 2025), less "opinion", which documentation does not answer.
QUESTION_TYPES = ("factoid", "explanation", "comparison", "how-to", "yes/no", "summary", "keyword")
DEMO_QUESTION_TYPES = "factoid=0.3,explanation=0.15,how-to=0.15,yes/no=0.1,comparison=0.1,summary=0.1,keyword=0.1"
MULTI_GOLD_SIZES = (2, 3)  # chunks a multi-passage question needs together


@dataclass(frozen=True)
class TurnKindPolicy:
    unanswerable_rate: float = 0.0
    partial_rate: float = 0.0
    underspecified_rate: float = 0.0
    multi_gold_rate: float = 0.0

    def __post_init__(self) -> None:
        rates = self.rates()
        if any(not 0.0 <= rate <= 1.0 for rate in rates.values()) or sum(rates.values()) > 1.0 + 1e-9:
            raise ValueError(
                "the unanswerable, partial, underspecified and multi-gold rates must each be within "
                f"[0, 1] and add up to at most 1, got {rates}"
            )

    def rates(self) -> dict[TurnKind, float]:
        return dict(
            zip(
                DRAWN_KINDS, (self.unanswerable_rate, self.partial_rate, self.underspecified_rate, self.multi_gold_rate)
            )
        )

    @property
    def holds_out(self) -> bool:
        """Whether turns may ask about held-out chunks (then one chunk per cluster is reserved)."""
        return self.unanswerable_rate > 0 or self.partial_rate > 0


GOLDEN_RATIO_STEP = (5**0.5 - 1) / 2


def turn_kind_position(seed: int, conversation_id: str, turn: int) -> float:
    """Where turn ``turn`` of a conversation falls in [0, 1) for its type's draw: a random start
    per conversation, then steps of the golden ratio (a Weyl sequence). The positions of a
    conversation spread evenly, so a run's shares of each type stay close to the rates (over 200
    turns of 20 conversations, within 5 points for 199 of 200 seeds, against 166 for independent
    draws), and each is still a function of (seed, conversation, turn) alone."""
    start = random.Random(f"{seed}:{conversation_id}:turn-type").random()
    return (start + turn * GOLDEN_RATIO_STEP) % 1.0


def draw_turn_kind(policy: TurnKindPolicy, position: float) -> TurnKind:
    """The type at ``position`` (:func:`turn_kind_position`): the rates laid end to end."""
    draw, cumulative = position, 0.0
    for kind, rate in policy.rates().items():
        cumulative += rate
        if draw < cumulative:
            return kind
    return "answerable"


def parse_question_types(text: str) -> dict[str, float]:
    """``"factoid=0.3,how-to=0.2"`` → the mix, normalised to sum 1; empty: no type is asked for
    (each question is labelled by its wording). ValueError names the part that is wrong."""
    mix: dict[str, float] = {}
    for part in (piece.strip() for piece in text.split(",")):
        if not part:
            continue
        name, _, weight = part.partition("=")
        name = name.strip().lower()
        if name not in QUESTION_TYPES:
            raise ValueError(f"unknown question type {name!r} in {text!r}: use {', '.join(QUESTION_TYPES)}")
        try:
            mix[name] = float(weight) if weight.strip() else 1.0
        except ValueError:
            raise ValueError(f"question type {name!r}: weight {weight!r} is not a number") from None
        if mix[name] < 0:
            raise ValueError(f"question type {name!r}: weight {mix[name]} is negative")
    total = sum(mix.values())
    if mix and total <= 0:
        raise ValueError(f"the question type weights in {text!r} add up to 0")
    return {name: weight / total for name, weight in mix.items() if weight > 0}


def draw_question_type(mix: dict[str, float], rng: random.Random) -> str | None:
    if not mix:
        return None
    draw, cumulative = rng.random(), 0.0
    for name, share in mix.items():
        cumulative += share
        if draw < cumulative:
            return name
    return next(reversed(mix))


def reserved_chunks(clusters: list[list[str]], seed: int) -> dict[int, str]:
    """The chunk of each cluster that turns may hold out ({cluster: chunk id}): drawn once per
    (seed, cluster), never any turn's gold, so a held-out chunk is gold of no conversation,
    whichever conversations ran. A cluster of one chunk reserves none."""
    return {
        index: cluster[random.Random(f"{seed}:held-out:{index}").randrange(len(cluster))]
        for index, cluster in enumerate(clusters)
        if len(cluster) > 1
    }


def companion_chunks(cluster: list[str], gold: str, count: int, excluded: set[str] | frozenset[str]) -> list[str]:
    """Up to ``count`` other chunks of the gold's cluster, following the gold along the path
    (wrapping round): the chunks an underspecified or multi-passage question pairs with it."""
    start = cluster.index(gold) if gold in cluster else 0
    ordered = cluster[start + 1 :] + cluster[:start]
    return [chunk for chunk in ordered if chunk != gold and chunk not in excluded][:count]
