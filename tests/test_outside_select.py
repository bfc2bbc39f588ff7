"""`select` refuses the user's own retriever (alone or fused): it judges the text of the chunks its
own chunkings cut, and an outside retriever answers with ids of an index select does not hold.
Refused with exit 2, a message that says why and what to run instead, before any run record and
before the endpoint is asked anything."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import benchsmith
from benchsmith.cli import app
from benchsmith.stores.errors import InputError
from benchsmith.tools.retrieval.outside_retrievers import clear_retrievers
from tests.outside_systems import SearchEndpoint, overlap_search, serving
from tests.select_fixtures import write_labelled_corpus

runner = CliRunner(env={"COLUMNS": "200"})


@pytest.fixture(autouse=True)
def _forget_registered():
    yield
    clear_retrievers()


def test_an_http_retriever_in_select_exits_2_naming_why_and_is_never_asked(tmp_path):
    corpus, queries, _ = write_labelled_corpus(tmp_path / "data")
    endpoint = SearchEndpoint({"a": "a passage"})
    with serving(endpoint) as url:
        arguments = ["select", str(queries), "--corpus", str(corpus), "--retriever", "bm25", "--retriever", url]
        result = runner.invoke(app, [*arguments, "-w", str(tmp_path / "ws")])
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert f"uses your own retriever ({url})" in said
    assert "ids of its own index" in said and f"benchsmith evaluate BENCHMARK --retriever {url}" in said
    assert "Traceback" not in result.output
    assert endpoint.requests == []
    assert not list((tmp_path / "ws" / "runs").glob("*"))  # refused before any run record


def test_a_registered_callable_fused_in_a_space_file_is_refused_by_the_api(tmp_path):
    corpus, queries, _ = write_labelled_corpus(tmp_path / "data")
    documents = {"a": "a passage"}
    benchsmith.register_retriever("shop-search", lambda query, history, k: overlap_search(documents, query, k))
    space = tmp_path / "space.yaml"
    space.write_text("retriever: [bm25, 'hybrid:rrf(bm25,shop-search)']\ntop_k: [5]\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"uses your own retriever \(shop-search\)"):
        benchsmith.select(queries, corpus=[corpus], space=space, workspace=str(tmp_path / "ws"))
    assert not (tmp_path / "ws" / "runs").exists() or not list((tmp_path / "ws" / "runs").glob("*"))
