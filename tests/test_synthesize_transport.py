"""Synthesis through the real openai SDK client: injected faults change nothing, servers
without JSON-schema output and chatty models give the same benchmark, a refused key stops the
run within seconds and is written nowhere, and a kill -9 mid-run (every turn type set) loses and
repeats nothing but the calls in flight and writes the bytes of an uninterrupted run."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchsmith.agents.seam.backends import ModelSettings
from benchsmith.agents.seam.models import build_seam
from benchsmith.jobs.synthesize import synthesize as synthesize_job
from benchsmith.stores.formats.benchmark_files import held_out_ids
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from tests.openai_server import LEGACY_LLAMA_CPP, PLAIN_COMPLETIONS, FakeOpenAIServer
from tests.synthesis_digests import OUTPUTS
from tests.synthesis_fixtures import build_collection, server_replier, synthesize
from tests.turn_type_fixtures import ALL_RATES, QUESTION_MIX, build_rich_collection
from tests.turn_type_replies import typed_server_replier

FAST_RETRIES = ModelSettings(timeout_s=0.5, backoff_initial_s=0.01, backoff_max_s=0.05, max_attempts=10)
ROOT = Path(__file__).resolve().parent.parent


def test_injected_faults_do_not_change_the_benchmark(tmp_path, monkeypatch):
    workspace = Workspace.resolve(tmp_path / "ws")
    build_collection(workspace, tmp_path / "corpus")
    with FakeOpenAIServer(replier=server_replier) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-faults")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        clean = build_seam("openai:sim", FAST_RETRIES)  # no cache: each run pays for its own replies
        synthesize(workspace, "clean", conversations=6, turns=3, model=clean)
        server.set_fault_rate(0.2, seed=3, slow_s=1.0)
        faulty = build_seam("openai:sim", FAST_RETRIES)
        synthesize(workspace, "faulty", conversations=6, turns=3, model=faulty)
    assert server.faults_served >= 5 and faulty.stats.retries == server.faults_served
    assert clean.stats.retries == 0
    assert (
        RunDirectory(workspace, "faulty").file("dialogues.jsonl").read_text()
        == RunDirectory(workspace, "clean").file("dialogues.jsonl").read_text()
    )


@pytest.mark.parametrize(
    ("rejects", "reply_style", "method"),
    [
        (LEGACY_LLAMA_CPP, "json", "function_calling"),
        (PLAIN_COMPLETIONS, "json", "prompt"),
        (frozenset(), "fenced", "json_schema"),
        (LEGACY_LLAMA_CPP, "fenced", "function_calling"),
    ],
    ids=["json-schema-rejected", "every-format-rejected", "fenced", "json-schema-rejected-and-fenced"],
)
def test_servers_without_json_schema_and_chatty_models_give_the_same_benchmark(
    tmp_path, monkeypatch, rejects, reply_style, method
):
    workspace = Workspace.resolve(tmp_path / "ws")
    build_collection(workspace, tmp_path / "corpus")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-fallback")
    runs = {}
    for run_id, server_options in (("vllm", {}), ("other", {"rejects": rejects, "reply_style": reply_style})):
        with FakeOpenAIServer(replier=server_replier, **server_options) as server:
            monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
            seam = build_seam("openai:sim", FAST_RETRIES)
            synthesize(workspace, run_id, conversations=4, turns=3, model=seam, concurrency=CONCURRENCY)
        runs[run_id] = (seam, server)
    (vllm, vllm_server), (other, other_server) = runs["vllm"], runs["other"]
    assert vllm.stats.structured_output == "json_schema" and other.stats.structured_output == method
    assert other.stats.retries == vllm.stats.retries == 0
    assert other.stats.calls == vllm.stats.calls
    # Each step down costs the rejected requests: one per conversation in flight at most.
    rejected = len(other_server.requests) - len(vllm_server.requests)
    assert FALLBACK_STEPS[method] <= rejected <= FALLBACK_STEPS[method] * CONCURRENCY
    assert (
        RunDirectory(workspace, "other").file("dialogues.jsonl").read_text()
        == RunDirectory(workspace, "vllm").file("dialogues.jsonl").read_text()
    )


CONCURRENCY = 4
FALLBACK_STEPS = {"json_schema": 0, "function_calling": 1, "prompt": 3}  # rejected requests before the method


def scan_for(secret: str, root: Path) -> list[str]:
    """Every file under ``root`` (SQLite databases, WAL and journals included) holding ``secret``."""
    return [str(path) for path in root.rglob("*") if path.is_file() and secret.encode() in path.read_bytes()]


@pytest.mark.slow
def test_a_refused_key_stops_the_cli_run_within_seconds_and_is_written_nowhere(tmp_path):
    """The server answers 401 and echoes the key it was sent: the run (4 conversations at a time)
    fails within 5 s of the first 401 saying to check the key, no call starts after it, and the
    key is in no file of the workspace nor in the output."""
    leaked_key = "sk-test-ECHOED-BY-THE-SERVER-9d2e7c"
    conversations, concurrency = 20, 4
    workspace = Workspace.resolve(tmp_path / "ws")
    build_collection(workspace, tmp_path / "corpus", documents=100)
    with FakeOpenAIServer(replier=server_replier, latency_s=0.05, api_key="sk-the-servers-own-key") as server:
        environment = {**os.environ, "OPENAI_API_KEY": leaked_key, "OPENAI_BASE_URL": server.base_url}
        command = [
            sys.executable,
            "-m",
            "benchsmith.cli",
            "synthesize",
            "--collection",
            "docs",
            "--conversations",
            str(conversations),
            "--turns",
            "3",
            "--llm",
            "openai:sim",
            "--concurrency",
            str(concurrency),
            "--cluster-size",
            "4",
            "--run-id",
            "refused",
            "-w",
            str(workspace.root),
        ]
        result = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)
        exited = time.monotonic()
        time.sleep(0.5)  # anything still on its way would arrive now
        first_401 = server.first_response_at(401)
        arrivals = list(server.arrivals)

    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert first_401 is not None, output
    assert first_401 is not None and exited - first_401 < 5.0
    assert "ModelEndpointError" in output and "Check OPENAI_API_KEY" in output
    # The first call of each conversation in flight, and none after: a conversation that starts
    # once another failed finds the endpoint latched (without the latch a fifth one calls).
    assert 1 <= len(arrivals) <= concurrency
    assert leaked_key not in output
    assert scan_for(leaked_key, tmp_path) == []
    record = json.loads(RunDirectory(workspace, "refused").record_path.read_text())
    assert record["status"] == "crashed" and "Check OPENAI_API_KEY" in record["error"]


@pytest.mark.slow
def test_sigkill_mid_synthesis_then_resume(tmp_path, monkeypatch):
    """A CLI run with every turn type killed by SIGKILL and resumed writes the same bytes as an
    uninterrupted run (in process, through the jobs API the CLI calls): its labels, held-out chunks
    and exports. Only the calls in flight at the kill (or answered just before it) are paid twice."""
    conversations, turns, concurrency = 20, 3, 4
    workspace = Workspace.resolve(tmp_path / "ws")
    build_rich_collection(workspace, tmp_path / "corpus", documents=100)
    killed = RunDirectory(workspace, "killed")
    dialogues = killed.file("dialogues.jsonl")
    rate_options = [
        option for setting, rate in ALL_RATES.items() for option in (f"--{setting.replace('_', '-')}", str(rate))
    ]
    with FakeOpenAIServer(replier=typed_server_replier, latency_s=0.05) as server:
        environment = {**os.environ, "OPENAI_API_KEY": "sk-test-kill", "OPENAI_BASE_URL": server.base_url}
        command = [
            sys.executable,
            "-m",
            "benchsmith.cli",
            "synthesize",
            "--collection",
            "docs",
            "--conversations",
            str(conversations),
            "--turns",
            str(turns),
            "--llm",
            "openai:sim",
            "--concurrency",
            str(concurrency),
            "--cluster-size",
            "4",
            "--question-types",
            QUESTION_MIX,
            *rate_options,
            "--quality-gate",
            "off",
            "--run-id",
            "killed",
            "-w",
            str(workspace.root),
        ]
        # the scripted model's questions are plumbing, not prose: the gate would refuse them all
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if dialogues.exists() and len(dialogues.read_text().splitlines()) >= 6:
                break
            assert process.poll() is None, process.stdout.read()
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
        written_at_kill = len(dialogues.read_text().splitlines())
        assert written_at_kill < conversations, "the run finished before it could be killed"

        resumed = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert "resumed from its last checkpoint" in resumed.stdout
        requests = len(server.requests)

        # The uninterrupted run, answered from the workspace's response cache the CLI runs filled.
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-kill")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        synthesize_job(
            "docs",
            conversations=conversations,
            turns=turns,
            run_id="whole",
            workspace=str(workspace.root),
            llm="openai:sim",
            concurrency=concurrency,
            cluster_size=4,
            question_types=QUESTION_MIX,
            quality_gate="off",
            **ALL_RATES,
        )
        # ...except, per conversation in flight at the kill, a reply its checkpoint holds but the cache's
        # writer had not committed (stores/persistence/write_behind.py: the last ~10 ms before a SIGKILL)
        assert len(server.requests) - requests <= concurrency, "the uninterrupted run asked the server"

    whole = RunDirectory(workspace, "whole")
    for name in OUTPUTS:
        assert killed.file(name).read_bytes() == whole.file(name).read_bytes(), name
    written = load_jsonl(dialogues)
    assert len({d["conversation_id"] for d in written}) == len(written) == conversations
    assert all([t["index"] for t in d["turns"]] == list(range(turns)) for d in written)
    labels = {t["turn_type"] for d in written for t in d["turns"]}
    assert labels >= {"unanswerable", "partial", "underspecified", "clarification", "multi-passage", "answerable"}
    held_out = held_out_ids(written)
    assert held_out and held_out == held_out_ids(load_jsonl(whole.file("dialogues.jsonl")))
    exported = {json.loads(line)["_id"] for line in killed.file("beir/corpus.jsonl").read_text().splitlines()}
    assert not held_out & exported
    # Every call was paid once, except at most, per conversation in flight, the call in flight when the
    # process died and one answered in the moment before, whose reply the cache's writer had not yet
    # committed (stores/persistence/write_behind.py: about 10 ms, less than a call takes).
    calls_needed = len(whole.file("usage.jsonl").read_text().splitlines())
    assert calls_needed <= requests <= calls_needed + 2 * concurrency


def test_the_overlap_corrective_turn_reaches_the_server(tmp_path, monkeypatch):
    """A model that copies its gold passage is sent the corrective turn, over HTTP, with the figure."""
    from benchsmith.agents.questioner import GeneratedQuestion
    from benchsmith.evals.measures.lexical_overlap import lexical_overlap
    from tests.openai_server import conversation_messages, requested_schema_name
    from tests.synthesis_fixtures import SCHEMAS, gold_text

    paraphrase = "How do I make my lookups stop timing out?"

    def copies_then_paraphrases(request: dict) -> dict:
        if SCHEMAS[requested_schema_name(request)] is not GeneratedQuestion:
            return server_replier(request)
        messages = conversation_messages(request)
        copied = " ".join(gold_text(messages[:2], "gold_passage").split()[:8]).rstrip(".") + "?"
        corrected = messages[-1]["content"].startswith("Your question shares")
        return GeneratedQuestion(
            question=paraphrase if corrected else copied, rewrite=paraphrase if corrected else copied
        ).model_dump()

    workspace = Workspace.resolve(tmp_path / "ws")
    build_collection(workspace, tmp_path / "corpus")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-overlap")
    with FakeOpenAIServer(replier=copies_then_paraphrases) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        synthesize(workspace, "overlap", conversations=1, turns=1, model=build_seam("openai:sim", FAST_RETRIES))
        requests = list(server.requests)
    corrective = [
        request
        for request in requests
        if any((message.get("content") or "").startswith("Your question shares") for message in request["messages"])
    ]
    assert len(corrective) == 1 and len(requests) == 3  # question, corrected question, answer
    roles = [message["role"] for message in corrective[0]["messages"]]
    assert roles[-3:] == ["user", "assistant", "user"]
    first_user, copied, correction = (message["content"] for message in corrective[0]["messages"][-3:])
    share = round(100 * lexical_overlap(copied, [gold_text([{"content": first_user}], "gold_passage")]))
    assert f"shares {share}% of its content words" in correction
    (dialogue,) = [
        json.loads(line) for line in RunDirectory(workspace, "overlap").file("dialogues.jsonl").read_text().splitlines()
    ]
    assert dialogue["turns"][0]["question_unpolished"] == paraphrase
