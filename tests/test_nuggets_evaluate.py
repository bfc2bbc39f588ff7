"""`benchsmith evaluate --nugget-qrels`: nugget measures beside any evaluation (measured a batch
of queries at a time like the others), and in --run mode in place of --qrels (query-level qrels
derived from the nugget qrels)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import benchsmith
from benchsmith.agents.seam.backends import ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.cli import app
from benchsmith.evals.measures.nugget_measures import nugget_measures
from benchsmith.graphs.contexts.evaluate import EvaluationContext
from benchsmith.graphs.evaluate.graph import builder
from benchsmith.graphs.runtime.resources import register_embedder, register_model
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.jobs.evaluate import measure_runs
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.nugget_qrels import read_nugget_qrels, write_nugget_qrels
from benchsmith.stores.formats.trec import read_trec_run, write_trec_qrels, write_trec_run
from benchsmith.stores.persistence.workspace import Workspace
from tests.embedders import HashingEmbedder
from tests.evaluate_fixtures import ASPECTS, TOPICS, write_benchmark, write_system_run
from tests.nugget_fixtures import scripted_reply, write_questions, write_repository

runner = CliRunner(env={"COLUMNS": "200"})
MEASURES = ["alpha_nDCG@10", "Coverage@20", "R@50"]
NUGGET_QRELS = [
    ("q1", "q1_1", "d1", 1),
    ("q1", "q1_10", "d1", 1),
    ("q1", "q1_10", "d2", 1),
    ("q1", "q1_2", "d3", 0),
    ("q10", "q10_1", "d4", 1),
    ("q10", "q10_2", "d5", 1),
]


def test_run_files_measured_against_nugget_qrels_alone(tmp_path):
    write_nugget_qrels(tmp_path / "nuggets.trec", NUGGET_QRELS)
    run = {"q1": {"d2": 3.0, "d1": 2.0, "d9": 1.0}, "q10": {"d4": 2.0, "d6": 1.5}}
    write_trec_run(tmp_path / "mine.trec", run, "mine")
    arguments = [
        "evaluate",
        "--run",
        str(tmp_path / "mine.trec"),
        "--nugget-qrels",
        str(tmp_path / "nuggets.trec"),
        *(option for name in MEASURES for option in ("--measure", name)),
        "--json",
        str(tmp_path / "s.json"),
    ]
    result = runner.invoke(app, arguments)
    assert result.exit_code == 0, result.output
    assert "Coverage@20" in result.output and "alpha_nDCG@10" in result.output
    scores = json.loads((tmp_path / "s.json").read_text())
    expected = nugget_measures(run, read_nugget_qrels(tmp_path / "nuggets.trec"), MEASURES)
    assert set(scores["per_query"]) == set(expected.per_query) == {"q1", "q10"}
    for query_id, values in expected.per_query.items():
        assert scores["per_query"][query_id] == pytest.approx(values)
    assert list(scores["aggregate"]) == MEASURES
    # Query-level qrels derived from the nugget qrels: q1's relevant documents are d1 and d2.
    assert scores["per_query"]["q1"]["R@50"] == 1.0 and scores["per_query"]["q10"]["R@50"] == 0.5


def test_nugget_measures_without_nugget_qrels_are_refused_by_name(tmp_path):
    write_trec_run(tmp_path / "mine.trec", {"q1": {"d1": 1.0}}, "mine")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    result = runner.invoke(
        app,
        [
            "evaluate",
            "--run",
            str(tmp_path / "mine.trec"),
            "--qrels",
            str(tmp_path / "qrels.txt"),
            "--measure",
            "Coverage@20",
        ],
    )
    assert result.exit_code == 2 and "Coverage@20 needs nugget qrels" in result.output


def test_a_nuggets_benchmark_evaluated_with_its_nugget_qrels(tmp_path):
    questions, repository = write_questions(tmp_path / "qa.jsonl"), write_repository(tmp_path / "repo")
    embedder = register_embedder(HashingEmbedder())
    built = benchsmith.nuggets(
        questions,
        [repository],
        llm=register_model("scripted", ModelSeam(ScriptedBackend(replier=scripted_reply))),
        embedder=embedder,
        pool_depth=4,
        batch_size=5,
        min_chars=20,
        chunk_size=300,
        workspace=tmp_path / "ws",
        run_id="built",
    )
    scores = benchsmith.evaluate(
        built.benchmark,
        retrievers=["bm25", "dense"],
        measures=["nDCG@10", *MEASURES],
        nugget_qrels=built.nugget_qrels,
        embedder=embedder,
        workspace=tmp_path / "ws",
        run_id="scored",
        batch_size=2,
    )
    nugget_qrels = read_nugget_qrels(built.nugget_qrels)
    report = scores.results()
    assert report["settings"]["nugget_qrels"] == str(built.nugget_qrels)
    for configuration in report["configurations"]:
        values = scores.aggregate[configuration["name"]]
        assert set(values) == {"nDCG@10", *MEASURES}
        assert 0 < values["Coverage@20"] <= 1 and 0 < values["alpha_nDCG@10"] <= 1
        run = read_trec_run(scores.run_dir / configuration["run_file"])
        expected = nugget_measures(run, nugget_qrels, ["alpha_nDCG@10", "Coverage@20"]).per_query
        for query_id, measured in report["per_query"][configuration["name"]].items():
            assert measured["Coverage@20"] == pytest.approx(expected[query_id]["Coverage@20"])
            assert measured["alpha_nDCG@10"] == pytest.approx(expected[query_id]["alpha_nDCG@10"])


def test_run_files_measured_against_qrels_and_nugget_qrels_side_by_side(tmp_path):
    write_nugget_qrels(tmp_path / "nuggets.trec", NUGGET_QRELS)
    write_trec_qrels(tmp_path / "qrels.txt", [("q1", "d9", 1), ("q10", "d6", 1), ("q2", "d1", 1)])
    run = {"q1": {"d2": 3.0, "d1": 2.0, "d9": 1.0}, "q10": {"d4": 2.0, "d6": 1.5}, "q2": {"d1": 1.0}}
    write_trec_run(tmp_path / "mine.trec", run, "mine")
    asked = ["R@1", "Coverage@2", "R@3"]
    (scored,) = measure_runs(
        [tmp_path / "mine.trec"], tmp_path / "qrels.txt", asked, batch_size=1, nugget_qrels=tmp_path / "nuggets.trec"
    ).values()
    assert scored.measures == asked and list(scored.aggregate) == asked
    per_query = scored.per_query
    assert set(per_query) == {"q1", "q10", "q2"}  # the queries of --qrels, not of the nugget qrels
    # R@k against --qrels (d9 is q1's only relevant document: rank 3), not the derived qrels.
    assert per_query["q1"]["R@1"] == 0.0 and per_query["q1"]["R@3"] == 1.0 and per_query["q10"]["R@1"] == 0.0
    # Coverage against the nugget qrels: q1's top 2 (d2, d1) cover q1_1 and q1_10, not q1_2.
    assert per_query["q1"]["Coverage@2"] == pytest.approx(2 / 3) and per_query["q10"]["Coverage@2"] == 0.5
    assert per_query["q2"]["Coverage@2"] == 0.0  # judged, but without nuggets
    assert scored.aggregate["Coverage@2"] == pytest.approx((2 / 3 + 0.5 + 0.0) / 3)


def write_benchmark_nuggets(path):
    """Two nuggets per judged query of tests/test_evaluate_graph.py's benchmark (one its gold
    document supports, one the topic's history document does); none for comet_t2; a question
    the benchmark does not judge and a document its corpus lacks."""
    rows = []
    for topic in TOPICS:
        for turn, aspect in enumerate(ASPECTS):
            query_id = f"{topic}_t{turn}"
            if query_id == "comet_t2":
                continue
            rows += [
                (query_id, f"{query_id}_1", f"{topic}-{aspect}", 1),
                (query_id, f"{query_id}_2", f"{topic}-history", 1),
            ]
    rows += [("ghost_t9", "ghost_t9_1", "zebra-history", 1), ("zebra_t1", "zebra_t1_2", "nowhere-doc", 1)]
    write_nugget_qrels(path, rows)
    return path


def test_a_benchmark_with_run_files_gets_nugget_measures_whatever_the_batch_size(tmp_path):
    bench = write_benchmark(tmp_path / "bench")
    mine = write_system_run(tmp_path / "mine.trec", perfect_turns=(0, 1))
    nuggets_file = write_benchmark_nuggets(tmp_path / "nuggets.trec")
    measures = ["R@1", "alpha_nDCG@10", "Coverage@2"]
    result = runner.invoke(
        app,
        [
            "evaluate",
            str(bench),
            "--run",
            str(mine),
            "--nugget-qrels",
            str(nuggets_file),
            *(option for name in measures for option in ("--measure", name)),
            "--json",
            str(tmp_path / "s.json"),
            "-w",
            str(tmp_path / "ws"),
            "--run-id",
            "cli",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Coverage@2" in result.output and "alpha_nDCG@10" in result.output
    scores = json.loads((tmp_path / "s.json").read_text())["per_query"]["mine.trec"]
    expected = nugget_measures(read_trec_run(mine), read_nugget_qrels(nuggets_file), measures[1:]).per_query
    assert len(scores) == 24  # the benchmark's judged queries
    for query_id, values in scores.items():
        for name in measures[1:]:  # 0 for comet_t2, which has no nuggets
            assert values[name] == pytest.approx(expected.get(query_id, {}).get(name, 0.0)), (query_id, name)
    assert scores["zebra_t0"]["Coverage@2"] == 1.0 and scores["zebra_t2"]["Coverage@2"] == 0.0
    # The same through the API, two queries per batch: the same values.
    batched = benchsmith.evaluate(
        bench,
        runs=[mine],
        measures=measures,
        nugget_qrels=nuggets_file,
        batch_size=2,
        workspace=tmp_path / "ws",
        run_id="batched",
    )
    report = batched.results()
    assert report["per_query"]["mine.trec"] == scores
    assert batched.aggregate["mine.trec"]["Coverage@2"] == pytest.approx(
        sum(values["Coverage@2"] for values in scores.values()) / 24
    )
    assert report["settings"]["nugget_qrels"] == str(nuggets_file.resolve())
    assert any(str(nuggets_file.resolve()) in note and "Coverage@k" in note for note in report["notes"])
    assert batched.warnings == [
        f"{nuggets_file.resolve()}: 1 nugget-judged query ids without judgments to measure against ('ghost_t9'): "
        "they are not measured",
        f"{nuggets_file.resolve()}: 1 nugget-judged document ids not in the corpus (or without text) ('nowhere-doc'): "
        "no retriever can find them; coverage cannot reach 1 where they support a nugget",
    ]
    with pytest.raises(InputError, match=r"nugget-judged query ids .*'ghost_t9'"):
        benchsmith.evaluate(
            bench,
            runs=[mine],
            measures=measures,
            nugget_qrels=nuggets_file,
            strict=True,
            workspace=tmp_path / "ws",
            run_id="strict",
        )


def test_the_graph_refuses_nugget_measures_without_nugget_qrels(tmp_path):
    bench = write_benchmark(tmp_path / "bench")
    mine = write_system_run(tmp_path / "mine.trec", perfect_turns=(0,))
    workspace = Workspace(tmp_path / "ws")
    context = EvaluationContext(workspace=str(workspace.root), measures=("R@1", "alpha_nDCG@10"))
    inputs = {"run_id": "g", "benchmark": str(bench), "retrievers": [], "histories": [], "runs": [str(mine)]}
    with pytest.raises(InputError, match="alpha_nDCG@10 need nugget qrels"):
        run_job(builder, job="evaluate", workspace=workspace, run_id="g", inputs=inputs, context=context, settings={})
    with pytest.raises(InputError, match="Coverage@20 needs nugget qrels"):
        benchsmith.evaluate(bench, runs=[mine], measures=["Coverage@20"], workspace=tmp_path / "ws", run_id="api")
