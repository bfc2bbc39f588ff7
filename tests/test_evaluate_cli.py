"""`benchsmith evaluate` as a user meets it: measuring run files, evaluating a BEIR
directory, and the messages bad input gets."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from benchsmith.evals.measures import evaluate_run, parse_measures
from benchsmith.graphs.cli import app
from benchsmith.stores.trec import read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run
from tests.test_evaluate_graph import write_benchmark

runner = CliRunner(env={"COLUMNS": "200"})


def invoke(*arguments: str):
    return runner.invoke(app, list(arguments))


def write_files(tmp_path):
    qrels = [("q1", "a", 1), ("q1", "b", 2), ("q2", "c", 1), ("q3", "d", 1)]
    write_trec_qrels(tmp_path / "qrels.txt", qrels)
    write_trec_run(tmp_path / "first.run", {"q1": {"b": 3.0, "x": 2.0, "a": 1.0}, "q2": {"y": 2.0, "c": 1.0}}, "first")
    write_trec_run(tmp_path / "second.run", {"q1": {"a": 3.0}, "q2": {"c": 5.0}, "q3": {"d": 1.0}}, "second")
    return tmp_path / "qrels.txt"


def test_run_and_qrels_only_measure_and_write_the_documented_json(tmp_path):
    qrels = write_files(tmp_path)
    result = invoke("evaluate", "--run", str(tmp_path / "first.run"), "--qrels", str(qrels),
                    "--measure", "nDCG@10", "--measure", "RR@10", "--measure", "Judged@10", "--json", str(tmp_path / "s.json"))
    assert result.exit_code == 0, result.output
    assert "nDCG@10" in result.output and "RR@10" in result.output
    scores = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    expected = evaluate_run(parse_measures(["nDCG@10", "RR@10", "Judged@10"]), read_trec_qrels(qrels),
                            read_trec_run(tmp_path / "first.run"))
    assert scores == {"aggregate": expected.aggregate, "per_query": expected.per_query}
    assert scores["per_query"]["q3"] == {"nDCG@10": 0.0, "RR@10": 0.0, "Judged@10": 0.0}  # judged, not retrieved
    assert scores["per_query"]["q2"]["RR@10"] == 0.5


def test_several_run_files_are_keyed_by_file(tmp_path):
    qrels = write_files(tmp_path)
    result = invoke("evaluate", "--run", str(tmp_path / "first.run"), "--run", str(tmp_path / "second.run"),
                    "--qrels", str(qrels), "--measure", "AP", "--json", str(tmp_path / "s.json"))
    assert result.exit_code == 0, result.output
    scores = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["runs"]
    assert set(scores) == {str(tmp_path / "first.run"), str(tmp_path / "second.run")}
    assert scores[str(tmp_path / "second.run")]["aggregate"]["AP"] > scores[str(tmp_path / "first.run")]["aggregate"]["AP"]


def test_malformed_run_line_names_file_and_line(tmp_path):
    qrels = write_files(tmp_path)
    (tmp_path / "bad.run").write_text("q1 Q0 a 1 3.0 tag\nq1 Q0 b 2\n", encoding="utf-8")
    result = invoke("evaluate", "--run", str(tmp_path / "bad.run"), "--qrels", str(qrels))
    assert result.exit_code == 2
    assert f"{tmp_path / 'bad.run'}:2" in result.output


def test_unknown_measure_and_retriever_exit_2_naming_them(tmp_path):
    qrels = write_files(tmp_path)
    result = invoke("evaluate", "--run", str(tmp_path / "first.run"), "--qrels", str(qrels), "--measure", "nDCG@x")
    assert result.exit_code == 2 and "nDCG@x" in result.output
    bench = write_benchmark(tmp_path / "bench")
    result = invoke("evaluate", str(bench), "--retriever", "hybrid:max(dense,bm25)", "-w", str(tmp_path / "ws"))
    assert result.exit_code == 2 and "max" in result.output


def test_malformed_beir_line_exits_2_naming_file_and_line(tmp_path):
    bench = write_benchmark(tmp_path / "bench")
    lines = (bench / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    lines[4] = lines[4][:-1]  # drop the closing brace
    (bench / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = invoke("evaluate", str(bench), "--retriever", "bm25", "-w", str(tmp_path / "ws"), "--run-id", "bad")
    assert result.exit_code == 2
    assert f"{bench / 'queries.jsonl'}:5" in result.output
    assert "Traceback" not in result.output


def test_evaluating_a_beir_directory_writes_report_runs_and_json(tmp_path):
    bench = write_benchmark(tmp_path / "bench")
    arguments = ["evaluate", str(bench), "--retriever", "bm25", "--history", "current", "--history", "oracle",
                 "-w", str(tmp_path / "ws"), "--run-id", "ev", "--json", str(tmp_path / "scores.json")]
    result = invoke(*arguments)
    assert result.exit_code == 0, result.output
    run_dir = tmp_path / "ws" / "runs" / "ev"
    assert {p.name for p in (run_dir / "run-files").iterdir()} == {"bm25_current.trec", "bm25_oracle.trec"}
    for name in ("report.md", "report.html", "results.json"):
        assert (run_dir / name).exists()
    scores = json.loads((tmp_path / "scores.json").read_text(encoding="utf-8"))
    assert scores["aggregate"]["bm25@oracle"]["R@1"] > scores["aggregate"]["bm25@current"]["R@1"]
    assert str(run_dir / "report.html") in result.output
    again = invoke(*arguments)  # a finished run is reported, not redone
    assert again.exit_code == 0 and "already finished" in again.output
