"""`benchsmith select` as a user meets it: the dry run, clear errors, a kill -9 and resume that
judges no pair twice, and a demo-sized run on the standard library whose report a browser renders."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchsmith.agents.pool_judge import FactMatch
from benchsmith.cli import app
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from tests.chromium import chromium_or_skip, loaded_images, png_size, take_screenshot
from tests.openai_server import FakeOpenAIServer
from tests.select_fixtures import PASSAGE, QUESTION, TOPICS, write_labelled_corpus
from tests.stdlib_vectors import seed_stdlib_vectors

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner(env={"COLUMNS": "200"})
RELEVANT_TEXTS = {question: set(texts) for question, texts in TOPICS.values()}


def invoke(*arguments: str):
    return runner.invoke(app, ["select", *arguments])


def test_dry_run_lists_configurations_pool_and_cost_and_writes_nothing(tmp_path):
    corpus, queries, _ = write_labelled_corpus(tmp_path / "data")
    workspace = tmp_path / "ws"
    result = invoke(
        str(queries),
        "--corpus",
        str(corpus),
        "--retriever",
        "bm25",
        "--retriever",
        "dense",
        "--chunking",
        "whole",
        "--chunking",
        "size=40",
        "--top-k",
        "3",
        "--judge",
        "openai:gpt-4o-mini",
        "--dry-run",
        "-w",
        str(workspace),
    )
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "4 configuration(s) × 5 queries" in output
    assert "chunks(size=40) dense k=3" in output
    queries_count, documents = 5, sum(1 for _ in corpus.open())
    # Per query at least one top 3, at most four disjoint ones: 15 to 60 pairs.
    assert "expected pool: 15 to 60 (query, chunk) pairs" in output
    assert re.search(r"→ (\d+) model calls", output).group(1) == str(queries_count * 2)  # 12 pairs, 8 a call
    whole = int(
        re.search(r"judging the whole corpus instead: 5 queries × ([\d,]+) distinct chunks", output)
        .group(1)
        .replace(",", "")
    )
    assert whole > documents  # size=40 cuts the documents into more chunks
    assert not list((workspace / "runs").glob("*"))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["missing.txt"], "file not found"),
        (["{queries}", "--chunking", "size=10,overlap=20"], "overlap must be at least 0 and below the size"),
        (["{queries}", "--retriever", "sparse"], "unknown retriever 'sparse'"),
        (["{queries}", "--space", "{bad_space}"], "space.yaml:3: invalid YAML"),
        (["{queries}", "--space", "{unknown_space}"], "unknown key(s) rerankers"),
        (["{queries}", "--judge", "qrels:nowhere.tsv"], "qrels file"),
        (["{queries}", "--min-votes", "2"], "--min-votes 2 cannot be met by one judge (baseline)"),
        (
            ["{queries}"],
            "the audit's vote rule (2 judges) cannot be met by one judge (baseline): add another --judge, "
            "or pass --min-votes 1",
        ),
        (
            ["{queries}", "--judge", "baseline", "--judge", "qrels:{qrels}", "--min-votes", "3"],
            "--min-votes 3 needs at least 3 judges; 2 given",
        ),
        (
            [
                "{queries}",
                "--search",
                "staged",
                "--order",
                "retriever",
                "--top-k",
                "3",
                "--top-k",
                "5",
                "--retriever",
                "bm25",
                "--retriever",
                "dense",
            ],
            "missing top_k",
        ),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(tmp_path, arguments, message):
    corpus, queries, qrels = write_labelled_corpus(tmp_path / "data")
    bad_space = tmp_path / "space.yaml"
    bad_space.write_text("retriever: [bm25, dense]\ntop_k: 5\n  chunking: whole\n", encoding="utf-8")
    unknown_space = tmp_path / "unknown.yaml"
    unknown_space.write_text("rerankers: [none]\n", encoding="utf-8")
    filled = [
        argument.format(queries=queries, bad_space=bad_space, unknown_space=unknown_space, qrels=qrels)
        for argument in arguments
    ]
    if filled[0] == "missing.txt":
        filled[0] = str(tmp_path / "missing.txt")
    result = invoke(*filled, "--corpus", str(corpus), "-w", str(tmp_path / "ws"))
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert not list((tmp_path / "ws" / "runs").glob("*"))  # refused before any run record


# ---------------------------------------------------------------------------------------
# kill -9 mid-judging, then resume.


class HangingJudge:
    """The judge behind the loopback server: answers from the labels, records every (question,
    passage) it answered, and never answers request number ``hang_at`` (the process is killed
    while it waits)."""

    def __init__(self, hang_at: int):
        self.hang_at = hang_at
        self.requests = 0
        self.answered: list[tuple[str, str]] = []
        self.hanging = threading.Event()
        self.release = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> dict:
        content = body["messages"][-1]["content"]
        with self._lock:
            self.requests += 1
            hang = self.requests == self.hang_at
        if hang:
            self.hanging.set()
            self.release.wait(timeout=300)
            raise RuntimeError("the client was killed while this request waited")
        if body["response_format"]["json_schema"]["name"] == FactMatch.__name__:
            return {"rationale": "scripted", "same": False}
        question = QUESTION.search(content).group(1)
        judgments = []
        for number, passage in PASSAGE.findall(content):
            relevant = passage in RELEVANT_TEXTS[question]
            judgments.append(
                {
                    "passage": int(number),
                    "rationale": "scripted",
                    "relevant": relevant,
                    "facts": [passage] if relevant else [],
                }
            )
            with self._lock:
                self.answered.append((question, passage))
        return {"judgments": judgments}


@pytest.mark.slow
def test_sigkill_mid_judging_then_resume_judges_no_pair_twice(tmp_path):
    corpus, queries, _ = write_labelled_corpus(tmp_path / "data")
    workspace = Workspace.resolve(tmp_path / "ws")
    judgments = RunDirectory(workspace, "killed").file("judgments.jsonl")
    judge = HangingJudge(hang_at=5)
    with FakeOpenAIServer(replier=judge) as server:
        environment = {**os.environ, "OPENAI_API_KEY": "sk-test-kill", "OPENAI_BASE_URL": server.base_url}
        command = [
            sys.executable,
            "-m",
            "benchsmith.cli",
            "select",
            str(queries),
            "--corpus",
            str(corpus),
            "--retriever",
            "bm25",
            "--top-k",
            "3",
            "--top-k",
            "6",
            "--judge",
            "openai:sim",
            "--min-votes",
            "1",
            "--batch-size",
            "2",
            "--concurrency",
            "1",
            "--resamples",
            "50",
            "--run-id",
            "killed",
            "-w",
            str(workspace.root),
        ]
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        try:
            while not judge.hanging.wait(timeout=0.1):
                assert process.poll() is None, process.stdout.read()
            time.sleep(0.5)  # what the process would write next, it writes now
            process.send_signal(signal.SIGKILL)
            process.wait()
        finally:
            judge.release.set()
        written_at_kill = len(load_jsonl(judgments))
        answered_at_kill = len(judge.answered)
        # Four batches were answered before the fifth hung, each appended before the next was asked.
        assert written_at_kill == answered_at_kill and 4 <= written_at_kill <= 8

        resumed = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=600)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert "resumed from its last checkpoint" in resumed.stdout

    pool = load_jsonl(RunDirectory(workspace, "killed").file("pool.jsonl"))
    assert max(Counter(judge.answered).values()) == 1, "a pair was judged twice"
    assert len(judge.answered) == len(pool)
    records = load_jsonl(judgments)
    assert len(records) == len({record["pair"] for record in records}) == len(pool)
    selection = json.loads(RunDirectory(workspace, "killed").file("selection.json").read_text(encoding="utf-8"))
    auc = {c["name"]: c["pr_auc"] for c in selection["configurations"]}
    assert auc["chunks(whole) bm25 k=6"] >= auc["chunks(whole) bm25 k=3"]  # the same ranking, cut later


# ---------------------------------------------------------------------------------------
# The demo-sized run on the standard library.


@pytest.mark.slow
def test_demo_sized_run_on_the_standard_library_and_its_report_in_chromium(tmp_path):
    chromium = chromium_or_skip()
    workspace = tmp_path / "ws"
    seed_stdlib_vectors(workspace)  # the model's vectors of both chunkings: minutes of CPU (tests/stdlib_vectors.py)
    command = [
        sys.executable,
        "-m",
        "benchsmith.cli",
        "select",
        str(ROOT / "data" / "stdlib-queries.txt"),
        "--corpus",
        "stdlib",
        "--retriever",
        "bm25",
        "--retriever",
        "dense",
        "--retriever",
        "hybrid:rrf(dense,bm25)",
        "--chunking",
        "whole",
        "--chunking",
        "size=1024",
        "--top-k",
        "5",
        "--judge",
        "baseline",
        "--min-votes",
        "1",
        "--run-id",
        "demo-select",
        "-w",
        str(workspace),
    ]
    finished = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=1800, env={**os.environ, "COLUMNS": "200"}
    )
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "best: " in finished.stdout or "no winner: " in finished.stdout
    run_dir = RunDirectory(Workspace.resolve(workspace), "demo-select").path
    selection = json.loads((run_dir / "selection.json").read_text(encoding="utf-8"))
    assert len(selection["configurations"]) == 6
    assert selection["ranking"] == [c["name"] for c in selection["configurations"]]
    for configuration in selection["configurations"]:
        assert {"name", "settings", "pr_auc", "precision_at_k", "recall_at_k", "f_beta"} <= configuration.keys()
        assert set(configuration["precision_at_k"]) == {"1", "2", "3", "4", "5"}
        assert (run_dir / configuration["run_file"]).is_file()
    pr_auc = [c["pr_auc"] for c in selection["configurations"]]
    assert pr_auc == sorted(pr_auc, reverse=True) and 0 < pr_auc[-1] <= pr_auc[0] <= 1
    judgments = selection["judgments"]
    assert judgments["pool_pairs"] < judgments["whole_corpus_pairs"] / 20
    print(f"ranking: {[(c['name'], round(c['pr_auc'], 3)) for c in selection['configurations']]}")

    loaded, total = loaded_images(chromium, run_dir / "report.html", tmp_path)
    assert loaded == total == 1  # the precision–recall curves
    screenshot = take_screenshot(chromium, run_dir / "report.html", tmp_path / "select-report.png", (1280, 2400))
    assert png_size(screenshot.read_bytes()) == (1280, 2400) and screenshot.stat().st_size > 10_000


def test_the_summary_counts_the_verdicts_of_this_run_and_says_when_there_is_no_winner(tmp_path):
    """Offline verdicts are verdicts too: the summary once said "0 model verdicts in this run"
    beside 64 model calls. Identical configurations (whole documents and 40-word chunks of short
    documents) are a tie: no best line, no best-configuration.yaml."""
    corpus, queries, _ = write_labelled_corpus(tmp_path / "data")
    result = invoke(
        str(queries),
        "--corpus",
        str(corpus),
        "--retriever",
        "bm25",
        "--chunking",
        "whole",
        "--chunking",
        "size=40",
        "--top-k",
        "1",
        "--judge",
        "baseline",
        "--min-votes",
        "1",
        "--resamples",
        "100",
        "--run-id",
        "tie",
        "-w",
        str(tmp_path / "ws"),
    )
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    selection = json.loads((tmp_path / "ws" / "runs" / "tie" / "selection.json").read_text(encoding="utf-8"))
    pairs = selection["judgments"]["pool_pairs"]
    assert pairs > 0
    assert (
        f"{pairs} verdicts in this run: 0 asked of a model, 0 from the verdict store (cache hits of earlier runs), "
        f"{pairs} from the offline baseline or labels"
    ) in output
    assert "no winner:" in output and "best:" not in output
    assert selection["best"] is None and len(selection["tied"]) == 2
    assert not (tmp_path / "ws" / "runs" / "tie" / "best-configuration.yaml").exists()
