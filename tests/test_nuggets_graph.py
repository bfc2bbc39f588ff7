"""The nuggets graph end to end with scripted agents: one support call per question and batch,
the benchmark files it writes, the filters, and a crash mid-judging resumed without judging a
batch twice."""

from __future__ import annotations

import json
import math

import pytest

import benchsmith
from benchsmith.agents.nuggets import SupportJudgmentsBase
from benchsmith.agents.seam.backends import ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.evals.measures.nugget_measures import nugget_measures
from benchsmith.graphs.runtime.resources import chroma_client, register_embedder, register_model
from benchsmith.stores.formats.beir import load_benchmark
from benchsmith.stores.formats.nugget_qrels import read_nugget_qrels
from benchsmith.stores.formats.trec import read_trec_run
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.workspace import Workspace
from tests.embedders import HashingEmbedder
from tests.nugget_fixtures import (
    FACTS_PER_QUESTION,
    QUESTIONS,
    in_corpus,
    scripted_reply,
    write_questions,
    write_repository,
)

BATCH_SIZE, POOL_DEPTH = 3, 4


@pytest.fixture
def inputs(tmp_path):
    return write_questions(tmp_path / "qa.jsonl"), write_repository(tmp_path / "repo"), tmp_path / "ws"


def build(inputs, run_id: str, backend: ScriptedBackend, **options):
    questions, repository, workspace = inputs
    llm = register_model(f"scripted-{run_id}", ModelSeam(backend))  # one name: a resume keeps its settings
    settings = {
        "pool_depth": POOL_DEPTH,
        "batch_size": BATCH_SIZE,
        "min_chars": 20,
        "chunk_size": 300,
        "concurrency": 2,
        **options,
    }
    return benchsmith.nuggets(
        questions,
        [repository],
        llm=llm,
        embedder=register_embedder(HashingEmbedder()),
        workspace=workspace,
        run_id=run_id,
        **settings,
    )


def support_calls(backend: ScriptedBackend) -> list[list[dict[str, str]]]:
    return [messages for messages, schema in backend.calls if issubclass(schema, SupportJudgmentsBase)]


def test_one_support_call_per_question_and_batch_and_the_benchmark_it_writes(inputs):
    backend = ScriptedBackend(replier=scripted_reply)
    result = build(inputs, "n1", backend)
    run_dir = result.run_dir
    pools = {record["question"]: record for record in load_jsonl(run_dir / "pools.jsonl")}
    judgments = load_jsonl(run_dir / "judgments.jsonl")
    expected_batches = {
        (question, index)
        for question, record in pools.items()
        for index in range(math.ceil(len(record["pool"]) / BATCH_SIZE))
    }
    calls = support_calls(backend)
    assert len(calls) == len(judgments) == len(expected_batches)
    assert {(record["question"], int(record["batch"].split("#")[1])) for record in judgments} == expected_batches
    assert all(1 <= len(record["chunks"]) <= BATCH_SIZE for record in judgments)
    assert len({call[-1]["content"] for call in calls}) == len(calls)  # no batch shown twice
    # Three writing calls per question, each pool at most 5 techniques × depth, deduplicated.
    assert len(backend.calls) - len(calls) == 3 * QUESTIONS
    assert pools
    assert all(len(record["pool"]) == len(set(record["pool"])) <= 5 * POOL_DEPTH for record in pools.values())

    # q6's facts are nowhere in the corpus: dropped. q5 keeps one unsupported nugget.
    assert (result.questions_read, result.kept) == (QUESTIONS, QUESTIONS - 1)
    assert result.dropped == {"no nugget is supported by a pooled chunk": 1}
    nuggets = {record["query_id"]: record for record in load_jsonl(result.nuggets_file)}
    assert set(nuggets) == {f"q{n}" for n in range(1, QUESTIONS)}
    for question in range(1, QUESTIONS):
        for number, nugget in enumerate(nuggets[f"q{question}"]["nuggets"], start=1):
            assert nugget["_id"] == f"q{question}_{number}"
            assert bool(nugget["relevant_corpus_ids"]) == in_corpus(question, number), nugget
            # The supporting chunk really states the fact (its code word), found by its path and span.
            for doc_id in nugget["relevant_corpus_ids"]:
                path, span = doc_id.rsplit(":", 1)
                start, end = map(int, span.split("-"))
                assert f"zorb{question}{number}" in (inputs[1] / path).read_bytes()[start:end].decode()
    assert result.nuggets == (QUESTIONS - 1) * FACTS_PER_QUESTION
    assert result.support_rate == pytest.approx(
        ((QUESTIONS - 1) * FACTS_PER_QUESTION - 1) / ((QUESTIONS - 1) * FACTS_PER_QUESTION)
    )

    # BEIR: query-level labels count the nuggets a chunk supports; nugget qrels agree with nuggets.jsonl.
    benchmark = load_benchmark(result.benchmark, Workspace.resolve(inputs[2]))
    assert {query.id for query in benchmark.queries} == set(nuggets)
    qrels = read_nugget_qrels(result.nugget_qrels)
    for question, record in nuggets.items():
        for nugget in record["nuggets"]:
            judged = qrels[question][nugget["_id"]]
            assert {doc for doc, label in judged.items() if label} == set(nugget["relevant_corpus_ids"])
            assert set(judged) == set(pools[question]["pool"])
        for doc_id, label in benchmark.qrels[question].items():
            assert label == sum(qrels[question][nugget][doc_id] for nugget in qrels[question])
    corpus_ids = {json.loads(line)["_id"] for line in (result.benchmark / "corpus.jsonl").read_text().splitlines()}
    assert benchmark.qrels
    assert all(doc in corpus_ids for judged in benchmark.qrels.values() for doc in judged)

    # The pooling table is the measures of the written runs against the nugget qrels.
    oracle = read_trec_run(run_dir / "pooling-runs" / "nuggets.fused.trec")
    assert result.table["nuggets"]["fused"] == pytest.approx(
        nugget_measures(oracle, qrels, ["alpha_nDCG@10", "Coverage@20", "R@50"]).aggregate
    )
    assert set(result.table) == {
        "question",
        "sub_questions",
        "closed_book_answer",
        "answer",
        "nuggets",
        "fusion:inference",
        "fusion:oracle",
        "fusion:all",
    }
    # No run covers more than the supported nuggets (q5 has 2 of 3); the nuggets, code words and
    # all, reach that with BM25.
    reachable = (QUESTIONS - 2 + 2 / 3) / (QUESTIONS - 1)
    assert result.table
    assert all(values["Coverage@20"] <= reachable + 1e-9 for row in result.table.values() for values in row.values())
    assert result.table["nuggets"]["bm25"]["Coverage@20"] == pytest.approx(reachable)

    report = result.results()
    assert report["filtered"][0]["id"] == "q6"
    assert report["nuggets"]["support_calls"] == len(expected_batches)
    markdown = result.report["markdown"].read_text()
    assert "Pooling results (FreshStack Table 4 layout)" in markdown and "q6" in markdown


def test_all_nuggets_supported_also_drops_a_question_with_an_unsupported_nugget(inputs):
    result = build(inputs, "n2", ScriptedBackend(replier=scripted_reply), all_nuggets_supported=True)
    assert result.kept == QUESTIONS - 2
    assert result.dropped == {
        "no nugget is supported by a pooled chunk": 1,
        "a nugget is supported by no pooled chunk": 1,
    }
    assert result.support_rate == 1.0


def test_a_crash_mid_judging_resumes_without_judging_any_batch_twice(inputs):
    failing_at, seen = 5, []

    def replier(messages, schema):
        if issubclass(schema, SupportJudgmentsBase):
            seen.append(messages[-1]["content"])
            if len(seen) == failing_at:
                raise RuntimeError("the judge's server went away")
        return scripted_reply(messages, schema)

    first = ScriptedBackend(replier=replier)
    with pytest.raises(RuntimeError, match="went away"):
        build(inputs, "n3", first)
    run_dir = Workspace.resolve(inputs[2]).run_dir("n3")
    judged_before = load_jsonl(run_dir / "judgments.jsonl")
    assert 0 < len(judged_before) < len(seen) + 1

    second = ScriptedBackend(replier=scripted_reply)
    result = build(inputs, "n3", second)
    assert result.resumed
    judged = load_jsonl(run_dir / "judgments.jsonl")
    assert len({record["batch"] for record in judged}) == len(judged)
    # Every batch judged exactly once: the ones logged before the crash were not asked again.
    assert (
        len(judged_before) + len(support_calls(second)) == len(judged) == result.results()["nuggets"]["support_calls"]
    )
    assert second.calls
    assert all(issubclass(schema, SupportJudgmentsBase) for _, schema in second.calls)  # the pools were kept
    assert result.kept == QUESTIONS - 1


def test_an_ingested_collection_is_a_corpus_too(tmp_path):
    from benchsmith.graphs.ingest import IngestContext
    from benchsmith.graphs.ingest import builder as ingest_builder
    from benchsmith.graphs.runtime.runner import run_job

    questions, repository = write_questions(tmp_path / "qa.jsonl"), write_repository(tmp_path / "repo")
    workspace = Workspace.resolve(tmp_path / "ws")
    embedder = register_embedder(HashingEmbedder())
    run_job(
        ingest_builder,
        job="ingest",
        workspace=workspace,
        run_id="ingest",
        inputs={"run_id": "ingest", "sources": [str(repository)], "collection": "frob"},
        context=IngestContext(workspace=str(workspace.root), embedder=embedder, min_chars=20),
        settings={},
    )
    result = benchsmith.nuggets(
        questions,
        collection="frob",
        llm=register_model("scripted", ModelSeam(ScriptedBackend(replier=scripted_reply))),
        embedder=embedder,
        pool_depth=POOL_DEPTH,
        batch_size=BATCH_SIZE,
        workspace=workspace.root,
        run_id="from-collection",
    )
    corpus = [json.loads(line) for line in (result.benchmark / "corpus.jsonl").read_text().splitlines()]
    stored = chroma_client(workspace, None).get_collection("frob").count()
    assert len(corpus) == stored and all(record["title"] for record in corpus)  # the ingested chunks, ids kept
    assert result.kept >= QUESTIONS - 2 and result.nuggets > 0
