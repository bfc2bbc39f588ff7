"""Re-planned turns land on the conversation's own share of the chunks (graphs/synthesis/turn_plans.py
``share_plan``): conversations that run at once and re-plan away from chunks with nothing to ask do not all
come to the same few chunks and ask them the same questions."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from benchsmith.graphs.synthesis import turn_plans
from benchsmith.graphs.synthesis.turn_plans import share_of, share_plan

CLUSTERS = [[f"page{cluster}.html:{offset}" for offset in range(6)] for cluster in range(5)]


@pytest.fixture
def walk(monkeypatch):
    """A collection of five clusters on five pages whose chunks are all alike (every move is a soft switch)."""
    monkeypatch.setattr(turn_plans, "walked_clusters", lambda runtime, state: CLUSTERS)
    monkeypatch.setattr(turn_plans, "_reserved", lambda runtime, state: {})
    monkeypatch.setattr(
        turn_plans, "job", SimpleNamespace(context=lambda runtime: SimpleNamespace(seed=0, soft_switch_margin=1.0))
    )
    monkeypatch.setattr(
        turn_plans, "corpus_stats", lambda runtime, collection: SimpleNamespace(similarity_threshold=lambda margin: 0.5)
    )
    monkeypatch.setattr(
        turn_plans, "embeddings_of", lambda runtime, collection, ids: {chunk: np.ones(4) / 2 for chunk in ids}
    )
    monkeypatch.setattr(turn_plans, "document_of", lambda runtime, collection, chunk: chunk.split(":")[0])


def _state(number: int, conversations: int, **extra) -> dict:
    return {
        "collection": "docs",
        "conversation_id": f"c{number:04d}",
        "cluster_id": 0,
        "share": [number, conversations],
        "position": {"cluster": 0, "offset": 0},
        "turns": [{"gold_ids": [CLUSTERS[0][0]]}],
        **extra,
    }


def test_conversations_that_re_plan_from_one_chunk_land_on_chunks_of_their_own_shares(walk):
    landed = {number: share_plan(None, _state(number, 3), "soft", frozenset()) for number in range(3)}
    assert len({plan["gold_id"] for plan in landed.values()}) == 3  # three conversations, three chunks
    for number, plan in landed.items():
        assert share_of(0, plan["gold_id"], 3) == number
        assert plan["switch"] == "soft" and plan["switch_drawn"] == "soft"  # labelled by the rule, as the walker does


def test_a_used_up_share_gives_way_to_the_next_and_a_dropped_turns_chunk_is_not_planned_again(walk):
    own = [chunk for cluster in CLUSTERS for chunk in cluster if share_of(0, chunk, 3) == 1]
    plan = share_plan(None, _state(1, 3), "soft", frozenset(own))
    assert share_of(0, plan["gold_id"], 3) == 2
    first = share_plan(None, _state(1, 3), "soft", frozenset())["gold_id"]
    dropped = share_plan(None, _state(1, 3, dropped_turns=[{"gold_ids": [first]}]), "soft", frozenset())
    assert dropped["gold_id"] != first and share_of(0, dropped["gold_id"], 3) == 1


def test_a_conversation_on_its_own_has_no_share():
    assert (
        share_plan(None, {"collection": "docs", "conversation_id": "thread", "turns": []}, "soft", frozenset()) is None
    )
