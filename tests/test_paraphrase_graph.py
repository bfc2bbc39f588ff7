"""The paraphrase graph with scripted agents: CQR where the benchmark has no rewrite, K
paraphrases, context restoration, the filters, ECAsT rows joined, the test sets and the
report (rendered in headless Chromium); and a SIGKILLed CLI run resumed without paraphrasing
a turn twice."""

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

from benchsmith.agents.seam.backends import ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.graphs.contexts.paraphrase import ParaphraseContext
from benchsmith.graphs.paraphrase.graph import builder
from benchsmith.graphs.paraphrase.state import GENERATED_FILE
from benchsmith.graphs.runtime.resources import register_embedder, register_model
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.jobs.paraphrase import estimate_paraphrase
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.workspace import Workspace
from tests.chromium import chromium_or_skip, loaded_images
from tests.embedders import HashingEmbedder
from tests.openai_server import FakeOpenAIServer
from tests.paraphrase_fixtures import scripted_reply, server_replier, write_cast_files

ROOT = Path(__file__).resolve().parent.parent


def run_paraphrase(workspace: Workspace, run_id: str, benchmarks: list[Path], **options):
    backend = ScriptedBackend(replier=scripted_reply)
    context = ParaphraseContext(
        workspace=str(workspace.root),
        llm=register_model("scripted-paraphraser", ModelSeam(backend)),
        embedder=register_embedder(HashingEmbedder()),
        min_similarity=0.3,
        **options,
    )
    outcome = run_job(
        builder,
        job="paraphrase",
        workspace=workspace,
        run_id=run_id,
        inputs={"run_id": run_id, "benchmarks": [str(path) for path in benchmarks]},
        context=context,
        settings={},
        max_concurrency=2,
    )
    return outcome, backend


def calls_by_schema(backend: ScriptedBackend) -> Counter:
    return Counter(schema.__name__ for _, schema in backend.calls)


def test_generation_filters_joins_and_exports_test_sets(tmp_path):
    files = write_cast_files(tmp_path / "cast")
    workspace = Workspace.resolve(tmp_path / "ws")
    # No resolved file: the 2019 turns with history get a CQR rewrite through the seam.
    outcome, backend = run_paraphrase(
        workspace,
        "p1",
        [files["2019"], files["2020"]],
        per_turn=4,
        import_ecast=str(files["ecast"]),
        test_sets=3,
        judges=("scripted-paraphraser",),
    )
    run_dir = outcome.run_dir
    calls = calls_by_schema(backend)
    assert calls["Paraphrases"] == 7  # once per turn
    assert calls["RewrittenQuery"] == 3  # 31_2, 31_3, 32_2: history and no rewrite of their own
    assert calls["RestoredTurns"] == 4  # the turns with a history
    assert calls["VariantVerdict"] == 7 * 2  # only the variants the filters kept are judged

    generated = {record["turn"]: record for record in load_jsonl(run_dir.file(GENERATED_FILE))}
    assert generated["31_2"]["source_origin"] == "rewriter" and generated["81_2"]["source_origin"] == "benchmark"
    assert generated["31_2"]["source"] == "Is it treatable? (resolved)"
    for record in generated.values():
        kept = [candidate["kept"] for candidate in record["candidates"]]
        assert kept == [False, False, True, True], record
        assert record["candidates"][0]["reason"].startswith("near-duplicate of the source")
        assert record["candidates"][1]["reason"].startswith("meaning changed")
    restored = generated["81_2"]["candidates"][2]
    assert restored["raw"].startswith("And ") and not generated["81_1"]["candidates"][2]["raw"].startswith("And ")

    figures = json.loads(run_dir.file("diversity.json").read_text())
    assert (figures["turns"], figures["paraphrases"], figures["turns_with_paraphrases"], figures["unjoined"]) == (
        7,
        3 + 14,
        7,
        2,
    )
    assert figures["generated_before_filtering"]["paraphrases"] == 28
    assert figures["generated_after_filtering"]["paraphrases"] == 14
    # Dropping the near-duplicates makes the kept variants more diverse.
    assert (
        figures["generated_after_filtering"]["bleu_self_contained"]
        < figures["generated_before_filtering"]["bleu_self_contained"]
    )

    kept = {record["variant"]: record for record in load_jsonl(run_dir.file("paraphrases.jsonl"))}
    assert {v for v in kept if ":e" in v} == {"31_2:e1", "31_2:e2", "81_2:e1"}
    sets = json.loads(run_dir.file("test-sets.json").read_text())
    assert list(sets) == ["R1", "R2", "R3"]
    for name, choice in sets.items():
        queries = load_jsonl(run_dir.file("test-sets") / name / "queries.jsonl")
        assert [query["_id"] for query in queries] == list(choice)
        for query in queries:
            variant = kept[choice[query["_id"]]]
            assert query["text"] == variant["raw"] and query["metadata"]["rewrite"] == variant["self_contained"]
    assert outcome.values["test_sets"] == ["R1", "R2", "R3"]

    estimate = estimate_paraphrase([files["2019"], files["2020"]], per_turn=4, workspace=workspace.root)
    assert estimate.calls == calls["Paraphrases"] + calls["RewrittenQuery"] + calls["RestoredTurns"]

    again, again_backend = run_paraphrase(
        workspace,
        "p1",
        [files["2019"], files["2020"]],
        per_turn=4,
        import_ecast=str(files["ecast"]),
        test_sets=3,
        judges=("scripted-paraphraser",),
    )
    assert again.already_finished and not again_backend.calls


def test_import_only_keeps_rows_as_given_and_report_renders_in_chromium(tmp_path):
    files = write_cast_files(tmp_path / "cast")
    workspace = Workspace.resolve(tmp_path / "ws")
    outcome, backend = run_paraphrase(
        workspace,
        "imp",
        [files["2019"], files["resolved"], files["2020"]],
        per_turn=0,
        import_ecast=str(files["ecast"]),
        test_sets=2,
    )
    assert not backend.calls
    figures = outcome.values["diversity"]
    assert "generated_before_filtering" not in figures and figures["unjoined"] == 2 and figures["paraphrases"] == 3
    unjoined = load_jsonl(outcome.run_dir.file("unjoined.jsonl"))
    assert [(row["turn"], row["line"]) for row in unjoined] == [("99_1", 5), ("99_1", 6)]
    markdown = outcome.run_dir.file("paraphrase-report.md").read_text()
    assert "3 variants for 2 of 7 turns" in markdown and "99\\_1" in markdown
    executable = chromium_or_skip()
    loaded, total = loaded_images(executable, outcome.run_dir.file("paraphrase-report.html"), tmp_path)
    assert total >= 1 and loaded == total


def write_many_topics(directory: Path, topics: int, turns: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "2020_manual_evaluation_topics.json"
    path.write_text(
        json.dumps(
            [
                {
                    "number": 200 + topic,
                    "turn": [
                        {
                            "number": turn,
                            "raw_utterance": f"What about part {turn} of it?",
                            "manual_rewritten_utterance": f"What about part {turn} of machine {200 + topic}?",
                        }
                        for turn in range(1, turns + 1)
                    ],
                }
                for topic in range(topics)
            ]
        ),
        encoding="utf-8",
    )
    return path


@pytest.mark.slow
def test_sigkill_mid_paraphrase_then_resume_paraphrases_no_turn_twice(tmp_path):
    topics, turns, concurrency = 12, 3, 2
    path = write_many_topics(tmp_path / "cast", topics, turns)
    workspace = tmp_path / "ws"
    generated = workspace / "runs" / "killed" / GENERATED_FILE
    with FakeOpenAIServer(replier=server_replier, latency_s=0.05) as server:
        environment = {**os.environ, "OPENAI_API_KEY": "sk-test-kill", "OPENAI_BASE_URL": server.base_url}
        command = [
            sys.executable,
            "-m",
            "benchsmith.cli",
            "paraphrase",
            str(path),
            "--per-turn",
            "3",
            "--llm",
            "openai:sim",
            "--min-similarity",
            "0",
            "--concurrency",
            str(concurrency),
            "--embedder",
            "openai:hash",  # the server's, not the default model (torch): not under test here
            "--run-id",
            "killed",
            "-w",
            str(workspace),
        ]
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if generated.exists() and len(generated.read_text().splitlines()) >= 4:
                break
            assert process.poll() is None, process.stdout.read()
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
        finished_at_kill = {json.loads(line)["turn"] for line in generated.read_text().splitlines()}
        requests_at_kill = len(server.requests)
        assert len(finished_at_kill) < topics * turns, "the run finished before it could be killed"

        resumed = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert "resumed from its last checkpoint" in resumed.stdout
        requests = list(server.requests)

    def paraphrased_turn(request: dict) -> str | None:
        if "messages" not in request or request["response_format"]["json_schema"]["name"] != "Paraphrases":
            return None
        match = re.search(r"part (\d+) of machine (\d+)", request["messages"][-1]["content"])
        return f"{match[2]}_{match[1]}"

    records = [json.loads(line) for line in generated.read_text().splitlines()]
    assert sorted(record["turn"] for record in records) == sorted(
        f"{200 + topic}_{turn}" for topic in range(topics) for turn in range(1, turns + 1)
    )  # each turn once
    after_resume = [paraphrased_turn(request) for request in requests[requests_at_kill:]]
    assert not finished_at_kill & set(after_resume), "a turn finished before the kill was paraphrased again"
    per_turn = Counter(turn for turn in map(paraphrased_turn, requests) if turn)
    # Each turn asked once, except the ones whose request was in flight at the kill.
    assert sum(count - 1 for count in per_turn.values()) <= concurrency
    assert len(per_turn) == topics * turns
