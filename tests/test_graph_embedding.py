"""The graphs as an app embeds them: the module-level copies run with no context, the
conversation graph returns and streams its turns under the app's own checkpointer, and a
changed input under an existing id is refused."""

import asyncio
import uuid

import pytest
from langgraph.checkpoint.memory import MemorySaver

from benchsmith.graphs.runtime.resources import register_model
from benchsmith.graphs.synthesis.conversation import conversation_builder, conversation_graph
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.clusters import find_clustering
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.benchmark.dialogue_walk import turn_rng
from tests.synthesis_fixtures import COLLECTION, build_collection, scripted_seam


@pytest.fixture(scope="module")
def clustered(tmp_path_factory) -> Workspace:
    from benchsmith.jobs.synthesize import _store
    from benchsmith.tools.corpus.corpus_clusters import cluster_collection

    root = tmp_path_factory.mktemp("embedding")
    workspace = Workspace.resolve(root / "ws")
    build_collection(workspace, root / "corpus")
    cluster_collection(workspace, _store(workspace, COLLECTION, None))
    return workspace


def test_conversation_graph_runs_with_no_context_and_returns_its_turns(clustered, monkeypatch):
    monkeypatch.setenv("BENCHSMITH_WORKSPACE", str(clustered.root))
    result = conversation_graph.invoke(
        {"collection": COLLECTION, "conversation_id": "app-1", "cluster_id": 2, "turns_wanted": 4}
    )
    assert result["conversation_id"] == "app-1" and result["cluster_id"] == 2
    assert [turn["index"] for turn in result["turns"]] == [0, 1, 2, 3]
    clusters = find_clustering(clustered, COLLECTION, 8, 16, 0, None).clusters
    # the walk starts at cluster 2; a cluster whose chunks the questioner all refuses (here cluster 2's
    # parameter lists, whose questions copy the passage) gives way to the other clusters, in an order drawn
    # for the conversation (conversations planned on neighbouring clusters would otherwise open alike)
    others = [cluster for cluster in range(len(clusters)) if cluster != 2]
    turn_rng(0, "app-1", 0, "start").shuffle(others)
    opened = result["turns"][0]["gold_ids"][0]
    assert opened in clusters[2] + clusters[others[0]] and result["turns"][0]["switch"] == "start"
    # Nothing was written into a run: the app owns the output.
    assert not (clustered.runs_dir / "conversations" / "dialogues.jsonl").exists()


def test_conversation_over_given_chunks_streams_one_update_per_turn_with_the_apps_checkpointer(clustered):
    seam, backend = scripted_seam()
    llm = register_model("app-model", seam)
    chunks = find_clustering(clustered, COLLECTION, 8, 16, 0, None).clusters[0][:3]
    app = conversation_builder.compile(checkpointer=MemorySaver())
    config = {"configurable": {"thread_id": "thread-1"}}
    context = {"workspace": str(clustered.root), "llm": llm}
    turn_updates = [
        update["polisher"]["turns"]
        for update in app.stream(
            {"collection": COLLECTION, "conversation_id": "c-1", "chunk_ids": chunks, "turns_wanted": 3},
            config,
            context=context,
            stream_mode="updates",
        )
        if "polisher" in update
    ]
    assert [[turn["index"] for turn in update] for update in turn_updates] == [[0], [1], [2]]
    assert all(turn["gold_ids"][0] in chunks for update in turn_updates for turn in update)
    finished = app.get_state(config).values
    assert [turn["index"] for turn in finished["turns"]] == [0, 1, 2]
    # the model seam the app registered did the work: 3 calls a turn, one fewer for the first, and more
    # where the quality gate asked a turn again on its reading model's flag, or a question above the overlap
    # bound was asked again
    asked_again = any(
        turn.get("gate_replaced") or turn.get("gate_flags") or turn.get("overlap_corrections")
        for turn in finished["turns"]
    )
    assert len(backend.calls) > 3 * 3 - 1 if asked_again else len(backend.calls) == 3 * 3 - 1
    calls = len(backend.calls)

    # The same input again: already finished, nothing is redone.
    again = app.invoke(
        {"collection": COLLECTION, "conversation_id": "c-1", "chunk_ids": chunks, "turns_wanted": 3},
        config,
        context=context,
    )
    assert len(again["turns"]) == 3 and len(backend.calls) == calls
    # Another input under the same thread is refused, never silently mixed in.
    with pytest.raises(InputError, match="changed input"):
        app.invoke(
            {"collection": COLLECTION, "conversation_id": "c-1", "chunk_ids": chunks[:2], "turns_wanted": 3},
            config,
            context=context,
        )


def test_conversation_graph_streams_asynchronously(clustered):
    app = conversation_builder.compile(checkpointer=MemorySaver())
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}

    async def turns() -> list[int]:
        seen = []
        async for update in app.astream(
            {"collection": COLLECTION, "conversation_id": "async", "cluster_id": 1, "turns_wanted": 2},
            config,
            context={"workspace": str(clustered.root)},
            stream_mode="updates",
        ):
            seen += [turn["index"] for turn in update.get("polisher", {}).get("turns", [])]
        return seen

    assert asyncio.run(turns()) == [0, 1]


def test_a_conversation_needs_a_cluster_or_chunks(clustered):
    with pytest.raises(InputError, match="either cluster_id or chunk_ids"):
        conversation_graph.invoke(
            {"collection": COLLECTION, "conversation_id": "x"}, context={"workspace": str(clustered.root)}
        )
    with pytest.raises(InputError, match="no cluster 999"):
        conversation_graph.invoke(
            {"collection": COLLECTION, "conversation_id": "x", "cluster_id": 999},
            context={"workspace": str(clustered.root)},
        )
