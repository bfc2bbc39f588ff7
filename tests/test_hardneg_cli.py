"""`benchsmith hardneg build | score` as a user meets them: the offline baseline end to end from
the command line, the report in a real browser, a kill -9 mid-build that the resume finishes
without rebuilding a finished document, and scoring as a run that `benchsmith runs` lists,
that resumes after a crash and that reports itself finished."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchsmith.cli import app
from tests.chromium import chromium_or_skip, loaded_images, png_size, take_screenshot
from tests.hardneg_fixtures import STATIONS, ScriptedHardnegAgents, write_corpus
from tests.openai_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner(env={"COLUMNS": "200"})


def benchsmith(*arguments: str, environment: dict[str, str] | None = None, timeout: float = 600):
    return subprocess.run(
        [sys.executable, "-m", "benchsmith.cli", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **(environment or {})},
    )


def test_help_teaches_both_commands():
    result = runner.invoke(app, ["hardneg", "--help"])
    assert result.exit_code == 0 and "build" in result.output and "score" in result.output
    build_help = runner.invoke(app, ["hardneg", "build", "--help"]).output
    for option in ("--domain", "--features", "--conditions", "--negatives", "--collection", "--dry-run"):
        assert option in build_help
    assert "--task1" in runner.invoke(app, ["hardneg", "score", "--help"]).output


def test_dry_run_and_bad_settings_from_the_cli(tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    result = runner.invoke(
        app, ["hardneg", "build", str(corpus), "--conditions", "4", "--dry-run", "-w", str(tmp_path / "ws")]
    )
    assert result.exit_code == 0, result.output
    assert "dry run: 7 source documents × 4 conditions → 105 model calls" in result.output
    result = runner.invoke(app, ["hardneg", "build", str(corpus), "--domain", "poetry", "-w", str(tmp_path / "ws")])
    assert (
        result.exit_code == 2
        and "--domain must be one of books, movies, people, medical, legal, custom" in result.output
    )
    result = runner.invoke(app, ["hardneg", "score", "-w", str(tmp_path / "ws")])
    assert result.exit_code == 2 and "give a DATASET" in result.output


@pytest.fixture(scope="module")
def baseline_run(tmp_path_factory):
    """The offline baseline, built and scored by the CLI in subprocesses, as a user runs it. The dense
    scorer embeds through the loopback embedding server: loading the default model (torch) is not
    what these tests guard."""
    root = tmp_path_factory.mktemp("hardneg-cli")
    corpus = write_corpus(root / "corpus")
    workspace = root / "ws"
    built = benchsmith(
        "hardneg",
        "build",
        str(corpus),
        "--domain",
        "custom",
        "--features",
        "station facts",
        "--conditions",
        "4",
        "--run-id",
        "base",
        "-w",
        str(workspace),
    )
    with FakeOpenAIServer() as server:
        scored = benchsmith(
            "hardneg",
            "score",
            "base",
            "--retriever",
            "bm25",
            "--retriever",
            "dense",
            "--embedder",
            "openai:hash",
            "--json",
            str(root / "measures.json"),
            "-w",
            str(workspace),
            environment={"OPENAI_BASE_URL": server.base_url},
        )
        embedded = server.embedded_texts
    return {
        "root": root,
        "workspace": workspace,
        "built": built,
        "scored": scored,
        "embedded": embedded,
        "run_dir": workspace / "runs" / "base",
    }


@pytest.mark.slow
def test_baseline_build_and_score_run_end_to_end_from_the_cli(baseline_run):
    built, scored, run_dir = baseline_run["built"], baseline_run["scored"], baseline_run["run_dir"]
    assert built.returncode == 0, built.stdout + built.stderr
    assert "rows kept" in built.stdout and "dropped: fewer conditions" in built.stdout
    for name in (
        "rows.jsonl",
        "stats.json",
        "multiconir/hardneg.csv",
        "multiconir/Task1.csv",
        "multiconir/Task2_&_3.csv",
        "beir/task1/corpus.jsonl",
        "beir/task2/qrels/test.tsv",
        "beir/task3/queries.jsonl",
    ):
        assert (run_dir / name).exists(), name
    assert scored.returncode == 0, scored.stdout + scored.stderr
    assert "bm25-corpus" in scored.stdout and "bm25-row" in scored.stdout and "dense" in scored.stdout
    assert baseline_run["embedded"] > 0  # the dense scorer embedded through the server
    scores = run_dir / "scores"
    for label in ("bm25-corpus", "bm25-row", "dense"):
        for task in ("task1", "task2", "task3"):
            assert (scores / f"{label}_{task}_results.csv").exists()
    measures = json.loads((baseline_run["root"] / "measures.json").read_text())
    assert set(measures["scorers"]) == {"bm25-corpus", "bm25-row", "dense"}
    assert set(measures["scorers"]["dense"]) == {"task1", "task2", "task3"}
    # Re-scoring the written tables from the CLI gives the same numbers.
    rescored = runner.invoke(
        app,
        [
            "hardneg",
            "score",
            "--task1",
            str(scores / "dense_task1_results.csv"),
            "--task2",
            str(scores / "dense_task2_results.csv"),
            "--task3",
            str(scores / "dense_task3_results.csv"),
            "--json",
            str(baseline_run["root"] / "dense.json"),
        ],
    )
    assert rescored.exit_code == 0, rescored.output
    assert json.loads((baseline_run["root"] / "dense.json").read_text()) == measures["scorers"]["dense"]
    # Running the build again reports it without redoing it (in this process: the subprocesses above
    # are the end-to-end runs; this one only reads the finished run record).
    again = runner.invoke(
        app,
        [
            "hardneg",
            "build",
            str(baseline_run["root"] / "corpus"),
            "--domain",
            "custom",
            "--features",
            "station facts",
            "--conditions",
            "4",
            "--run-id",
            "base",
            "-w",
            str(baseline_run["workspace"]),
        ],
    )
    assert again.exit_code == 0 and "already finished" in again.output, again.output


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_or_skip()


@pytest.mark.slow
def test_chromium_renders_the_report_with_every_plot_loaded(chromium, baseline_run, tmp_path):
    page = baseline_run["run_dir"] / "scores" / "hardneg-report.html"
    assert baseline_run["scored"].returncode == 0
    loaded, total = loaded_images(chromium, page, tmp_path)
    assert loaded == total == 3  # win rate against k, the monotonicity ladder, the flip rates
    screenshot = take_screenshot(chromium, page, tmp_path / "hardneg-report.png", (1280, 3600))
    assert screenshot.stat().st_size > 10_000 and png_size(screenshot.read_bytes()) == (1280, 3600)
    print(f"screenshot of hardneg-report.html: {screenshot}")


@pytest.mark.slow
def test_sigkill_mid_build_then_resume_rebuilds_no_finished_document(tmp_path):
    stations = 10
    corpus = write_corpus(tmp_path / "corpus", stations=stations, short=False)
    workspace = tmp_path / "ws"
    rows = workspace / "runs" / "killed" / "rows.jsonl"
    agents = ScriptedHardnegAgents()
    command = [
        sys.executable,
        "-m",
        "benchsmith.cli",
        "hardneg",
        "build",
        str(corpus),
        "--conditions",
        "4",
        "--llm",
        "openai:sim",
        "--concurrency",
        "2",
        "--run-id",
        "killed",
        "-w",
        str(workspace),
    ]
    with FakeOpenAIServer(replier=agents.server_replier, latency_s=0.05) as server:
        environment = {
            **os.environ,
            "OPENAI_API_KEY": "sk-test-kill",
            "OPENAI_BASE_URL": server.base_url,
            "HF_HUB_OFFLINE": "1",
        }
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if rows.exists() and len(rows.read_text().splitlines()) >= 3:
                break
            assert process.poll() is None, process.stdout.read()
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
        finished = [json.loads(line)["id"] for line in rows.read_text().splitlines()]
        requests_at_kill = len(server.requests)
        assert len(finished) < stations, "the build finished before it could be killed"

        resumed = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert "resumed from its last checkpoint" in resumed.stdout
        after_kill = server.requests[requests_at_kill:]

    written = [json.loads(line) for line in rows.read_text().splitlines()]
    assert sorted(record["id"] for record in written) == sorted(f"{name.lower()}.txt" for name in STATIONS[:stations])
    names = {f"{name.lower()}.txt": name for name in STATIONS}
    for request in after_kill:  # nothing about a finished document was asked again
        prompt = request["messages"][-1]["content"]
        assert not any(names[document_id] in prompt for document_id in finished), prompt[:200]
    extractions = [
        request
        for request in server.requests
        if request["response_format"]["json_schema"]["name"] == "ExtractedConditions"
    ]
    assert stations <= len(extractions) <= stations + 2  # at most the two in flight were asked twice


class DyingScorer:
    """A reranker that raises on its first call while ``dying``: a scoring run cut off mid-way."""

    def __init__(self) -> None:
        self.dying, self.calls = True, 0

    def __call__(self, pairs):
        self.calls += 1
        if self.dying:
            self.dying = False
            raise RuntimeError("scorer died mid-way")
        return [float(len(document)) for _, document in pairs]


def test_score_is_a_run_that_runs_lists_resumes_and_reports_finished(tmp_path):
    import benchsmith
    from benchsmith.graphs.runtime.resources import register_scorer

    workspace = tmp_path / "ws"
    built = benchsmith.build_hardneg(
        [write_corpus(tmp_path / "corpus")], conditions=3, workspace=workspace, run_id="built"
    )
    dying = DyingScorer()
    register_scorer("dying", dying)
    command = [
        "hardneg",
        "score",
        "built",
        "--retriever",
        "bm25:row",
        "--rerank",
        "dying",
        "--run-id",
        "scored",
        "-w",
        str(workspace),
    ]
    crashed = runner.invoke(app, command)
    assert crashed.exit_code == 1, crashed.output
    assert "run scored failed" in crashed.output and "Resume with:" in crashed.output
    listed = runner.invoke(app, ["runs", "-w", str(workspace)]).output
    assert "scored" in listed and "hardneg-score" in listed and "crashed" in listed

    resumed = runner.invoke(app, command)
    assert resumed.exit_code == 0, resumed.output
    assert "resumed from its last checkpoint" in resumed.output and "rerank:dying" in resumed.output
    calls = dying.calls
    listed = runner.invoke(app, ["runs", "-w", str(workspace)]).output
    row = next(line for line in listed.splitlines() if "hardneg-score" in line)
    assert "finished" in row and "2 scorers" in row
    tables = built.run_dir / "scores"
    assert {path.name for path in tables.glob("*_task1_results.csv")} == {
        "bm25-row_task1_results.csv",
        "rerank_dying_task1_results.csv",
    }

    again = runner.invoke(app, [*command, "--json", str(tmp_path / "measures.json")])
    assert again.exit_code == 0, again.output
    assert "already finished" in again.output and dying.calls == calls  # nothing scored again
    assert set(json.loads((tmp_path / "measures.json").read_text())["scorers"]) == {"bm25-row", "rerank:dying"}


def test_score_dry_run_names_the_rows_and_scorers_and_makes_no_run(tmp_path):
    import benchsmith

    workspace = tmp_path / "ws"
    built = benchsmith.build_hardneg(
        [write_corpus(tmp_path / "corpus")], conditions=3, workspace=workspace, run_id="built"
    )
    result = runner.invoke(
        app,
        [
            "hardneg",
            "score",
            "built",
            "--retriever",
            "bm25:row",
            "--retriever",
            "dense",
            "--dry-run",
            "-w",
            str(workspace),
        ],
    )
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert f"{built.rows:,} rows of {built.run_dir}" in output and "2 scorer(s) (bm25-row, dense)" in output
    assert "0 model calls" in output and str(built.run_dir / "scores") in output
    assert [path.name for path in (workspace / "runs").iterdir()] == ["built"]
    refused = runner.invoke(app, ["hardneg", "score", "--task1", str(tmp_path / "t.csv"), "--dry-run"])
    assert refused.exit_code == 2 and "(no run)" in refused.output


def test_bad_score_input_exits_2_and_makes_no_run(tmp_path):
    workspace = tmp_path / "ws"
    for arguments, message in (
        (["nothing-here", "--retriever", "bm25"], "neither a hardneg build run"),
        ([str(tmp_path), "--retriever", "hybrid:rrf(dense,bm25)"], "pairs are scored one by one"),
        ([str(tmp_path), "--rerank", "no-such-cross-encoder"], "not on this machine"),
    ):
        result = runner.invoke(app, ["hardneg", "score", *arguments, "--run-id", "bad", "-w", str(workspace)])
        assert result.exit_code == 2 and message in result.output, result.output
    assert not (workspace / "runs" / "bad").exists()
    assert "no runs" in runner.invoke(app, ["runs", "-w", str(workspace)]).output
    tables_with_a_run_id = runner.invoke(app, ["hardneg", "score", "--task1", str(tmp_path / "t.csv"), "--run-id", "x"])
    assert tables_with_a_run_id.exit_code == 2 and "(no run)" in tables_with_a_run_id.output


KILLABLE_SCORING = """
import sys, time
import benchsmith
from benchsmith.graphs.runtime.resources import register_scorer
dataset, workspace, log, pause = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
calls = []

def scorer(name):
    def score(pairs):
        calls.append(name)
        with open(log, "a") as handle:
            handle.write(name + "\\n")
        if len(calls) == 2:  # the second reranker of this process stalls (the first one has finished)
            time.sleep(pause)
        return [float(len(set(query.split()) & set(document.split()))) for query, document in pairs]
    return score

register_scorer("one", scorer("one"))
register_scorer("two", scorer("two"))
benchsmith.score_hardneg(dataset, retrievers=["bm25:row"], rerankers=["one", "two"], workspace=workspace,
                         run_id="killed")
"""


@pytest.mark.slow
def test_sigkill_mid_scoring_then_resume_scores_only_the_unfinished_scorer(tmp_path):
    import benchsmith
    from benchsmith.stores.persistence.runs import RunDirectory
    from benchsmith.stores.persistence.workspace import Workspace

    workspace, log = tmp_path / "ws", tmp_path / "calls.log"
    built = benchsmith.build_hardneg(
        [write_corpus(tmp_path / "corpus")], conditions=3, workspace=workspace, run_id="built"
    )
    command = [sys.executable, "-c", KILLABLE_SCORING, str(built.run_dir), str(workspace), str(log)]
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    process = subprocess.Popen(
        [*command, "120"], cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    deadline = time.monotonic() + 120
    while not (log.exists() and len(log.read_text().split()) == 2):  # one reranker done, the other stalled
        assert process.poll() is None and time.monotonic() < deadline, process.stdout.read()
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert RunDirectory(Workspace.resolve(workspace), "killed").load().effective_status() == "interrupted"
    finished, stalled = log.read_text().split()

    resumed = subprocess.run([*command, "0"], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert log.read_text().split() == [finished, stalled, stalled]  # the finished scorer was not run again
    assert RunDirectory(Workspace.resolve(workspace), "killed").load().status == "finished"
    results = json.loads((built.run_dir / "scores" / "hardneg-scores.json").read_text())
    assert list(results["scorers"]) == ["bm25-row", "rerank:one", "rerank:two"]
    listed = runner.invoke(app, ["runs", "-w", str(workspace)]).output
    assert "killed" in listed and "3 scorers" in listed
