"""`benchsmith evaluate` as a user meets it: measuring run files, evaluating a BEIR
directory, and the messages bad input gets."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from benchsmith.cli import app
from benchsmith.evals.measures.standard import evaluate_run, parse_measures
from benchsmith.jobs.evaluate import measure_runs
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.trec import read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run
from tests.evaluate_fixtures import spoil_benchmark, write_benchmark, write_system_run

ROOT = Path(__file__).resolve().parent.parent
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
    result = invoke(
        "evaluate",
        "--run",
        str(tmp_path / "first.run"),
        "--qrels",
        str(qrels),
        "--measure",
        "nDCG@10",
        "--measure",
        "RR@10",
        "--measure",
        "Judged@10",
        "--json",
        str(tmp_path / "s.json"),
    )
    assert result.exit_code == 0, result.output
    assert "nDCG@10" in result.output and "RR@10" in result.output
    scores = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    expected = evaluate_run(
        parse_measures(["nDCG@10", "RR@10", "Judged@10"]), read_trec_qrels(qrels), read_trec_run(tmp_path / "first.run")
    )
    assert scores == {"aggregate": expected.aggregate, "per_query": expected.per_query}
    assert scores["per_query"]["q3"] == {"nDCG@10": 0.0, "RR@10": 0.0, "Judged@10": 0.0}  # judged, not retrieved
    assert scores["per_query"]["q2"]["RR@10"] == 0.5


def test_several_run_files_are_keyed_by_file(tmp_path):
    qrels = write_files(tmp_path)
    result = invoke(
        "evaluate",
        "--run",
        str(tmp_path / "first.run"),
        "--run",
        str(tmp_path / "second.run"),
        "--qrels",
        str(qrels),
        "--measure",
        "AP",
        "--json",
        str(tmp_path / "s.json"),
    )
    assert result.exit_code == 0, result.output
    scores = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["runs"]
    assert set(scores) == {str(tmp_path / "first.run"), str(tmp_path / "second.run")}
    assert (
        scores[str(tmp_path / "second.run")]["aggregate"]["AP"] > scores[str(tmp_path / "first.run")]["aggregate"]["AP"]
    )


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
    arguments = [
        "evaluate",
        str(bench),
        "--retriever",
        "bm25",
        "--history",
        "current",
        "--history",
        "oracle",
        "-w",
        str(tmp_path / "ws"),
        "--run-id",
        "ev",
        "--json",
        str(tmp_path / "scores.json"),
    ]
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


@pytest.mark.parametrize("header", ["query-id\tcorpus-id\tscore\n", ""])
def test_beir_qrels_are_read_by_qrels_with_or_without_header(tmp_path, header):
    trec_qrels = write_files(tmp_path)
    beir = tmp_path / "test.tsv"
    beir.write_text(
        header
        + "".join(
            f"{query}\t{doc}\t{relevance}\n"
            for query, _, doc, relevance in (
                line.split() for line in trec_qrels.read_text(encoding="utf-8").splitlines()
            )
        ),
        encoding="utf-8",
    )
    scores = {}
    for name, qrels in (("trec", trec_qrels), ("beir", beir)):
        result = invoke(
            "evaluate",
            "--run",
            str(tmp_path / "first.run"),
            "--qrels",
            str(qrels),
            "--measure",
            "nDCG@10",
            "--measure",
            "RR@10",
            "--json",
            str(tmp_path / f"{name}.json"),
        )
        assert result.exit_code == 0, result.output
        scores[name] = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
    assert scores["beir"] == scores["trec"] and scores["beir"]["per_query"]["q2"]["RR@10"] == 0.5


def test_run_files_only_measured_against_qrels_are_streamed_in_batches(tmp_path):
    qrels = write_files(tmp_path)
    whole = measure_runs([tmp_path / "first.run"], qrels, ["nDCG@10", "AP"])[str(tmp_path / "first.run")]
    batched = measure_runs([tmp_path / "first.run"], qrels, ["nDCG@10", "AP"], batch_size=1)[
        str(tmp_path / "first.run")
    ]
    assert batched.per_query == whole.per_query and batched.aggregate == whole.aggregate
    assert (
        whole.per_query
        == evaluate_run(
            parse_measures(["nDCG@10", "AP"]), read_trec_qrels(qrels), read_trec_run(tmp_path / "first.run")
        ).per_query
    )


def test_evaluating_my_own_run_file_on_a_benchmark_breaks_it_down_by_turn_and_switch(tmp_path):
    bench = write_benchmark(tmp_path / "bench")
    mine = write_system_run(tmp_path / "mine.trec", perfect_turns=(0, 2))
    result = invoke(
        "evaluate",
        str(bench),
        "--run",
        str(mine),
        "-w",
        str(tmp_path / "ws"),
        "--run-id",
        "own",
        "--measure",
        "R@1",
        "--measure",
        "nDCG@10",
    )
    assert result.exit_code == 0, result.output
    assert "mine.trec" in result.output and "warning" not in result.output
    results = json.loads((tmp_path / "ws" / "runs" / "own" / "results.json").read_text(encoding="utf-8"))
    assert list(results["aggregate"]) == ["mine.trec"]  # no --retriever: the run file alone
    assert {turn: values["R@1"] for turn, values in results["by_turn"]["mine.trec"].items()} == {
        "0": 1.0,
        "1": 0.0,
        "2": 1.0,
    }
    assert {switch: values["R@1"] for switch, values in results["by_switch"]["mine.trec"].items()} == {
        "start": 1.0,
        "soft": 0.0,
        "hard": 1.0,
    }
    # Beside a retriever: both in every breakdown and in the significance tests.
    result = invoke(
        "evaluate",
        str(bench),
        "--run",
        str(mine),
        "--retriever",
        "bm25",
        "--history",
        "oracle",
        "-w",
        str(tmp_path / "ws"),
        "--run-id",
        "both",
        "--measure",
        "R@1",
    )
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "ws" / "runs" / "both" / "results.json").read_text(encoding="utf-8"))
    assert set(results["by_turn"]) == set(results["by_switch"]) == {"mine.trec", "bm25@oracle"}
    assert [(c["first"], c["second"]) for c in results["significance"]["comparisons"]] == [("mine.trec", "bm25@oracle")]


def test_unknown_and_duplicate_ids_print_warnings_and_strict_stops(tmp_path):
    bench = write_benchmark(tmp_path / "bench")
    spoil_benchmark(bench)
    arguments = ["evaluate", str(bench), "--retriever", "bm25", "--history", "current", "-w", str(tmp_path / "ws")]
    result = invoke(*arguments, "--run-id", "warned")
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())  # rich wraps long lines
    assert "warning:" in output and "'ghost_t0'" in output and "'nowhere-doc'" in output
    assert "'zebra-history ×2'" in output and str(bench / "qrels" / "test.tsv") in output
    result = invoke(*arguments, "--run-id", "strict", "--strict")
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert f"{bench / 'corpus.jsonl'}: 1 duplicate document ids ('zebra-history ×2')" in message
    assert "--strict makes this an error" in message and "Traceback" not in result.output
    assert not (tmp_path / "ws" / "runs" / "strict").exists()  # stopped before any work


def test_the_python_api_takes_run_files_and_reports_warnings(tmp_path):
    import benchsmith

    bench = write_benchmark(tmp_path / "bench")
    mine = write_system_run(tmp_path / "mine.trec", perfect_turns=(0,))
    with mine.open("a", encoding="utf-8") as handle:
        handle.write("stray_q Q0 zebra-history 1 1.0 mine\n")
    result = benchsmith.evaluate(bench, runs=[mine], measures=["R@1"], workspace=tmp_path / "ws", run_id="api")
    assert list(result.aggregate) == ["mine.trec"] and result.aggregate["mine.trec"]["R@1"] == pytest.approx(1 / 3)
    assert result.warnings == [
        f"{mine}: 1 query ids not among the benchmark's queries ('stray_q'): they are not measured"
    ]
    assert result.results()["by_turn"]["mine.trec"]["0"]["R@1"] == 1.0
    with pytest.raises(InputError, match="'stray_q'"):
        benchsmith.evaluate(bench, runs=[mine], workspace=tmp_path / "ws", run_id="api-strict", strict=True)


WIDE_QUERIES = 1500  # their run file is written over about a second: the kill lands in it


def write_wide_benchmark(directory: Path, queries: int = WIDE_QUERIES, documents: int = 300) -> Path:
    """Many single-turn queries: BM25 over them takes long enough to be killed midway."""
    rng = np.random.default_rng(3)
    words = [f"w{i:03d}" for i in range(400)]
    (directory / "qrels").mkdir(parents=True)
    texts = [" ".join(rng.choice(words, size=30)) for _ in range(documents)]
    (directory / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": f"d{i}", "title": "", "text": text}) + "\n" for i, text in enumerate(texts)),
        encoding="utf-8",
    )
    gold = rng.integers(documents, size=queries)
    (directory / "queries.jsonl").write_text(
        "".join(
            json.dumps({"_id": f"q{i:05d}", "text": " ".join(texts[doc].split()[:4])}) + "\n"
            for i, doc in enumerate(gold)
        ),
        encoding="utf-8",
    )
    (directory / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{i:05d}\td{doc}\t1\n" for i, doc in enumerate(gold)),
        encoding="utf-8",
    )
    return directory


@pytest.mark.slow
def test_sigkill_mid_configuration_leaves_no_run_file_and_resume_completes_it(tmp_path):
    bench = write_wide_benchmark(tmp_path / "bench")
    command = [
        sys.executable,
        "-m",
        "benchsmith.cli",
        "evaluate",
        str(bench),
        "--retriever",
        "bm25",
        "--history",
        "current",
        "--batch-size",
        "1",
        "--measure",
        "R@5",
        "--run-id",
        "killed",
    ]
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    killed = tmp_path / "ws" / "runs" / "killed" / "run-files"
    process = subprocess.Popen(
        [*command, "-w", str(tmp_path / "ws")],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 300

    def writing() -> bool:
        """The run file's writer holds its temporary open with data in it: an unnamed file in the
        run-files folder (stores/persistence/files.py), seen among the process's open files."""
        try:
            descriptors = list(Path(f"/proc/{process.pid}/fd").iterdir())
        except OSError:
            return False
        for descriptor in descriptors:
            try:
                if os.readlink(descriptor).startswith(f"{killed}/") and descriptor.stat().st_size > 0:
                    return True
            except OSError:
                continue  # closed meanwhile
        return False

    while time.monotonic() < deadline and not writing():
        assert process.poll() is None, process.stdout.read()
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert not (killed / "bm25_current.trec").exists()  # the partial file was never taken as a run
    assert not list(killed.glob("*.tmp"))  # and nothing of it is left

    resumed = subprocess.run(
        [*command, "-w", str(tmp_path / "ws")], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=600
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    # The uninterrupted run to compare with: the same job through the Python API, in this process.
    import benchsmith

    benchsmith.evaluate(
        bench,
        retrievers=["bm25"],
        histories=["current"],
        batch_size=1,
        measures=["R@5"],
        workspace=tmp_path / "clean",
        run_id="killed",
    )
    finished = (killed / "bm25_current.trec").read_text(encoding="utf-8")
    assert finished == (tmp_path / "clean" / "runs" / "killed" / "run-files" / "bm25_current.trec").read_text(
        encoding="utf-8"
    )
    assert len({line.split()[0] for line in finished.splitlines()}) == WIDE_QUERIES
    results = [
        json.loads((tmp_path / ws / "runs" / "killed" / "results.json").read_text(encoding="utf-8"))
        for ws in ("ws", "clean")
    ]
    assert results[0]["aggregate"] == results[1]["aggregate"]


def test_the_terminal_shows_every_measure_and_the_per_switch_table_at_80_columns(tmp_path):
    from benchsmith.evals.measures.standard import DEFAULT_MEASURES

    benchmark = write_benchmark(tmp_path / "bench")
    narrow = CliRunner(env={"COLUMNS": "80"})
    result = narrow.invoke(
        app,
        [
            "evaluate",
            str(benchmark),
            "--retriever",
            "bm25",
            "--history",
            "full",
            "--history",
            "current",
            "-w",
            str(tmp_path / "ws"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    headers = " ".join(result.output.split())
    for measure in DEFAULT_MEASURES:
        assert str(measure) in headers, measure
    assert "per switch type" in headers
    for switch in ("start", "soft", "hard"):  # the fixture's switch types
        assert switch in headers, switch


def test_an_audit_that_confirmed_nothing_leaves_extra_qrels_that_add_nothing(tmp_path):
    from benchsmith.stores.formats.benchmark_files import write_beir_qrels

    benchmark = write_benchmark(tmp_path / "bench")
    extra = tmp_path / "extra_qrels.tsv"
    write_beir_qrels(extra, [])  # what audit writes when no missing gold is confirmed: a header alone
    arguments = [str(benchmark), "--retriever", "bm25", "--history", "full", "--measure", "nDCG@10"]
    plain = invoke("evaluate", *arguments, "--run-id", "plain", "-w", str(tmp_path / "ws"))
    merged = invoke(
        "evaluate", *arguments, "--extra-qrels", str(extra), "--run-id", "merged", "-w", str(tmp_path / "ws")
    )
    assert plain.exit_code == 0 and merged.exit_code == 0, merged.output
    scores = [
        json.loads((tmp_path / "ws" / "runs" / run / "results.json").read_text(encoding="utf-8"))["aggregate"]
        for run in ("plain", "merged")
    ]
    assert scores[0] == scores[1]
    # A file that has judgments but a bad line is still an error.
    extra.write_text("query-id\tcorpus-id\tscore\nq1\n", encoding="utf-8")
    broken = invoke("evaluate", *arguments, "--extra-qrels", str(extra), "-w", str(tmp_path / "ws"))
    assert broken.exit_code == 2 and "extra_qrels.tsv:2" in broken.output
