"""The evaluation graph end to end on a small conversational BEIR benchmark written here.

The fixture is built so that context matters: every topic has a document per aspect, and the
later turns ask about an aspect with a pronoun ("What about its predators?"). Without the
conversation the question matches that aspect's document of every topic equally; with the
history or the oracle rewrite it names the topic.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsmith.agents.models import ModelSeam, ScriptedBackend
from benchsmith.agents.rewriter import RewrittenQuery
from benchsmith.evals.measures import evaluate_run, parse_measures
from benchsmith.graphs.evaluate import RUN_FILES_DIR, EvaluationContext, builder
from benchsmith.graphs.resources import register_embedder, register_model, register_scorer
from benchsmith.graphs.runner import run_job
from benchsmith.stores.beir import load_benchmark
from benchsmith.stores.jsonl import load_jsonl
from benchsmith.stores.trec import read_trec_run
from benchsmith.stores.workspace import Workspace
from tests.embedders import HashingEmbedder

TOPICS = ["zebra", "glacier", "volcano", "coral", "falcon", "desert", "comet", "tundra"]
ASPECTS = {"history": "origins ancient records", "predators": "threats danger enemies",
           "climate": "temperature weather rainfall"}
SWITCHES = ["start", "soft", "hard"]
MEASURES = ("R@1", "R@5", "nDCG@10", "RR@10", "AP", "Judged@10")


def write_benchmark(directory: Path) -> Path:
    corpus, queries, qrels = [], [], []
    for topic in TOPICS:
        for aspect, words in ASPECTS.items():
            corpus.append({"_id": f"{topic}-{aspect}", "title": "",
                           "text": f"The {topic} and its {aspect}: {words} of the {topic}, as the notes describe."})
        for turn, aspect in enumerate(ASPECTS):
            first_word = ASPECTS[aspect].split()[0]
            question = (f"Tell me about the {topic} {aspect} and {first_word}." if turn == 0
                        else f"What about its {aspect} and {first_word}?")
            queries.append({"_id": f"{topic}_t{turn}", "text": question, "metadata": {
                "conversation_id": topic, "turn": turn, "switch": SWITCHES[turn], "question": question,
                "rewrite": f"What about the {topic} {aspect} and {first_word}?",
                "response": f"The notes cover the {topic} well."}})
            qrels.append((f"{topic}_t{turn}", f"{topic}-{aspect}"))
    directory.mkdir(parents=True)
    (directory / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus), encoding="utf-8")
    (directory / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in reversed(queries)),
                                             encoding="utf-8")
    (directory / "qrels").mkdir()
    (directory / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in qrels), encoding="utf-8")
    return directory


def evaluate(workspace: Workspace, benchmark: Path, run_id: str, retrievers: list[str], histories: list[str],
             **context_options):
    if (model := context_options.pop("model", None)) is not None:
        context_options["llm"] = register_model(f"scripted-{run_id}-{id(model)}", model)
    if (scorer := context_options.pop("rerank_scorer", None)) is not None:
        context_options["rerank_model"] = register_scorer(f"scorer-{run_id}-{id(scorer)}", scorer)
    context = EvaluationContext(workspace=str(workspace.root), measures=MEASURES, resamples=2000,
                                **{"embedder": register_embedder(HashingEmbedder()), **context_options})
    return run_job(builder, job="evaluate", workspace=workspace, run_id=run_id,
                   inputs={"run_id": run_id, "benchmark": str(benchmark), "retrievers": retrievers,
                           "histories": histories},
                   context=context, settings={}, max_concurrency=1)


@pytest.fixture
def setup(tmp_path):
    return Workspace(tmp_path / "ws"), write_benchmark(tmp_path / "bench")


def test_every_configuration_gets_a_run_file_scores_and_a_report(setup):
    workspace, benchmark = setup
    outcome = evaluate(workspace, benchmark, "e1", ["bm25", "dense", "hybrid:rrf(dense,bm25)"], ["full", "current"])
    names = [f"{r}@{h}" for h in ("full", "current") for r in ("bm25", "dense", "hybrid:rrf(dense,bm25)")]
    assert sorted(outcome.values["aggregate"]) == sorted(names)
    results = json.loads(Path(outcome.values["report"]["results"]).read_text(encoding="utf-8"))
    run_dir = workspace.run_dir("e1")
    qrels = load_benchmark(benchmark, workspace).qrels
    for configuration in results["configurations"]:
        run = read_trec_run(run_dir / configuration["run_file"])
        assert set(run) == set(qrels)
        # The stored aggregate is what ir_measures gives on the run file.
        expected = evaluate_run(parse_measures(MEASURES), qrels, run).aggregate
        assert results["aggregate"][configuration["name"]] == pytest.approx(expected)
        assert set(results["per_query"][configuration["name"]]) == set(qrels)
    assert set(results["by_turn"]["bm25@full"]) == {"0", "1", "2"}
    assert list(results["by_switch"]["bm25@full"]) == ["start", "soft", "hard"]
    assert results["by_turn"]["bm25@full"]["1"]["queries"] == len(TOPICS)
    assert results["significance"]["comparisons"] and "Holm" in results["significance"]["description"]
    assert Path(outcome.values["report"]["html"]).exists() and Path(outcome.values["report"]["markdown"]).exists()


def test_context_matters_current_question_loses_to_history_and_oracle(setup):
    workspace, benchmark = setup
    outcome = evaluate(workspace, benchmark, "e2", ["bm25"], ["current", "full", "oracle"])
    results = json.loads(Path(outcome.values["report"]["results"]).read_text(encoding="utf-8"))
    later_turns = {mode: (results["by_turn"][f"bm25@{mode}"]["1"]["R@1"] + results["by_turn"][f"bm25@{mode}"]["2"]["R@1"]) / 2
                   for mode in ("current", "full", "oracle")}
    assert later_turns["oracle"] == 1.0
    assert later_turns["current"] <= 0.25  # the pronoun question ties across 8 topics
    assert later_turns["full"] > later_turns["current"]
    # Turn 0 is self-contained: every mode finds it.
    assert all(results["by_turn"][f"bm25@{mode}"]["0"]["R@1"] == 1.0 for mode in ("current", "full", "oracle"))


def test_history_windows_reach_the_query_files(setup):
    workspace, benchmark = setup
    evaluate(workspace, benchmark, "e3", ["bm25"], ["last:1", "full", "current"])
    queries = {mode: {r["_id"]: r["text"] for r in load_jsonl(workspace.run_dir("e3") / "queries" / f"{mode}.jsonl")}
               for mode in ("last-1", "full", "current")}
    assert queries["current"]["zebra_t2"] == "What about its climate and temperature?"
    assert queries["full"]["zebra_t2"].count("User:") == 3 and "zebra history" in queries["full"]["zebra_t2"]
    assert queries["last-1"]["zebra_t2"].count("User:") == 2 and "history" not in queries["last-1"]["zebra_t2"]


def test_rewrite_mode_asks_the_model_for_later_turns_only(setup):
    workspace, benchmark = setup
    asked = []

    def replier(messages, schema):
        assert schema is RewrittenQuery
        asked.append(messages[-1]["content"])
        return RewrittenQuery(reasoning="resolved 'its'", query="zebra predators threats")

    evaluate(workspace, benchmark, "e4", ["bm25"], ["rewrite"], model=ModelSeam(ScriptedBackend(replier=replier)))
    assert len(asked) == len(TOPICS) * 2  # turns 1 and 2 of every conversation; turn 0 is self-contained
    queries = {r["_id"]: r["text"] for r in load_jsonl(workspace.run_dir("e4") / "queries" / "rewrite.jsonl")}
    assert queries["zebra_t1"] == "zebra predators threats"
    assert queries["zebra_t0"] == "Tell me about the zebra history and origins."


def test_killed_after_one_configuration_resumes_without_recomputing_it(setup):
    workspace, benchmark = setup
    calls = {"scorer": 0}

    def failing_scorer(pairs):
        calls["scorer"] += 1
        raise RuntimeError("injected reranker crash")

    with pytest.raises(RuntimeError, match="injected reranker crash"):
        evaluate(workspace, benchmark, "e5", ["bm25"], ["full"], rerank_scorer=failing_scorer)
    bm25_file = workspace.run_dir("e5") / RUN_FILES_DIR / "bm25_full.trec"
    assert bm25_file.exists()
    finished_once = bm25_file.stat().st_mtime_ns
    timings_before = load_jsonl(workspace.run_dir("e5") / "timings.jsonl")

    def scorer(pairs):  # prefers documents about climate
        return [float("climate" in document) for _, document in pairs]

    outcome = evaluate(workspace, benchmark, "e5", ["bm25"], ["full"], rerank_scorer=scorer)
    assert outcome.resumed
    assert bm25_file.stat().st_mtime_ns == finished_once
    timings = load_jsonl(workspace.run_dir("e5") / "timings.jsonl")
    assert [row["configuration"] for row in timings] == [row["configuration"] for row in timings_before] + \
        ["bm25+rerank@full"]
    reranked = read_trec_run(workspace.run_dir("e5") / RUN_FILES_DIR / "bm25_rerank_full.trec")
    top = max(reranked["zebra_t0"], key=reranked["zebra_t0"].get)
    assert top.endswith("-climate")
    assert "bm25+rerank@full" in outcome.values["aggregate"]


def test_oracle_needs_rewrites(setup, tmp_path):
    workspace, benchmark = setup
    lines = (benchmark / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[3])
    del record["metadata"]["rewrite"]
    lines[3] = json.dumps(record)
    (benchmark / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    from benchsmith.stores.errors import InputError

    with pytest.raises(InputError, match=f"query '{record['_id']}'.*has none"):
        evaluate(workspace, benchmark, "e6", ["bm25"], ["oracle"])
