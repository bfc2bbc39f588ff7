"""`benchsmith nuggets` as users run it: the offline baseline from the command line with its
report in a real browser, and a kill -9 mid-judging through the real OpenAI client, resumed
without judging a batch twice."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchsmith.cli import app
from benchsmith.stores.formats.nugget_qrels import read_nugget_qrels
from benchsmith.stores.persistence.jsonl import load_jsonl
from tests.chromium import chromium_or_skip, run_chromium, take_screenshot
from tests.nugget_fixtures import QUESTIONS, server_replier, write_questions, write_repository
from tests.openai_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parent.parent


def command(questions: Path, repository: Path, workspace: Path, run_id: str, *options: str) -> list[str]:
    """The dense pooling embeds through the loopback server (``openai:hash``): what these tests
    guard is the run, not the default model, whose load (torch) would double each process's cost."""
    return [sys.executable, "-m", "benchsmith.cli", *arguments(questions, repository, workspace, run_id, *options)]


def arguments(questions: Path, repository: Path, workspace: Path, run_id: str, *options: str) -> list[str]:
    return [
        "nuggets",
        str(questions),
        "--corpus",
        str(repository),
        "--min-chars",
        "20",
        "--chunk-size",
        "300",
        "--embedder",
        "openai:hash",
        "--run-id",
        run_id,
        "-w",
        str(workspace),
        *options,
    ]


@pytest.mark.slow
def test_baseline_run_from_the_cli_and_its_report_in_chromium(tmp_path):
    questions, repository = write_questions(tmp_path / "qa.jsonl"), write_repository(tmp_path / "repo")
    with FakeOpenAIServer() as server:
        done = subprocess.run(
            command(questions, repository, tmp_path / "ws", "base", "--pool-depth", "5"),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "OPENAI_BASE_URL": server.base_url},
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert server.embedded_texts > 0  # the dense pooling embedded through the server
    assert re.search(r"\d+ of 6 questions kept", done.stdout), done.stdout
    # the baseline agents' calls are accounted for, and not called model calls: those are the
    # embedding server's requests alone
    usage = re.search(
        r"model calls: (\d+) \(0 from the cache, 0 retries\).*; ([\d,]+) answered by the offline "
        r"baseline",
        " ".join(done.stdout.split()),
    )
    assert usage and int(usage[1]) == len(server.embedding_requests) and int(usage[2].replace(",", "")) > 0, done.stdout
    run_dir = tmp_path / "ws" / "runs" / "base"
    qrels = read_nugget_qrels(run_dir / "nugget-qrels.trec")
    assert qrels and all(nugget.startswith(f"{question}_") for question, nuggets in qrels.items() for nugget in nuggets)

    # The lexical baseline judge never misses a pooled chunk that states a nugget word for word
    # (it also accepts the sibling facts that differ in one word: it is lexical).
    def text_of(doc_id: str) -> str:
        path, span = doc_id.rsplit(":", 1)
        start, end = map(int, span.split("-"))
        return (repository / path).read_bytes()[start:end].decode()

    checked = 0
    for record in load_jsonl(run_dir / "nuggets.jsonl"):
        for nugget in record["nuggets"]:
            (word,) = re.findall(r"zorb\d+", nugget["text"])
            pooled = nugget["relevant_corpus_ids"] + nugget["non_relevant_corpus_ids"]
            stating = {doc_id for doc_id in pooled if word in text_of(doc_id)}
            assert stating <= set(nugget["relevant_corpus_ids"])
            checked += len(stating)
    assert checked > 0

    # Run again, it reports the finished run (in this process: it only reads the run record).
    again = CliRunner().invoke(app, arguments(questions, repository, tmp_path / "ws", "base", "--pool-depth", "5"))
    assert again.exit_code == 0 and "already finished" in again.output, again.output

    chromium = chromium_or_skip()
    page = run_dir / "nuggets-report.html"
    dom = run_chromium(chromium, tmp_path, "--virtual-time-budget=3000", "--dump-dom", page.as_uri())
    assert "Pooling results (FreshStack Table 4 layout)" in dom.stdout
    assert dom.stdout.count("<tr>") >= 8 + 10  # the pooling rows and the nugget statistics
    screenshot = take_screenshot(chromium, page, tmp_path / "nuggets-report.png", (1280, 2400))
    assert screenshot.stat().st_size > 10_000


@pytest.mark.slow
def test_sigkill_mid_judging_then_resume_judges_no_batch_twice(tmp_path):
    questions, repository = write_questions(tmp_path / "qa.jsonl"), write_repository(tmp_path / "repo")
    workspace, concurrency = tmp_path / "ws", 2
    judgments = workspace / "runs" / "killed" / "judgments.jsonl"
    arguments = command(
        questions,
        repository,
        workspace,
        "killed",
        "--llm",
        "openai:sim",
        "--pool-depth",
        "3",
        "--batch-size",
        "2",
        "--concurrency",
        str(concurrency),
    )
    with FakeOpenAIServer(replier=server_replier, latency_s=0.05) as server:
        environment = {**os.environ, "OPENAI_API_KEY": "sk-test-kill", "OPENAI_BASE_URL": server.base_url}
        process = subprocess.Popen(
            arguments, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        deadline = time.monotonic() + 400
        while time.monotonic() < deadline:
            if judgments.exists() and len(judgments.read_text().splitlines()) >= 5:
                break
            assert process.poll() is None, process.stdout.read()
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
        judged_at_kill = len(judgments.read_text().splitlines())

        resumed = subprocess.run(arguments, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=600)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert "resumed from its last checkpoint" in resumed.stdout
        requests = [request for request in server.requests if "messages" in request]  # chat, not embeddings

    records = load_jsonl(judgments)
    batches = Counter(record["batch"] for record in records)
    assert judged_at_kill < len(records), "the run finished judging before it could be killed"
    assert max(batches.values()) == 1  # no batch recorded twice
    results = json.loads((workspace / "runs" / "killed" / "nuggets-results.json").read_text())
    assert len(records) == results["nuggets"]["support_calls"]
    by_schema = Counter(request["response_format"]["json_schema"]["name"] for request in requests)
    assert by_schema["Nuggets"] == by_schema["SubQuestions"] == by_schema["ClosedBookAnswer"] == QUESTIONS
    support_prompts = Counter(
        request["messages"][-1]["content"]
        for request in requests
        if request["response_format"]["json_schema"]["name"] == "SupportJudgments"
    )
    # Each batch was asked once, except those in flight at the kill, asked again on resume
    # (their replies never reached the cache).
    assert len(support_prompts) == len(records)
    assert sum(support_prompts.values()) - len(records) <= concurrency
