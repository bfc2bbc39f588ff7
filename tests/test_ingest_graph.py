import json
import random
from pathlib import Path

import pytest

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.vectors import VectorStore, open_client
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction
from tests.embedders import HashingEmbedder
from tests.ingest_fixtures import TOPICS, ingest, write_corpus


def collection_ids(workspace: Workspace, embedder: HashingEmbedder) -> list[str]:
    store = VectorStore(open_client(workspace), "docs", ChromaEmbeddingFunction(embedder), embedder.name)
    return store.collection.get(include=[])["ids"]


@pytest.fixture
def workspace(tmp_path) -> Workspace:
    return Workspace.resolve(tmp_path / "ws")


def test_ingest_indexes_every_kept_chunk_with_metadata(workspace, tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    embedder = HashingEmbedder()
    values = ingest(workspace, "r1", [str(corpus)], embedder).values
    kept = load_jsonl(RunDirectory(workspace, "r1").file("kept.jsonl"))
    assert values["files_read"] == 24 and values["indexed"] == len(kept) == values["collection_count"]
    assert values["chunks"] == values["indexed"] + values["duplicates"] + values["filtered"]
    assert (
        set(values["stage_seconds"])
        == set(values["stage_cpu_seconds"])
        == {"load", "clean", "chunk", "dedup", "quality", "embed"}
    )
    store = VectorStore(open_client(workspace), "docs", ChromaEmbeddingFunction(embedder), embedder.name)
    stored = store.collection.get(ids=[kept[0]["id"]], include=["metadatas", "documents"])
    assert stored["documents"] == [kept[0]["text"]]
    assert {"source", "title", "position", "start", "end"} <= set(stored["metadatas"][0])


def test_ingesting_the_same_sources_twice_leaves_the_collection_unchanged(workspace, tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    embedder = HashingEmbedder()
    first = ingest(workspace, "first", [str(corpus)], embedder).values
    embedded_once = embedder.texts_embedded
    second = ingest(workspace, "second", [str(corpus)], embedder).values
    assert second["collection_count"] == first["collection_count"] == len(collection_ids(workspace, embedder))
    assert second["newly_embedded"] == 0 and embedder.texts_embedded == embedded_once


def test_re_ingesting_a_changed_file_stores_its_new_text_under_the_same_span_id(workspace, tmp_path):
    """An id names a span of a file: after an edit that keeps a span's bounds, the id is the same
    and its text is not, and the collection must hold the new text, not skip the id as stored."""
    corpus = write_corpus(tmp_path / "corpus")
    embedder = HashingEmbedder()
    ingest(workspace, "before", [str(corpus)], embedder)
    page = corpus / "doc00.md"
    original = page.read_text(encoding="utf-8")
    edited = original.replace("retrieval", "retrievaX").replace("embedding", "embeddinX")
    assert edited != original and len(edited) == len(original)
    page.write_text(edited, encoding="utf-8")
    values = ingest(workspace, "after", [str(corpus)], embedder).values
    kept = {
        chunk["id"]: chunk["text"]
        for chunk in load_jsonl(RunDirectory(workspace, "after").file("kept.jsonl"))
        if chunk["id"].startswith("doc00.md:")
    }
    before = {chunk["id"] for chunk in load_jsonl(RunDirectory(workspace, "before").file("kept.jsonl"))}
    assert kept and set(kept) <= before  # the same span ids
    store = VectorStore(open_client(workspace), "docs", ChromaEmbeddingFunction(embedder), embedder.name)
    stored = store.collection.get(ids=list(kept), include=["documents"])
    assert dict(zip(stored["ids"], stored["documents"])) == kept
    assert values["newly_embedded"] == len(kept)  # only the changed file's chunks were embedded again


def test_a_crash_during_embedding_resumes_without_duplicates_or_re_embedding(workspace, tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    failing = HashingEmbedder(fail_on_call=3)  # batches 1 and 2 are stored, batch 3 raises
    with pytest.raises(RuntimeError, match="injected embedding failure on batch 3"):
        ingest(workspace, "crash", [str(corpus)], failing)
    run_dir = RunDirectory(workspace, "crash")
    assert run_dir.load().status == "crashed"
    stored_before = len(collection_ids(workspace, failing))
    assert stored_before == 2 * 8

    resumed_embedder = HashingEmbedder()
    outcome = ingest(workspace, "crash", [str(corpus)], resumed_embedder)
    kept = load_jsonl(run_dir.file("kept.jsonl"))
    ids = collection_ids(workspace, resumed_embedder)
    assert outcome.resumed and run_dir.load().status == "finished"
    assert sorted(ids) == sorted(chunk["id"] for chunk in kept)  # every chunk once, none twice
    assert resumed_embedder.texts_embedded == len(kept) - stored_before  # stored chunks not re-embedded
    assert outcome.values["newly_embedded"] == len(kept) - stored_before


def test_a_finished_run_is_reported_not_redone(workspace, tmp_path):
    corpus = write_corpus(tmp_path / "corpus", documents=6)
    ingest(workspace, "done", [str(corpus)], HashingEmbedder())
    again = HashingEmbedder()
    outcome = ingest(workspace, "done", [str(corpus)], again)
    assert outcome.already_finished and again.calls == 0
    assert outcome.values["indexed"] > 0


def test_resuming_with_other_settings_is_refused(workspace, tmp_path):
    corpus = write_corpus(tmp_path / "corpus", documents=6)
    ingest(workspace, "r", [str(corpus)], HashingEmbedder(), min_quality=0.5)
    with pytest.raises(InputError, match=r"min_quality: 0.5 → 0.9"):
        ingest(workspace, "r", [str(corpus)], HashingEmbedder(), min_quality=0.9)


def test_bad_input_keeps_what_was_indexed(workspace, tmp_path):
    corpus = write_corpus(tmp_path / "corpus", documents=6)
    embedder = HashingEmbedder()
    count = ingest(workspace, "good", [str(corpus)], embedder).values["collection_count"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"_id": "x", "text": "fine"}\n{oops\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.jsonl:2"):
        ingest(workspace, "bad", [str(bad)], embedder)
    assert len(collection_ids(workspace, embedder)) == count
    assert not RunDirectory(workspace, "bad").exists()  # found by its first step: no run record was left


def test_checkpointed_state_holds_counts_not_chunks(workspace, tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    values = ingest(workspace, "small", [str(corpus)], HashingEmbedder()).values
    assert values
    assert all(not isinstance(value, list) or key == "sources" for key, value in values.items())


def test_llm_quality_scorer_through_the_seam_filters_pays_once_and_keeps_no_key(workspace, tmp_path, monkeypatch):
    from tests.openai_server import FakeOpenAIServer

    secret = "sk-test-ingest-NEVER-WRITTEN-77"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    rng = random.Random(5)
    for i in range(8):
        marker = "SPAMSPAM " if i % 4 == 0 else ""
        words = " ".join(rng.choice(TOPICS) + str(rng.randrange(1000)) for _ in range(20))
        (corpus / f"d{i}.txt").write_text(f"{marker}Passage {i} talks about {words}.", encoding="utf-8")
    prices = tmp_path / "prices.json"

    def judge(request: dict) -> dict:
        prompt = request["messages"][-1]["content"]
        return {
            "rationale": "spam" if "SPAMSPAM" in prompt else "informative",
            "score": 1 if "SPAMSPAM" in prompt else 5,
        }

    with FakeOpenAIServer(replier=judge) as server:
        # Priced on this endpoint: a top-level model name prices OpenAI's own endpoint only.
        prices.write_text(json.dumps({server.base_url: {"judge": {"input": 1.0, "output": 2.0}}}), encoding="utf-8")
        monkeypatch.setenv("OPENAI_API_KEY", secret)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("BENCHSMITH_PRICES", str(prices))
        values = ingest(workspace, "llm", [str(corpus)], HashingEmbedder(), quality="llm", llm="openai:judge").values
        requests_first = len(server.requests)
        again = ingest(
            workspace, "llm-again", [str(corpus)], HashingEmbedder(), quality="llm", llm="openai:judge"
        ).values

    assert values["filtered"] == 2 and values["indexed"] == 6
    assert requests_first == 8 and len(server.requests) == 8  # the second run is served from the cache
    assert again["filtered"] == 2
    first_usage = RunDirectory(workspace, "llm").usage.totals()
    assert first_usage["calls"] == 8 and first_usage["cached_calls"] == 0 and first_usage["input_tokens"] > 0
    assert first_usage["cost_usd"] == pytest.approx(
        (first_usage["input_tokens"] + 2 * first_usage["output_tokens"]) / 1e6
    )
    assert RunDirectory(workspace, "llm-again").usage.totals()["cached_calls"] == 8
    for path in workspace.root.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_ingest_into_a_chroma_server(workspace, tmp_path):
    """--chroma-host: the same ingestion against a real Chroma server (the `chroma run` CLI)."""
    import shutil
    import sys

    from tests.local_servers import free_port, local_server

    chroma = shutil.which("chroma", path=str(Path(sys.executable).parent))
    if chroma is None:
        pytest.skip("the chroma command is not installed")
    port = free_port()
    command = [chroma, "run", "--path", str(tmp_path / "server-data"), "--host", "127.0.0.1", "--port", str(port)]
    with local_server(command, "/api/v2/heartbeat", port):
        corpus = write_corpus(tmp_path / "corpus", documents=6)
        embedder = HashingEmbedder()
        values = ingest(workspace, "remote", [str(corpus)], embedder, chroma_host=f"127.0.0.1:{port}").values
        remote = VectorStore(
            open_client(workspace, f"127.0.0.1:{port}"), "docs", ChromaEmbeddingFunction(embedder), embedder.name
        )
        assert values["indexed"] > 0 and remote.count() == values["indexed"]
        assert not workspace.chroma_dir.exists()  # nothing went to the embedded store
