"""Synthesis and audit with ``--ray`` on a real local Ray cluster: a head and two worker nodes on this
machine (``ray.cluster_utils.Cluster``, no network beyond loopback), started by the tests.

Each conversation runs as a Ray task on a worker node; the run's own process writes every file.
The files are compared with the single-process run's digests (tests/data/synthesis-digests.json,
the runs of tests/test_synthesis_digest.py), the usage ledger too where no node was lost. A
worker node is SIGKILLed while both nodes hold a conversation whose model call the loopback
server keeps waiting: Ray runs the lost conversation again on the other node, and the files are
still the single-process bytes, each conversation once. An audit's instances are judged on the
nodes, and its files are the single-process audit's; so are a paraphrase run's turns and files.
"""

from __future__ import annotations

import filecmp
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

import benchsmith
from benchsmith.agents.seam.endpoints import endpoint
from benchsmith.cli import app
from benchsmith.graphs.runtime.ray_items import run_items
from benchsmith.graphs.runtime.resources import register_embedder, register_model
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from tests.audit_fixtures import server_judge, write_audit_benchmark
from tests.embedders import HashingEmbedder
from tests.evaluate_fixtures import write_benchmark as write_evaluate_benchmark
from tests.hardneg_fixtures import write_corpus as write_hardneg_corpus
from tests.nugget_fixtures import write_questions, write_repository
from tests.openai_server import FakeOpenAIServer
from tests.paraphrase_fixtures import server_replier as paraphrase_replier
from tests.paraphrase_fixtures import write_topics
from tests.select_fixtures import run_select, write_labelled_corpus
from tests.synthesis_digests import OUTPUTS, RATES, RUN, SEED, digests, stored
from tests.synthesis_fixtures import COLLECTION
from tests.turn_type_fixtures import QUESTION_MIX, build_rich_collection
from tests.turn_type_replies import typed_server_replier

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

pytestmark = pytest.mark.slow

WAIT_S = 240.0  # the longest any step may take on a busy 2-core machine: a bound, never an expectation
NODE = {"num_cpus": 1, "object_store_memory": 80 * 1024 * 1024}
AUDIT_FILES = ["instances.jsonl", "judgments.jsonl", "extra_qrels.tsv", "audit.json", "audit-report.md"]
PARAPHRASE_FILES = [
    "turns.jsonl",
    "paraphrases.jsonl",
    "diversity.json",
    "test-sets.json",
    "paraphrase.json",
    "paraphrase-report.md",
    "test-sets/R1/queries.jsonl",
    "test-sets/original/queries.jsonl",
]


def assert_same_files(first: Path, second: Path, names: list[str]) -> None:
    for name in names:
        assert (first / name).exists(), name
        assert filecmp.cmp(first / name, second / name, shallow=False), f"{name} differs"


class HeldReplies:
    """The loopback server's replier: while holding, each request waits until ``release`` (or a
    bound) once ``after`` requests were answered; ``held`` is set when ``count`` requests wait."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.holding = False
        self.after = 0
        self.count = 0
        self.served = 0
        self.waiting = 0
        self.held = threading.Event()
        self.release = threading.Event()

    def hold(self, after: int, count: int) -> None:
        with self.lock:
            self.holding, self.after, self.count = True, self.served + after, count

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.served += 1
            wait = self.holding and self.served > self.after and not self.release.is_set()
            if wait:
                self.waiting += 1
                if self.waiting >= self.count:
                    self.held.set()
        if wait:
            self.release.wait(WAIT_S)
        if request["model"].startswith("para-"):
            return paraphrase_replier(request)
        return server_judge(request) if request["model"].startswith("judge-") else typed_server_replier(request)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[dict[str, Any]]:
    """The loopback model server first (the nodes take its address and a key from the environment,
    as a real cluster's nodes take theirs), then the head (no CPU: tasks go to the workers) and two
    worker nodes of one CPU each."""
    root = tmp_path_factory.mktemp("ray")
    replies = HeldReplies()
    with pytest.MonkeyPatch.context() as patch, FakeOpenAIServer(replier=replies) as server:
        patch.setenv("OPENAI_API_KEY", "sk-test-ray")
        patch.setenv("OPENAI_BASE_URL", server.base_url)
        patch.setenv("RAY_DEDUP_LOGS", "0")
        cluster = Cluster(
            initialize_head=True,
            head_node_args={"num_cpus": 0, "include_dashboard": False, "object_store_memory": 80 * 1024 * 1024},
        )
        workers = [cluster.add_node(**NODE) for _ in range(2)]
        cluster.wait_for_nodes()
        try:
            yield {"cluster": cluster, "workers": workers, "root": root, "server": server, "replies": replies}
        finally:
            ray.shutdown()
            cluster.shutdown()


def synthesize_on_ray(cluster: dict[str, Any], name: str, llm: str) -> RunDirectory:
    """The digest test's seeded run, through the API with ``ray=``, in a workspace of its own."""
    workspace = Workspace.resolve(cluster["root"] / name / "ws")
    build_rich_collection(workspace, cluster["root"] / name / "corpus", documents=60)
    result = benchsmith.synthesize(
        COLLECTION,
        **RUN,
        run_id=name,
        llm=llm,
        cluster_size=4,
        concurrency=2,
        seed=SEED,
        question_types=QUESTION_MIX,
        **RATES,
        workspace=str(workspace.root),
        ray=cluster["cluster"].address,
    )
    return RunDirectory(workspace, result.run_id)


def in_thread(work: Any) -> tuple[threading.Thread, dict[str, Any]]:
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as error:
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def test_a_ray_synthesis_writes_the_bytes_one_process_writes(cluster, monkeypatch):
    def in_this_process(*args: Any) -> None:
        raise AssertionError("a conversation asked for a model client in the run's own process")

    # The conversations run on the nodes: in this process, asking for a model client fails the run.
    monkeypatch.setattr("benchsmith.graphs.synthesis.lookups.run_seam", in_this_process)
    expected = stored()
    assert digests(synthesize_on_ray(cluster, "offline", "baseline")) == expected["offline"]
    requests = len(cluster["server"].requests)
    assert digests(synthesize_on_ray(cluster, "model", "openai:sim")) == expected["model"]  # the usage ledger too
    assert len(cluster["server"].requests) > requests  # the nodes called the server: no reply came from elsewhere


def test_a_worker_node_killed_mid_run_loses_nothing_and_duplicates_nothing(cluster):
    replies: HeldReplies = cluster["replies"]
    requests = len(cluster["server"].requests)
    replies.hold(after=8, count=2)  # a few calls in, each node's conversation waits on a reply
    thread, outcome = in_thread(lambda: synthesize_on_ray(cluster, "killed", "openai:sim"))
    assert replies.held.wait(WAIT_S), "the two worker nodes never both held a conversation"
    # Both nodes (one CPU each, the head none) run a conversation: SIGKILL one node's processes.
    lost = cluster["workers"].pop(0)
    cluster["cluster"].remove_node(lost, allow_graceful=False)
    replies.release.set()
    thread.join(WAIT_S)
    assert not thread.is_alive(), "the run did not finish after the node was lost"
    assert "error" not in outcome, outcome.get("error")
    run_dir: RunDirectory = outcome["value"]
    expected = stored()["model"]
    assert digests(run_dir, usage=False) == {name: expected[name] for name in OUTPUTS}
    conversations = [record["conversation_id"] for record in load_jsonl(run_dir.file("dialogues.jsonl"))]
    assert sorted(conversations) == sorted(set(conversations)) and len(conversations) == RUN["conversations"]
    # The lost node's conversation was made again: the server was asked more than the calls the
    # run booked as paid (the lost task's calls were never booked; its retry found in the cache
    # those whose replies had reached it).
    paid = [call for call in load_jsonl(run_dir.file("usage.jsonl")) if not call["cached"]]
    assert len(cluster["server"].requests) - requests > len(paid)
    cluster["workers"].append(cluster["cluster"].add_node(**NODE))  # the cluster as the next test expects it


def test_a_ray_audit_writes_the_files_one_process_writes(cluster, tmp_path, monkeypatch):
    turns, corpus = write_audit_benchmark(tmp_path / "bench")
    audit = {
        "judges": ["openai:judge-a", "openai:judge-b"],
        "corpus": str(corpus),
        "embedder": HashingEmbedder().name,
        "concurrency": 2,
    }
    solo = benchsmith.audit(str(turns), **audit, run_id="solo", workspace=str(tmp_path / "solo"))

    def in_this_process(*args: Any) -> None:
        raise AssertionError("an instance was judged in the run's own process")

    monkeypatch.setattr("benchsmith.graphs.audit.graph.run_seam", in_this_process)
    on_ray = benchsmith.audit(
        str(turns), **audit, run_id="ray", workspace=str(tmp_path / "ray"), ray=cluster["cluster"].address
    )
    assert on_ray.instances == solo.instances > 0
    assert_same_files(tmp_path / "solo" / "runs" / "solo", tmp_path / "ray" / "runs" / "ray", AUDIT_FILES)


def test_a_ray_paraphrase_writes_the_files_one_process_writes(cluster, tmp_path, monkeypatch):
    topics = write_topics(tmp_path / "2019_evaluation_topics.json", topics=3, turns=3)
    paraphrase = {
        "per_turn": 3,
        "llm": "openai:para-sim",
        "judges": ("openai:para-judge",),
        "min_similarity": 0.3,
        "embedder": "openai:hash",  # the server's: each node embeds through it
        "concurrency": 2,
    }
    solo = benchsmith.paraphrase(str(topics), **paraphrase, run_id="solo", workspace=str(tmp_path / "solo"))

    def in_this_process(*args: Any) -> None:
        raise AssertionError("a turn was paraphrased in the run's own process")

    monkeypatch.setattr("benchsmith.graphs.paraphrase.nodes.run_seam", in_this_process)
    on_ray = benchsmith.paraphrase(
        str(topics), **paraphrase, run_id="ray", workspace=str(tmp_path / "ray"), ray=cluster["cluster"].address
    )
    assert on_ray.turns == solo.turns == 9 and on_ray.paraphrases == solo.paraphrases > 0
    assert_same_files(tmp_path / "solo" / "runs" / "solo", tmp_path / "ray" / "runs" / "ray", PARAPHRASE_FILES)


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_cluster_nobody_answers_at_stops_the_command_before_a_run_exists(tmp_path):
    turns, corpus = write_audit_benchmark(tmp_path / "bench")
    command = ["audit", str(turns), "--corpus", str(corpus), "--judge", "baseline", "-w", str(tmp_path / "ws")]
    address = f"127.0.0.1:{closed_port()}"
    runner = CliRunner(env={"COLUMNS": "200"})
    result = runner.invoke(app, [*command, "--ray", address])
    assert result.exit_code == 2 and f"--ray {address}: no Ray cluster answers there" in result.output
    assert not (tmp_path / "ws" / "runs").exists() or not any((tmp_path / "ws" / "runs").iterdir())
    planned = runner.invoke(app, [*command, "--ray", "10.0.0.5:6379", "--dry-run"])  # connects to nothing
    assert planned.exit_code == 0 and "as Ray tasks on the Ray cluster at 10.0.0.5:6379" in planned.output


def test_a_registered_object_no_node_can_take_is_refused_before_the_run(tmp_path):
    turns, corpus = write_audit_benchmark(tmp_path / "bench")

    class HeldJudge:
        def __init__(self) -> None:
            self.lock = threading.Lock()  # a lock cannot be pickled

    register_model("held-judge", HeldJudge())  # type: ignore[arg-type]
    with pytest.raises(InputError, match="'held-judge' cannot be sent to a Ray node"):
        benchsmith.audit(
            str(turns),
            judges=["held-judge"],
            corpus=str(corpus),
            workspace=str(tmp_path / "ws"),
            ray=f"127.0.0.1:{closed_port()}",
        )
    assert not (tmp_path / "ws" / "runs").exists() or not any((tmp_path / "ws" / "runs").iterdir())


def test_where_a_run_would_go_is_said_without_connecting():
    from benchsmith.graphs.runtime.ray_items import where_items_run

    assert where_items_run(None, "conversations") == "the conversations would run in this process"
    assert "Ray cluster at 10.0.0.5:6379" in where_items_run("10.0.0.5:6379", "conversations")
    assert "started on this machine" in where_items_run("local", "conversations")


# The other item-level jobs and evaluate: the work of each item runs on the nodes (in this process,
# the function that does it fails the run), and the run's files are the single-process run's.
SKIPPED = {"run.json", "timings.jsonl"}  # the run's record and wall-clock seconds: never the same bytes
# Logs appended as items finish: the same records, in the order two items in flight finished (in
# one process too); the exports are written from them in a fixed order.
APPEND_LOGS = {"usage.jsonl", "rows.jsonl", "pools.jsonl", "judgments.jsonl"}


def assert_same_run_files(solo: Path, on_ray: Path, timed: tuple[str, ...] = ()) -> None:
    """Every file of the two runs the same, but for the run's id and workspace where a report names
    them, and the ``timed`` files (they show the seconds each part took)."""
    names = sorted(str(path.relative_to(solo)) for path in solo.rglob("*") if path.is_file())
    assert names == sorted(str(path.relative_to(on_ray)) for path in on_ray.rglob("*") if path.is_file())
    compared = [name for name in names if Path(name).name not in {*SKIPPED, *timed} and not name.endswith(".sqlite")]
    assert len(compared) > 3

    def text(run_dir: Path, name: str) -> str:
        workspace = str(run_dir.parent.parent)
        content = (run_dir / name).read_text(encoding="utf-8")
        for shown in (workspace, workspace.replace("_", "\\_")):  # markdown escapes the underscores
            content = content.replace(shown, "WORKSPACE")
        return content.replace(run_dir.name, "RUN")

    for name in compared:
        first, second = text(solo, name), text(on_ray, name)
        if Path(name).name in APPEND_LOGS:
            first, second = "\n".join(sorted(first.splitlines())), "\n".join(sorted(second.splitlines()))
        assert first == second, f"{name} differs"


def fails_here(what: str) -> Any:
    def in_this_process(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"{what} in the run's own process")

    return in_this_process


def test_a_ray_hardneg_build_and_nuggets_write_the_files_one_process_writes(cluster, tmp_path, monkeypatch):
    corpus = write_hardneg_corpus(tmp_path / "corpus")
    build = {"conditions": 3, "llm": "baseline", "concurrency": 2}
    solo = benchsmith.build_hardneg([corpus], **build, run_id="hn-a1", workspace=tmp_path / "solo")
    questions, repository = write_questions(tmp_path / "qa.jsonl"), write_repository(tmp_path / "repo")
    nuggets = {"pool_depth": 4, "batch_size": 3, "min_chars": 20, "chunk_size": 300, "concurrency": 2}
    embedder = register_embedder(HashingEmbedder())
    nuggets_solo = benchsmith.nuggets(
        questions, [repository], embedder=embedder, **nuggets, run_id="ng-a1", workspace=tmp_path / "solo"
    )
    monkeypatch.setattr("benchsmith.graphs.hardneg.build.run_seam", fails_here("a document was built"))
    monkeypatch.setattr("benchsmith.graphs.nuggets.nodes.run_seam", fails_here("a question's model calls ran"))
    address = cluster["cluster"].address
    on_ray = benchsmith.build_hardneg([corpus], **build, run_id="hn-b2", workspace=tmp_path / "ray", ray=address)
    assert on_ray.rows == solo.rows > 0
    assert_same_run_files(tmp_path / "solo" / "runs" / "hn-a1", tmp_path / "ray" / "runs" / "hn-b2")
    nuggets_ray = benchsmith.nuggets(
        questions, [repository], embedder=embedder, **nuggets, run_id="ng-b2", workspace=tmp_path / "ray", ray=address
    )
    assert nuggets_ray.kept == nuggets_solo.kept > 0
    assert_same_run_files(tmp_path / "solo" / "runs" / "ng-a1", tmp_path / "ray" / "runs" / "ng-b2")


def test_a_ray_select_and_evaluation_write_the_files_one_process_writes(cluster, tmp_path, monkeypatch):
    corpus, queries, _ = write_labelled_corpus(tmp_path / "data")
    select = {"judges": ["baseline"], "min_votes": 1, "top_k": [1, 3], "retrievers": ["bm25"], "batch_size": 4}
    solo = run_select(tmp_path / "solo", queries, corpus, "sel-a1", **select)
    benchmark = write_evaluate_benchmark(tmp_path / "bench")
    evaluate = {
        "retrievers": ["bm25", "dense"],
        "histories": ["current"],
        "embedder": register_embedder(HashingEmbedder()),
        "batch_size": 5,
        "concurrency": 2,
    }
    evaluation_solo = benchsmith.evaluate(str(benchmark), **evaluate, run_id="ev-a1", workspace=tmp_path / "solo")
    monkeypatch.setattr("benchsmith.graphs.select.graph.judge_batch", fails_here("a batch was judged"))
    monkeypatch.setattr("benchsmith.graphs.evaluate.nodes.dense_index", fails_here("a block of queries was ranked"))
    address = cluster["cluster"].address
    on_ray = run_select(tmp_path / "ray", queries, corpus, "sel-b2", **select, ray=address)
    assert on_ray.ranking == solo.ranking and on_ray.pool_pairs == solo.pool_pairs > 0
    assert_same_run_files(tmp_path / "solo" / "runs" / "sel-a1", tmp_path / "ray" / "runs" / "sel-b2")
    evaluation_ray = benchsmith.evaluate(
        str(benchmark), **evaluate, run_id="ev-b2", workspace=tmp_path / "ray", ray=address
    )
    assert evaluation_ray.aggregate == evaluation_solo.aggregate
    assert_same_run_files(  # the run files, ranked on the nodes, and the queries
        tmp_path / "solo" / "runs" / "ev-a1",
        tmp_path / "ray" / "runs" / "ev-b2",
        ("report.html", "report.md", "results.json"),
    )


RATE, TURNS = 20.0, 8  # requests a second to one endpoint; turns each task takes


def timed_turns(task: dict[str, Any], context: Any) -> tuple[str, float, list[float]]:
    """On a node: from ``start_at``, ``turns`` turns at the endpoint, each when its limiter allowed it
    (the node, when the task was ready, the turns' times)."""
    ready = time.time()
    time.sleep(max(0.0, task["start_at"] - ready))
    state = endpoint(task["base_url"])
    stamps = []
    for _ in range(task["turns"]):
        state.wait_for_turn(context.rate_limit)
        stamps.append(time.time())
    return ray.get_runtime_context().get_node_id(), ready, stamps


def test_tasks_on_two_nodes_share_one_rate_limit_per_endpoint(cluster, tmp_path):
    context = SimpleNamespace(ray=cluster["cluster"].address, rate_limit=RATE)

    def on_both_nodes(turns: int, start_at: float) -> list[tuple[str, float, list[float]]]:
        payload = {"base_url": "http://rate.example/v1", "turns": turns, "start_at": start_at}
        workspace = Workspace.resolve(tmp_path)
        return list(run_items(timed_turns, [payload] * 2, context, workspace=workspace, run_id="rate", in_flight=2))

    on_both_nodes(0, 0.0)  # each node's worker started before the clock counts
    # Both tasks must be waiting when the turns begin, or the bound below holds without sharing a
    # limit; on a loaded machine a task can take seconds to arrive, so the lead grows until both did.
    for lead in (2.0, 5.0, 12.0):
        start_at = time.time() + lead
        done = on_both_nodes(TURNS, start_at)
        if all(ready < start_at for _, ready, _ in done):
            break
    assert all(ready < start_at for _, ready, _ in done), "a task was not ready when the turns began"
    assert len({node for node, _, _ in done}) == 2  # one task on each worker node, at once:
    stamps = sorted(stamp for _, _, times in done for stamp in times)
    # Together at RATE: 2 × TURNS turns take (2 × TURNS - 1) / RATE seconds at least (0.75 s); each
    # node at RATE on its own would end them in half that. Bounded below only, loosely.
    assert stamps[-1] - stamps[0] >= 0.8 * (2 * TURNS - 1) / RATE
