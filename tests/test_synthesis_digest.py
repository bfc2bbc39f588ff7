"""Seeded synthesis gives the same bytes as before the client's speed-ups (issue 23).

The digests in tests/data/synthesis-digests.json were made on commit d7ce57d, before the model
client's cache, ledger, schema and graph changes: a faster client must not move a byte of any
output of a run. Two runs, each with every turn type: the offline agents, and ``openai:sim``
through the whole client path (HTTP transport, structured output, retries, the workspace's
SQLite response cache and the run's usage ledger) against the loopback server. The model run is
also repeated one conversation at a time and once more answered from the cache alone.

Not digested: run.json (times, versions) and the order of usage.jsonl's lines (the order calls
finish in); the usage ledger's lines are compared as a sorted multiset.

Regenerate (only for a change meant to alter outputs, never for a client change):
``BENCHSMITH_WRITE_DIGESTS=1 pytest tests/test_synthesis_digest.py``.
"""

from __future__ import annotations

import json
import os

import pytest

from benchsmith.stores.persistence.workspace import Workspace
from tests.openai_server import FakeOpenAIServer
from tests.synthesis_digests import DIGESTS, OUTPUTS, digests, stored, synthesize
from tests.turn_type_fixtures import build_rich_collection
from tests.turn_type_replies import typed_server_replier


@pytest.fixture(scope="module")
def runs(tmp_path_factory, monkeypatch_module) -> dict[str, dict[str, str]]:
    root = tmp_path_factory.mktemp("digest")
    workspace = Workspace.resolve(root / "ws")
    build_rich_collection(workspace, root / "corpus", documents=60)
    found = {"offline": digests(synthesize(workspace, "offline", "baseline", concurrency=4))}
    monkeypatch_module.setenv("OPENAI_API_KEY", "sk-test-digest")
    with FakeOpenAIServer(replier=typed_server_replier, keep_alive=True) as server:
        monkeypatch_module.setenv("OPENAI_BASE_URL", server.base_url)
        found["model"] = digests(synthesize(workspace, "model", "openai:sim", concurrency=4))
        requests = len(server.requests)
        # Another workspace: no reply cached, so these calls go to the server too.
        alone = Workspace.resolve(root / "alone" / "ws")
        build_rich_collection(alone, root / "alone" / "corpus", documents=60)
        found["model, one at a time"] = digests(synthesize(alone, "model", "openai:sim", concurrency=1))
        alone_requests = len(server.requests) - requests
        found["model, from the cache"] = digests(
            synthesize(workspace, "cached", "openai:sim", concurrency=4), usage=False
        )
        assert len(server.requests) == requests + alone_requests, "a cached run asked the server"
    assert requests == alone_requests > 0
    return found


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_runs_match_the_digests_made_before_the_client_changes(runs):
    if os.environ.get("BENCHSMITH_WRITE_DIGESTS"):
        DIGESTS.parent.mkdir(exist_ok=True)
        DIGESTS.write_text(
            json.dumps({"offline": runs["offline"], "model": runs["model"]}, indent=2) + "\n", encoding="utf-8"
        )
    expected = stored()
    for kind in ("offline", "model"):
        changed = [name for name, digest in runs[kind].items() if expected[kind].get(name) != digest]
        assert not changed, f"{kind} run: these outputs changed: {changed}"


def test_concurrency_and_the_cache_change_no_output_byte(runs):
    assert runs["model, one at a time"] == runs["model"]
    assert runs["model, from the cache"] == {name: digest for name, digest in runs["model"].items() if name in OUTPUTS}


def test_the_model_run_is_not_the_offline_run(runs):
    """The model's replies reached the outputs: a digest of the offline agents would not pass for it."""
    assert runs["model"]["dialogues.jsonl"] != runs["offline"]["dialogues.jsonl"]
