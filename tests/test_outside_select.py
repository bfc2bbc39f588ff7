"""`select` with the user's own retrievers: each one more configuration, fixed, pooled and judged
beside select's own by the same judges over the same queries, ranked in the same report. The
systems are real parts the tests start: HTTP endpoints served by starlette under uvicorn, and a
LangChain retriever. One that retrieves exactly as one of select's configurations does gets that
configuration's judged scores, whether it answers with select's chunk ids, with ids of its own and
the text, or with LangChain Documents; results with no text anywhere are counted, named and not
relevant; a killed search resumes asking no finished query again; a bad spec exits 2 first."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from typer.testing import CliRunner

import benchsmith
from benchsmith.cli import app
from benchsmith.graphs.select.outside import OUTSIDE_DIR
from benchsmith.graphs.select.retrieval import chunk_index, corpus_of
from benchsmith.graphs.select.state import POOL_FILE
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.tools.retrieval.bm25 import BM25Index
from benchsmith.tools.retrieval.chunking_strategies import parse_chunking
from benchsmith.tools.retrieval.outside_retrievers import OutsideRetrieverError, clear_retrievers, http_searcher
from tests.killed_runs import kill_once_logged, resume
from tests.outside_systems import SearchEndpoint, serving
from tests.select_fixtures import run_select, write_labelled_corpus

runner = CliRunner(env={"COLUMNS": "200"})
TOP = 3
OWN_BM25 = f"chunks(whole) bm25 k={TOP}"
COMPARED = ("pr_auc", "pr_auc_interval", "precision_at_k", "recall_at_k", "recall_at_k_per_query_mean", "f_beta")


@pytest.fixture(autouse=True)
def _forget_registered():
    yield
    clear_retrievers()


def whole_chunk_bm25(corpus: Path) -> tuple[BM25Index, dict[str, str]]:
    """The user's search, which happens to be select's own: BM25 over its whole-document chunks."""
    chunks = chunk_index(corpus_of([str(corpus)]), parse_chunking("whole")).chunks
    return BM25Index([chunk.id for chunk in chunks], [chunk.text for chunk in chunks]), {
        chunk.id: chunk.text for chunk in chunks
    }


def searched(index: BM25Index, query: str, k: int) -> list[tuple[str, float]]:
    return list(index.search({"q": query}, k)["q"].items())


class ChunkSearch(BaseRetriever):
    """A prototype's LangChain retriever over the same BM25: Documents of its own ids, with their text."""

    index: BM25Index
    texts: dict[str, str]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return [
            Document(self.texts[chunk_id], metadata={"id": f"lc-{chunk_id}"})
            for chunk_id, _ in searched(self.index, query, TOP)
        ]


def outside_of(results: dict) -> dict[str, dict]:
    return {c["name"]: c for c in results["configurations"] if c["settings"].get("outside")}


def test_outside_retrievers_that_retrieve_as_selects_bm25_get_its_judged_scores(tmp_path):
    corpus, queries, qrels = write_labelled_corpus(tmp_path / "data")
    index, texts = whole_chunk_bm25(corpus)
    by_select_id = SearchEndpoint({}, rank=lambda query, history, k: searched(index, query, k))
    own_ids = {f"mine-{chunk_id}": text for chunk_id, text in texts.items()}  # ids select does not hold, with text
    with_text = SearchEndpoint(
        {},
        rank=lambda query, history, k: [(f"mine-{chunk_id}", score) for chunk_id, score in searched(index, query, k)],
        texts=own_ids,
    )
    langchain = ChunkSearch(index=index, texts=texts)
    with serving(by_select_id) as ids_url, serving(with_text) as text_url:
        result = run_select(
            tmp_path / "ws",
            queries,
            corpus,
            "mixed",
            judges=[f"qrels:{qrels}"],
            min_votes=1,
            top_k=[TOP],
            retrievers=["bm25", "dense", ids_url, text_url, langchain],
        )
    results = result.results()
    by_name = {c["name"]: c for c in results["configurations"]}
    outside = outside_of(results)
    assert set(outside) == {
        f"outside({ids_url}) k={TOP}",
        f"outside({text_url}) k={TOP}",
        f"outside(ChunkSearch) k={TOP}",
    }
    for name in outside:
        for key in COMPARED:
            assert by_name[name][key] == by_name[OWN_BM25][key], (name, key)
    assert by_name[OWN_BM25]["pr_auc"] != by_name[f"chunks(whole) dense k={TOP}"]["pr_auc"]  # the scores say something
    # Asked once per query, for the top K, with select's query and no history.
    questions = {record["question"] for record in load_jsonl(queries)}
    for endpoint in (by_select_id, with_text):
        assert sorted(request["query"] for request in endpoint.requests) == sorted(questions)
        assert all(request["k"] == TOP and request["history"] == [] for request in endpoint.requests)
    # Their passages are select's chunks' texts: judged once, the pool no larger than select's own.
    pooled = load_jsonl(result.run_dir / POOL_FILE)
    assert {record["key"] for record in pooled} <= {
        chunk.key for chunk in chunk_index(corpus_of([str(corpus)]), parse_chunking("whole")).chunks
    }
    assert len({record["pair"] for record in pooled}) == len(pooled)
    # Ranked in the same report, said to be outside configurations, outside the main effects.
    assert all(name in results["ranking"] for name in outside)
    assert all(effect["level"] not in {ids_url, text_url, "ChunkSearch"} for effect in results["main_effects"])
    markdown = result.report["markdown"].read_text(encoding="utf-8")
    assert f"outside({ids_url}) k={TOP}" in markdown and "(its own)" in markdown
    assert "Outside configurations (" in markdown


def test_results_with_no_text_anywhere_are_counted_named_and_not_relevant(tmp_path):
    corpus, queries, qrels = write_labelled_corpus(tmp_path / "data")
    index, _ = whole_chunk_bm25(corpus)
    ghostly = SearchEndpoint({}, rank=lambda query, history, k: [("ghost-404", 99.0), *searched(index, query, k - 1)])
    with serving(ghostly) as url:
        result = run_select(
            tmp_path / "ws",
            queries,
            corpus,
            "ghosts",
            judges=[f"qrels:{qrels}"],
            min_votes=1,
            top_k=[TOP],
            retrievers=["bm25", url],
        )
    results = result.results()
    name = f"outside({url}) k={TOP}"
    by_name = {c["name"]: c for c in results["configurations"]}
    queries_asked = len(ghostly.requests)
    said = [note for note in results["notes"] if note.startswith(f"{name}:")]
    assert len(said) == 1 and f"{queries_asked} results in {queries_asked} queries have no text" in said[0]
    assert "'ghost-404'" in said[0] and "counts as not relevant" in said[0]
    markdown = result.report["markdown"].read_text(encoding="utf-8")
    assert f"{queries_asked} results in {queries_asked} queries have no text" in markdown and "'ghost-404'" in markdown
    # It keeps its rank, not relevant: the rest is select's BM25 one place down.
    assert by_name[name]["precision_at_k"]["1"] == 0.0
    assert by_name[name]["recall_at_k"][str(TOP)] == by_name[OWN_BM25]["recall_at_k"][str(TOP - 1)]
    assert not any("ghost" in record["chunk_id"] for record in load_jsonl(result.run_dir / POOL_FILE))
    log = next((result.run_dir / OUTSIDE_DIR).iterdir())
    assert all(record["unmapped"] == ["ghost-404"] for record in load_jsonl(log))


def test_your_retriever_winning_is_named_best_and_leaves_no_space_file(tmp_path):
    corpus, queries, qrels = write_labelled_corpus(tmp_path / "data")
    relevant: dict[str, list[str]] = {}
    for line in qrels.read_text(encoding="utf-8").splitlines()[1:]:
        query_id, doc_id, _ = line.split("\t")
        relevant.setdefault(query_id, []).append(doc_id)
    by_question = {record["question"]: record["id"] for record in load_jsonl(queries)}

    def labelled_search(query, history, k):  # a callable that knows the answers: document ids, no text
        return [(doc_id, 10.0 - rank) for rank, doc_id in enumerate(relevant[by_question[query]][:k])]

    result = run_select(
        tmp_path / "ws",
        queries,
        corpus,
        "yours",
        judges=[f"qrels:{qrels}"],
        min_votes=1,
        top_k=[TOP],
        retrievers=["bm25", labelled_search],
    )
    assert result.best == f"outside(labelled_search) k={TOP}"
    assert "best" not in result.report and not (result.run_dir / "best-configuration.yaml").exists()
    assert result.results()["best"]["outside"] is True
    markdown = result.report["markdown"].read_text(encoding="utf-8")
    assert "The best configuration: your own retriever" in markdown and "nothing of select's to ship" in markdown


def test_a_result_text_that_is_not_a_string_is_off_the_contract():
    endpoint = SearchEndpoint({"a": "a passage"}, texts={"a": 5})  # type: ignore[dict-item]
    with serving(endpoint) as url, pytest.raises(OutsideRetrieverError, match="text must be a string or null"):
        http_searcher(url)("which passage", [], 3)


def test_the_dry_run_lists_the_outside_configurations_and_their_calls_and_asks_nothing(tmp_path):
    corpus, queries, qrels = write_labelled_corpus(tmp_path / "data")
    endpoint = SearchEndpoint({"a": "a passage"})
    with serving(endpoint) as url:
        arguments = [
            "select",
            str(queries),
            "--corpus",
            str(corpus),
            "--retriever",
            "bm25",
            "--retriever",
            f"{url}@raw",
        ]
        result = runner.invoke(
            app, [*arguments, "--judge", f"qrels:{qrels}", "--min-votes", "1", "--dry-run", "-w", str(tmp_path / "ws")]
        )
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert f"outside({url}@raw) k=10" in said
    assert f"outside configuration {url} (http) @raw: 5 calls" in said and "earlier turns as they are" in said
    assert endpoint.requests == []
    assert not (tmp_path / "ws" / "runs").exists() or not list((tmp_path / "ws" / "runs").glob("*"))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("py:no_such_module_here:search", "cannot import 'no_such_module_here'"),
        ("shop-search", "unknown retriever 'shop-search'"),
        ("http://user:hunter2@127.0.0.1:9/search", "keep credentials out of the URL"),
        ("hybrid:rrf(bm25,http://127.0.0.1:9/search)", "fuses your own retriever (http://127.0.0.1:9/search)"),
    ],
)
def test_a_bad_outside_spec_exits_2_before_any_run_record(tmp_path, spec, message):
    corpus, queries, qrels = write_labelled_corpus(tmp_path / "data")
    arguments = ["select", str(queries), "--corpus", str(corpus), "--retriever", "bm25", "--retriever", spec]
    result = runner.invoke(
        app, [*arguments, "--judge", f"qrels:{qrels}", "--min-votes", "1", "-w", str(tmp_path / "ws")]
    )
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert "Traceback" not in result.output and "hunter2" not in result.output
    assert not (tmp_path / "ws" / "runs").exists() or not list((tmp_path / "ws" / "runs").glob("*"))


def test_the_api_refuses_a_registered_callable_fused_in_a_space_file(tmp_path):
    corpus, queries, _ = write_labelled_corpus(tmp_path / "data")
    benchsmith.register_retriever("shop-search", lambda query, history, k: [])
    space = tmp_path / "space.yaml"
    space.write_text("retriever: [bm25, 'hybrid:rrf(bm25,shop-search)']\ntop_k: [5]\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"fuses your own retriever \(shop-search\)"):
        benchsmith.select(queries, corpus=[corpus], space=space, workspace=str(tmp_path / "ws"))
    assert not (tmp_path / "ws" / "runs").exists() or not list((tmp_path / "ws" / "runs").glob("*"))


@pytest.mark.slow  # two CLI subprocesses
def test_a_search_killed_while_asking_resumes_asking_no_finished_query_again(tmp_path):
    corpus, queries, qrels = write_labelled_corpus(tmp_path / "data")
    index, _ = whole_chunk_bm25(corpus)
    endpoint = SearchEndpoint({}, rank=lambda query, history, k: searched(index, query, k))
    workspace = tmp_path / "ws"
    with serving(endpoint) as url:
        arguments = ["select", str(queries), "--corpus", str(corpus), "--retriever", "bm25", "--retriever", url]
        arguments += ["--judge", f"qrels:{qrels}", "--min-votes", "1", "--top-k", str(TOP), "--concurrency", "1"]
        arguments += ["--resamples", "200", "-w", str(workspace)]
        whole = runner.invoke(app, [*arguments, "--run-id", "whole"])
        assert whole.exit_code == 0, whole.output
        queries_asked = len(endpoint.requests)
        endpoint.requests.clear()
        endpoint.hang_at = 3
        command = [sys.executable, "-m", "benchsmith.cli", *arguments, "--run-id", "killed"]
        log_name = next((workspace / "runs" / "whole" / OUTSIDE_DIR).iterdir()).name
        try:
            finished = kill_once_logged(
                command, workspace / "runs" / "killed" / OUTSIDE_DIR / log_name, endpoint.hanging
            )
        finally:
            endpoint.release.set()
        assert 1 <= len(finished) < queries_asked, "the search finished before it could be killed"
        held = endpoint.requests[endpoint.hang_at - 1]["query"]  # asked when killed: asked again on resume
        resume(command)
        asked = Counter(request["query"] for request in endpoint.requests)

    texts = {record["id"]: record["question"] for record in load_jsonl(queries)}
    for record in finished:
        assert asked[texts[record["_id"]]] == 1, record["_id"]
    assert sum(asked.values()) == queries_asked + 1 and asked[held] == 2  # only the held one twice
    killed, uninterrupted = (
        json.loads((workspace / "runs" / run_id / "selection.json").read_text()) for run_id in ("killed", "whole")
    )
    assert killed["ranking"] == uninterrupted["ranking"]
    assert killed["configurations"] == uninterrupted["configurations"]
