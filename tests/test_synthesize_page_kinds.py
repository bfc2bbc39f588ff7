"""Synthesis draws its conversations from the chunks of the page kinds asked for: by default not
from changelogs (nor index pages); the clustering it walks is stored per set of page kinds."""

import random

import pytest
from typer.testing import CliRunner

from benchsmith.cli import app
from benchsmith.graphs.ingest import IngestContext
from benchsmith.graphs.ingest import builder as ingest_builder
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.jobs.synthesize import cluster
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.clusters import clustering_path, find_clustering
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.vectors import VectorStore, open_client
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.corpus_clusters import cluster_collection
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction
from tests.embedders import HashingEmbedder
from tests.synthesis_fixtures import COLLECTION, TOPICS, synthesize

ALL_KINDS = ("narrative", "api", "changelog", "index")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Workspace:
    """40 one-chunk guide pages and 16 one-chunk release notes (changelog/), on the same topics."""
    root = tmp_path_factory.mktemp("kinds")
    corpus, rng = root / "corpus", random.Random(0)
    (corpus / "changelog").mkdir(parents=True)
    for i in range(56):
        topic = TOPICS[i % len(TOPICS)]
        words = " ".join(f"{topic}{rng.randrange(40)}" for _ in range(30))
        if i < 40:
            (corpus / f"guide{i:03}.txt").write_text(
                f"Guide {i} explains {topic}. To tune {topic}{i}, set the {topic}_limit{i} option in the settings file. "
                f"It covers {words}.",
                encoding="utf-8",
            )
        else:
            (corpus / "changelog" / f"release-1.{i}.txt").write_text(
                f"Version 1.{i} changed {topic}. It fixed {words}.", encoding="utf-8"
            )
    workspace = Workspace.resolve(root / "ws")
    context = IngestContext(workspace=str(workspace.root), embedder=register_embedder(HashingEmbedder()), min_chars=20)
    run_job(
        ingest_builder,
        job="ingest",
        workspace=workspace,
        run_id="ingest",
        inputs={"run_id": "ingest", "sources": [str(corpus)], "collection": COLLECTION},
        context=context,
        settings={},
    )
    return workspace


def changelog_ids(ids) -> set[str]:
    return {chunk_id for chunk_id in ids if chunk_id.startswith("changelog/")}


def test_synthesis_leaves_changelog_chunks_out_of_its_clusters_and_gold_by_default(workspace):
    synthesize(workspace, "default", conversations=6, turns=3)
    clustering = find_clustering(workspace, COLLECTION, 4, 16, 0, ["api", "narrative"])
    walked = [chunk_id for cluster_ids in clustering.clusters for chunk_id in cluster_ids]
    assert len(walked) + len(clustering.dropped) == 40 and not changelog_ids(walked)
    assert clustering_path(workspace, COLLECTION, 4, 16, 0, ["api", "narrative"]).exists()  # keyed by the kinds
    gold = {
        gold_id
        for dialogue in load_jsonl(RunDirectory(workspace, "default").file("dialogues.jsonl"))
        for turn in dialogue["turns"]
        for gold_id in turn["gold_ids"]
    }
    assert gold and not changelog_ids(gold)
    corpus = load_jsonl(RunDirectory(workspace, "default").file("beir") / "corpus.jsonl")
    assert len(changelog_ids(record["_id"] for record in corpus)) == 16  # the benchmark's corpus keeps them


def test_synthesis_draws_from_changelogs_when_asked_and_never_reuses_another_kinds_clustering(workspace):
    synthesize(workspace, "default-first", conversations=2, turns=2)  # the default kinds' clustering exists
    synthesize(workspace, "changelogs", conversations=3, turns=2, page_kinds=("changelog",))
    clustering = find_clustering(workspace, COLLECTION, 4, 16, 0, ["changelog"])
    walked = {chunk_id for cluster_ids in clustering.clusters for chunk_id in cluster_ids}
    assert walked and walked == changelog_ids(walked)
    gold = {
        gold_id
        for dialogue in load_jsonl(RunDirectory(workspace, "changelogs").file("dialogues.jsonl"))
        for turn in dialogue["turns"]
        for gold_id in turn["gold_ids"]
    }
    assert gold == changelog_ids(gold)
    everything = cluster(COLLECTION, size=4, neighbours=16, workspace=workspace.root, page_kinds=ALL_KINDS)
    assert everything.page_kinds is None  # every chunk: stored under the name it had before page kinds
    assert len(changelog_ids(chunk_id for ids in everything.clusters for chunk_id in ids)) > 0


def test_chunks_stored_without_a_page_kind_count_as_narrative(tmp_path):
    workspace = Workspace.resolve(tmp_path / "ws")
    embedder = HashingEmbedder()
    store = VectorStore(open_client(workspace), "old", ChromaEmbeddingFunction(embedder), embedder.name)
    texts = [f"passage {i} about {TOPICS[i % len(TOPICS)]} and more words" for i in range(12)]
    store.upsert(
        [f"p{i}" for i in range(12)], embedder.encode(texts).tolist(), texts, [{"doc_id": f"p{i}"} for i in range(12)]
    )  # ingested before page kinds
    clustered = cluster_collection(workspace, store, size=4, neighbours=4, page_kinds=("narrative", "api"))
    assert sum(map(len, clustered.clusters)) + len(clustered.dropped) == 12
    assert clustered.page_kinds is None  # nothing was left out: the clustering of every chunk serves
    with pytest.raises(InputError, match="no chunk of the page kinds changelog"):
        cluster_collection(workspace, store, size=4, neighbours=4, page_kinds=("changelog",))


def test_an_unknown_page_kind_is_refused_before_any_run(workspace):
    with pytest.raises(InputError, match="'release' is not a page kind"):
        cluster(COLLECTION, workspace=workspace.root, page_kinds=("release",))


def test_the_cli_refuses_an_unknown_page_kind_with_exit_2_and_no_run_record(workspace):
    result = CliRunner().invoke(
        app,
        [
            "synthesize",
            "--collection",
            COLLECTION,
            "--page-kind",
            "release",
            "-w",
            str(workspace.root),
            "--run-id",
            "refused",
        ],
    )
    assert result.exit_code == 2 and "'release' is not a page kind" in result.output
    assert not RunDirectory(workspace, "refused").path.exists()
