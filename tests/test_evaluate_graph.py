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

from benchsmith.agents.rewriter import RewrittenQuery
from benchsmith.agents.seam.backends import ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.evals.measures.standard import evaluate_run, parse_measures
from benchsmith.graphs.contexts.evaluate import EvaluationContext
from benchsmith.graphs.evaluate.graph import builder
from benchsmith.graphs.evaluate.state import RUN_FILES_DIR
from benchsmith.graphs.runtime.resources import register_embedder, register_model, register_scorer
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.stores.formats.beir import load_benchmark
from benchsmith.stores.formats.trec import read_trec_run
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.fusion import fuse_runs
from tests.embedders import HashingEmbedder
from tests.evaluate_fixtures import TOPICS, spoil_benchmark, write_benchmark, write_system_run

MEASURES = ("R@1", "R@5", "nDCG@10", "RR@10", "AP", "Judged@10")


def evaluate(
    workspace: Workspace,
    benchmark: Path,
    run_id: str,
    retrievers: list[str],
    histories: list[str],
    runs: list[str] | None = None,
    on_event=None,
    max_concurrency: int = 1,
    **context_options,
):
    if (model := context_options.pop("model", None)) is not None:
        context_options["llm"] = register_model(f"scripted-{run_id}-{id(model)}", model)
    if (scorer := context_options.pop("rerank_scorer", None)) is not None:
        context_options["rerank"] = register_scorer(f"scorer-{run_id}-{id(scorer)}", scorer)
    context = EvaluationContext(
        workspace=str(workspace.root),
        measures=MEASURES,
        resamples=2000,
        **{"embedder": register_embedder(HashingEmbedder()), **context_options},
    )
    inputs = {"run_id": run_id, "benchmark": str(benchmark), "retrievers": retrievers, "histories": histories}
    if runs is not None:
        inputs["runs"] = runs
    return run_job(
        builder,
        job="evaluate",
        workspace=workspace,
        run_id=run_id,
        inputs=inputs,
        context=context,
        settings={},
        on_event=on_event,
        max_concurrency=max_concurrency,
    )


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
    later_turns = {
        mode: (results["by_turn"][f"bm25@{mode}"]["1"]["R@1"] + results["by_turn"][f"bm25@{mode}"]["2"]["R@1"]) / 2
        for mode in ("current", "full", "oracle")
    }
    assert later_turns["oracle"] == 1.0
    assert later_turns["current"] <= 0.25  # the pronoun question ties across 8 topics
    assert later_turns["full"] > later_turns["current"]
    # Turn 0 is self-contained: every mode finds it.
    assert all(results["by_turn"][f"bm25@{mode}"]["0"]["R@1"] == 1.0 for mode in ("current", "full", "oracle"))


def test_history_windows_reach_the_query_files(setup):
    workspace, benchmark = setup
    evaluate(workspace, benchmark, "e3", ["bm25"], ["last:1", "full", "current"])
    queries = {
        mode: {r["_id"]: r["text"] for r in load_jsonl(workspace.run_dir("e3") / "queries" / f"{mode}.jsonl")}
        for mode in ("last-1", "full", "current")
    }
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
    assert [row["configuration"] for row in timings] == [row["configuration"] for row in timings_before] + [
        "bm25+rerank@full"
    ]
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


# --- Streaming ---------------------------------------------------------------------------------

STREAMED_RETRIEVERS = ["bm25", "dense", "hybrid:rrf(dense,bm25)", "hybrid:wsum(dense=0.7,bm25=0.3)"]


def climate_scorer(pairs):  # a reranker that prefers documents about climate, then shorter ones
    return [float("climate" in document) - len(document) / 1000 for _, document in pairs]


def test_batches_of_two_queries_give_exactly_the_unbatched_results(setup):
    workspace, benchmark = setup
    events: list[dict] = []
    outcomes = {
        size: evaluate(
            workspace,
            benchmark,
            f"batch-{size}",
            STREAMED_RETRIEVERS,
            ["full", "current"],
            rerank_scorer=climate_scorer,
            rerank_depth=5,
            batch_size=size,
            on_event=events.append if size == 2 else None,
        )
        for size in (2, 10_000)
    }
    # Streamed: every retriever, fusion and reranking advanced two queries at a time.
    for stage in ("bm25@full", "hybrid:rrf(dense,bm25)@full", "bm25+rerank@full"):
        done = [event["done"] for event in events if event.get("stage") == stage]
        assert done == list(range(2, len(TOPICS) * 3 + 1, 2)), stage
    small, whole = (workspace.run_dir(f"batch-{size}") / RUN_FILES_DIR for size in (2, 10_000))
    names = sorted(path.name for path in whole.iterdir())
    assert len(names) == 16 and sorted(path.name for path in small.iterdir()) == names
    for name in names:  # byte for byte: retrieval, fusion and reranking alike
        assert (small / name).read_text(encoding="utf-8") == (whole / name).read_text(encoding="utf-8"), name
    results = {
        size: json.loads(Path(outcome.values["report"]["results"]).read_text(encoding="utf-8"))
        for size, outcome in outcomes.items()
    }
    for key in ("aggregate", "per_query", "recall_curve", "by_turn", "by_switch", "significance"):
        assert results[2][key] == results[10_000][key], key
    # And the unbatched computation in memory: fusion of whole runs, measures of whole runs.
    bm25, dense = (read_trec_run(whole / f"{name}_full.trec") for name in ("bm25", "dense"))
    assert read_trec_run(small / "hybrid_rrf_dense_bm25_full.trec") == fuse_runs([dense, bm25], "rrf", depth=1000)
    qrels = load_benchmark(benchmark, workspace).qrels
    for configuration in results[2]["configurations"]:
        whole_run = read_trec_run(workspace.run_dir("batch-2") / configuration["run_file"])
        expected = evaluate_run(parse_measures(MEASURES), qrels, whole_run, queries_per_batch=10_000)
        assert results[2]["aggregate"][configuration["name"]] == {m: expected.aggregate[m] for m in MEASURES}
        assert results[2]["per_query"][configuration["name"]] == {
            query: {m: values[m] for m in MEASURES} for query, values in expected.per_query.items()
        }


def test_a_crash_mid_configuration_leaves_no_run_file_and_resumes(setup):
    workspace, benchmark = setup
    calls = {"scorer": 0}

    def crashing_scorer(pairs):
        calls["scorer"] += 1
        if calls["scorer"] == 3:  # the third batch of the reranked run
            raise RuntimeError("injected crash between batches")
        return climate_scorer(pairs)

    with pytest.raises(RuntimeError, match="injected crash"):
        evaluate(
            workspace,
            benchmark,
            "partial",
            ["bm25"],
            ["full"],
            rerank_scorer=crashing_scorer,
            batch_size=2,
            rerank_depth=5,
        )
    files = workspace.run_dir("partial") / RUN_FILES_DIR
    assert sorted(path.name for path in files.iterdir()) == ["bm25_full.trec"]  # the partial rerank left nothing
    outcome = evaluate(
        workspace, benchmark, "partial", ["bm25"], ["full"], rerank_scorer=climate_scorer, batch_size=2, rerank_depth=5
    )
    assert outcome.resumed and "bm25+rerank@full" in outcome.values["aggregate"]
    assert len(read_trec_run(files / "bm25_rerank_full.trec")) == len(TOPICS) * 3


# --- Input checks ------------------------------------------------------------------------------


def test_unknown_and_duplicate_ids_are_warned_about_by_name(setup):
    workspace, benchmark = setup
    spoil_benchmark(benchmark)
    events: list[dict] = []
    outcome = evaluate(workspace, benchmark, "w1", ["bm25"], ["oracle"], on_event=events.append)
    warnings = outcome.values["warnings"]
    assert [event["warning"] for event in events if "warning" in event] == warnings
    qrels_file, corpus_file = benchmark / "qrels" / "test.tsv", benchmark / "corpus.jsonl"
    assert warnings == [
        f"{corpus_file}: 1 duplicate document ids ('zebra-history ×2'): the first document of each id is kept, "
        "the later ones are ignored",
        f"{qrels_file}: 1 judged query ids not among the benchmark's queries ('ghost_t0'): no retriever can answer "
        "them; they count as 0 on every measure",
        f"{qrels_file}: 1 judged document ids not in the corpus (or without text) ('nowhere-doc'): no retriever can "
        "find them; recall cannot reach 1 where they are relevant",
    ]
    results = json.loads(Path(outcome.values["report"]["results"]).read_text(encoding="utf-8"))
    assert results["warnings"] == warnings
    assert warnings
    assert all(f"Input warning: {warning}" in results["notes"] for warning in warnings)
    assert "ghost_t0" in Path(outcome.values["report"]["html"]).read_text(encoding="utf-8")
    # The first zebra-history is the one retrieved: the oracle query finds it first.
    assert results["per_query"]["bm25@oracle"]["zebra_t0"]["R@1"] == 0.5  # nowhere-doc is the other relevant one
    assert results["per_query"]["bm25@oracle"]["ghost_t0"]["R@1"] == 0.0


def test_strict_makes_each_id_problem_an_error(setup):
    workspace, benchmark = setup
    spoil_benchmark(benchmark)
    from benchsmith.stores.errors import InputError

    with pytest.raises(InputError, match=r"duplicate document ids.*zebra-history.*--strict"):
        evaluate(workspace, benchmark, "s1", ["bm25"], ["full"], strict=True)
    lines = (benchmark / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    (benchmark / "corpus.jsonl").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"judged query ids .*'ghost_t0'"):
        evaluate(workspace, benchmark, "s2", ["bm25"], ["full"], strict=True)


# --- The user's own run files ------------------------------------------------------------------


def test_run_files_get_the_same_breakdowns_as_retrievers(setup, tmp_path):
    workspace, benchmark = setup
    mine = write_system_run(tmp_path / "mine.trec", perfect_turns=(0, 1))
    theirs = write_system_run(tmp_path / "theirs.trec", perfect_turns=(0,))
    outcome = evaluate(workspace, benchmark, "r1", ["bm25"], ["full"], runs=[str(mine), str(theirs)])
    results = json.loads(Path(outcome.values["report"]["results"]).read_text(encoding="utf-8"))
    assert [c["name"] for c in results["configurations"]] == ["mine.trec", "theirs.trec", "bm25@full"]
    assert [results["by_turn"]["mine.trec"][turn]["R@1"] for turn in ("0", "1", "2")] == [1.0, 1.0, 0.0]
    assert [results["by_turn"]["theirs.trec"][turn]["R@1"] for turn in ("0", "1", "2")] == [1.0, 0.0, 0.0]
    assert results["by_switch"]["mine.trec"]["soft"]["R@1"] == 1.0
    assert results["by_switch"]["mine.trec"]["hard"]["R@1"] == 0.0
    pairs = {(c["first"], c["second"]) for c in results["significance"]["comparisons"]}
    assert ("mine.trec", "theirs.trec") in pairs and ("mine.trec", "bm25@full") in pairs
    copied = workspace.run_dir("r1") / RUN_FILES_DIR / "run-mine.trec.trec"
    assert read_trec_run(copied) == read_trec_run(mine) and outcome.values["warnings"] == []
    report = Path(outcome.values["report"]["html"]).read_text(encoding="utf-8")
    assert "mine.trec" in report and f"run file {mine}" in report


def test_run_file_queries_the_benchmark_lacks_are_named(setup, tmp_path):
    workspace, benchmark = setup
    mine = write_system_run(tmp_path / "mine.trec", perfect_turns=(0,))
    with mine.open("a", encoding="utf-8") as handle:
        handle.write("stray_q Q0 zebra-history 1 1.0 mine\n")
    outcome = evaluate(workspace, benchmark, "r2", [], [], runs=[str(mine)])
    assert outcome.values["warnings"] == [
        f"{mine}: 1 query ids not among the benchmark's queries ('stray_q'): they are not measured"
    ]
    assert list(outcome.values["aggregate"]) == ["mine.trec"]
