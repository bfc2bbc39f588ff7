"""The user's own retrievers in `benchsmith evaluate`: an HTTP search endpoint served by a real web
framework, a LangChain retriever over a store of its own, and a callable, each scored on a
synthesized benchmark exactly as the same retrieval written to a TREC run file and measured by
`evaluate --run`; results outside the corpus counted and named; finished queries never asked again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_community.retrievers import TFIDFRetriever
from langchain_core.documents import Document
from typer.testing import CliRunner

import benchsmith
from benchsmith.cli import app
from benchsmith.graphs.runtime.resources import clear_registry
from benchsmith.stores.formats.beir import load_benchmark
from benchsmith.stores.formats.trec import write_trec_run
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.outside_retrievers import CorpusIds, langchain_searcher, map_to_corpus
from tests.outside_systems import (
    PostgresSearch,
    SearchEndpoint,
    conversation_text,
    corpus_texts,
    load_passages,
    overlap_search,
    serving,
    synthesized_beir,
)

runner = CliRunner(env={"COLUMNS": "200"})
MEASURES = ["nDCG@10", "R@20", "RR@10"]
DEPTH = 20


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory) -> Path:
    """A benchmark synthesized offline from 24 documentation pages: its BEIR folder."""
    return synthesized_beir(tmp_path_factory.mktemp("synthesized"))


@pytest.fixture(autouse=True)
def _forget_registered():
    yield
    clear_registry()


def invoke(*arguments: str):
    return runner.invoke(app, list(arguments))


def measured_run_file(tmp_path: Path, beir: Path, run: dict[str, dict[str, float]], name: str) -> dict:
    """``evaluate --run FILE --qrels QRELS``'s per-query scores of ``run``."""
    path = tmp_path / name
    write_trec_run(path, run, name)
    qrels = beir / "qrels" / "test.tsv"
    args = ["evaluate", "--run", str(path), "--qrels", str(qrels), "--json", str(tmp_path / f"{name}.json")]
    result = invoke(*args, *(flag for measure in MEASURES for flag in ("--measure", measure)))
    assert result.exit_code == 0, result.output
    return json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))["per_query"]


def test_an_http_endpoint_scores_as_its_own_run_file_does(tmp_path, synthesized, monkeypatch):
    monkeypatch.setenv("BENCHSMITH_RETRIEVER_API_KEY", "s3cret-token")
    documents = corpus_texts(synthesized)
    endpoint = SearchEndpoint(documents, fail_every=4)  # every fourth request answers 503 first: retried
    with serving(endpoint) as url:
        workspace = tmp_path / "ws"
        dry = invoke("evaluate", str(synthesized), "--retriever", url, "--history", "raw", "--dry-run",
                     "--workspace", str(workspace))  # fmt: skip
        assert dry.exit_code == 0, dry.output
        assert url in dry.output and "(http) @raw" in dry.output and "builds its own query" in dry.output
        assert not endpoint.requests  # a dry run asks nothing
        result = invoke(
            "evaluate", str(synthesized), "--retriever", url, "--retriever", "bm25", "--history", "raw",
            "--history", "current", "--depth", str(DEPTH), "--workspace", str(workspace), "--run-id", "mine",
            "--json", str(tmp_path / "scores.json"), "--concurrency", "3",
            *(flag for measure in MEASURES for flag in ("--measure", measure)),
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    scores = json.loads((tmp_path / "scores.json").read_text(encoding="utf-8"))["per_query"]
    benchmark = load_benchmark(synthesized, Workspace.resolve(tmp_path / "read"))
    queries = benchmark.queries
    asked = [request for request in endpoint.requests if request["history"]]
    assert asked and all(set(turn) == {"user", "agent"} for request in asked for turn in request["history"])
    # The same retrieval as the user would write it to a run file: raw (question + earlier turns) and current.
    raw = {
        q.id: dict(
            overlap_search(
                documents, conversation_text(q.question, [{"user": u, "agent": a} for u, a in q.history]), DEPTH
            )
        )
        for q in queries
    }
    current = {q.id: dict(overlap_search(documents, q.question, DEPTH)) for q in queries}
    assert any(raw[q.id] != current[q.id] for q in queries)  # the history changes what it finds
    assert scores[f"{url}@raw"] == measured_run_file(tmp_path, synthesized, raw, "raw.trec")
    assert scores[f"{url}@current"] == measured_run_file(tmp_path, synthesized, current, "current.trec")
    assert endpoint.authorizations == {"Bearer s3cret-token"}
    assert "s3cret-token" not in (RunDirectory(Workspace.resolve(workspace), "mine").path / "results.json").read_text()
    failed = len(endpoint.requests) // 4  # every fourth request answered 503, and was asked again
    assert failed and len(endpoint.requests) - failed == 2 * len(queries)  # each query once per mode
    assert set(scores) == {f"{url}@raw", f"{url}@current", "bm25@current"}  # raw is for systems that take history


def test_a_langchain_retriever_over_its_own_store_maps_documents_and_names_strangers(tmp_path, synthesized):
    corpus = load_jsonl(synthesized / "corpus.jsonl")
    # The prototype's store: half its documents carry the corpus id in metadata, half only their text,
    # and two documents the benchmark's corpus does not hold.
    stored = [
        Document(record["text"], metadata={"id": record["_id"]} if position % 2 else {})
        for position, record in enumerate(corpus)
    ]
    strangers = [
        Document(corpus[0]["text"] + " An edited sentence.", metadata={"id": "stranger-1"}),
        Document(corpus[1]["text"] + " Another edit.", metadata={}),
    ]
    retriever = TFIDFRetriever.from_documents(stored + strangers, k=DEPTH)
    result = benchsmith.evaluate(
        synthesized,
        retrievers=[retriever, "bm25"],
        histories=["current"],
        measures=MEASURES,
        depth=DEPTH,
        workspace=str(tmp_path / "ws"),
        run_id="prototype",
    )
    name = "TFIDFRetriever@current"
    assert set(result.aggregate) == {name, "bm25@current"}
    (warning,) = [w for w in result.warnings if w.startswith(name)]
    assert "'stranger-1'" in warning and "'text:" in warning and "not in the corpus" in warning
    assert warning in result.results()["warnings"]
    assert "stranger-1" in result.report["markdown"].read_text(encoding="utf-8")
    # The same retrieval, mapped the documented way, as a run file.
    benchmark = load_benchmark(synthesized, Workspace.resolve(tmp_path / "read"))
    search = langchain_searcher(retriever)
    ids = CorpusIds({r["_id"]: (r["title"], r["text"]) for r in corpus}, lambda title, text: f"{title} {text}".strip())
    run = {q.id: dict(map_to_corpus(search(q.question, [], DEPTH), ids)[0]) for q in benchmark.queries}
    assert result.results()["per_query"][name] == measured_run_file(tmp_path, synthesized, run, "prototype.trec")


def test_a_killed_evaluation_never_asks_a_finished_query_again(tmp_path, synthesized):
    documents = corpus_texts(synthesized)
    asked: list[str] = []

    def my_search(query, history, k):
        asked.append(query)
        if len(asked) == 5 and not flaky["failed"]:
            flaky["failed"] = True
            raise KeyError("the service fell over")  # not transient: the run stops
        return overlap_search(documents, query, k)

    flaky = {"failed": False}
    benchsmith.register_retriever("my-search", my_search)
    options = dict(histories=["current"], measures=MEASURES, depth=DEPTH, workspace=str(tmp_path / "ws"),
                   run_id="killed", concurrency=1, batch_size=2)  # fmt: skip
    with pytest.raises(KeyError):
        benchsmith.evaluate(synthesized, retrievers=["my-search"], **options)
    finished = len(asked) - 1
    resumed = benchsmith.evaluate(synthesized, retrievers=["my-search"], **options)
    queries = load_benchmark(synthesized, Workspace.resolve(tmp_path / "read")).queries
    assert len(asked) == finished + 1 + (len(queries) - finished)  # the failed query again, then the rest
    fresh = benchsmith.evaluate(
        synthesized, retrievers=[lambda q, h, k: overlap_search(documents, q, k)], **{**options, "run_id": "fresh"}
    )
    assert resumed.aggregate["my-search@current"] == fresh.aggregate["<lambda>@current"]


def test_bad_outside_retrievers_stop_before_the_run(tmp_path, synthesized):
    workspace = tmp_path / "ws"
    missing = invoke("evaluate", str(synthesized), "--retriever", "py:no_such_module:search",
                     "--workspace", str(workspace))  # fmt: skip
    assert missing.exit_code == 2 and "cannot import 'no_such_module'" in missing.output
    raw = invoke("evaluate", str(synthesized), "--retriever", "bm25", "--history", "raw",
                 "--workspace", str(workspace))  # fmt: skip
    assert raw.exit_code == 2 and "your own retriever" in raw.output
    secret = invoke("evaluate", str(synthesized), "--retriever", "http://me:hunter2@127.0.0.1:9/search",
                    "--workspace", str(workspace))  # fmt: skip
    assert secret.exit_code == 2 and "keep credentials out of the URL" in secret.output
    assert (
        "hunter2" not in secret.output.partition("error:")[2]
    )  # the message does not repeat it (the headline echoes the command)
    assert not (workspace / "runs").exists() or not any((workspace / "runs").iterdir())


def test_a_langchain_retriever_over_postgresql_full_text_search_scores_as_its_run_file(tmp_path, synthesized, database):
    documents = corpus_texts(synthesized)
    load_passages(database, documents)
    retriever = PostgresSearch(url=database, k=DEPTH)
    benchsmith.register_retriever("pg-fts", retriever)
    result = benchsmith.evaluate(
        synthesized,
        retrievers=["pg-fts"],
        histories=["current"],
        measures=MEASURES,
        depth=DEPTH,
        workspace=str(tmp_path / "ws"),
        run_id="postgres",
    )
    assert not result.warnings  # every document it returns is a corpus passage, mapped by metadata id
    benchmark = load_benchmark(synthesized, Workspace.resolve(tmp_path / "read"))
    run = {
        q.id: {doc.metadata["id"]: float(len(found) - rank) for rank, doc in enumerate(found)}
        for q in benchmark.queries
        for found in [retriever.invoke(q.question)]
    }
    assert any(run.values())
    assert result.results()["per_query"]["pg-fts@current"] == measured_run_file(tmp_path, synthesized, run, "pg.trec")


def test_validate_ranks_an_outside_retriever_beside_ours(tmp_path, synthesized):
    documents = corpus_texts(synthesized)
    labels = tmp_path / "mine.jsonl"
    labels.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"q{number}",
                    "question": " ".join(text.split()[:12]),
                    "gold": [{"chunk_id": doc_id, "document": doc_id.split(":")[0], "evidence": "the passage"}],
                }
            )
            + "\n"
            for number, (doc_id, text) in enumerate(list(documents.items())[:10])
        ),
        encoding="utf-8",
    )

    def my_search(query, history, k):
        return overlap_search(documents, query, k)

    validated = benchsmith.validate(
        synthesized.parent,
        human=labels,
        retrievers=[my_search, "bm25"],
        histories=["current", "full"],
        depth=DEPTH,
        bootstrap=20,
        workspace=str(tmp_path / "ws"),
        run_id="validated",
    )
    rows = validated.results()["configurations"]
    # Your standalone questions are asked as they are: one configuration per retriever on your side.
    assert {row["human_configuration"] for row in rows} == {"my_search@full", "bm25@full"}
    assert {row["name"] for row in rows} == {"my_search@current", "my_search@full", "bm25@current", "bm25@full"}
    assert all(0 <= row["human"] <= 1 and 0 <= row["synthetic"] <= 1 for row in rows)
