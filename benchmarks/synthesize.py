"""Synthesis throughput against a model with a fixed latency: is the client ever the bottleneck?

The loopback OpenAI-compatible test server, in a process of its own as a real model server
would be (and keeping connections alive as real servers do), answers every call after
``BENCH_LATENCY_S`` seconds (default 0.2). Synthesis runs through the same path as
``benchsmith synthesize --llm openai:sim``: the seam's HTTP client, its retries, the SQLite
response cache, the usage ledger, LangGraph's fan-out and checkpoints. With C conversations in
flight and K model calls per conversation, the ideal is C × 60 / (K × latency) conversations per
minute; this prints the measured rate divided by that ideal (targets: ≥ 0.8 at 8 in flight and
200 ms, orchestration, checkpoints, the HTTP client and Chroma reads costing at most a fifth; ≥ 0.6
at 64 in flight and 50 ms, where one process must drive 1,280 calls a second) and the client's CPU
seconds per model call: the process's CPU time (all threads) over the calls it made. A process
runs Python on one core at a time, so 1 / (CPU per call) bounds the calls per second one process
drives, however fast the server; the server's CPU per call is printed beside it.

A synthesis shares its machine with other work as a rule, and CPU per call grows with the
machine's load, so each run is measured in two conditions, alternating run by run (issue 31):
quiet (nothing of ours beside it) and beside a CPU-bound neighbour the benchmark starts on the same
cores and stops after the run. In each, the same server is first driven by a bare client (as many
threads, each posting through its own kept-alive ``http.client`` connection and decoding the
reply, nothing else), and the synthesis's CPU per call is printed as a ratio to that bare client's,
measured in the same condition a moment before. Each run's context switches per call (all threads;
a thread that waits for the interpreter or a lock is switched out) and the load average before and
after are printed too. ``--runs`` (default 3) runs per condition; the medians are judged.

The offline quality gate (``--quality-gate``, synthesize's default ``replan``) parses every turn
with spaCy: a cost per turn, not per model call (2.6 to 2.8 ms of CPU per call here at 64 in flight,
two pairs of runs at a load of 5: 3.5-3.6 ms with it, 0.8-0.9 without), which the figures for the
model-call path (issues 23 and 31) exclude: the default here is ``off``.

``--profile`` runs the timed synthesis under cProfile in every thread, timing each thread's CPU
(not the wall clock, which would rank the waits for the server first), and prints the top 10
functions by cumulative CPU time; the profiler roughly doubles the CPU per call, so take the
CPU figure from a run without it.

    .venv/bin/python benchmarks/synthesize.py [--conversations N] [--turns 4] [--concurrency 8]
        [--runs 3] [--conditions quiet,neighbour] [--quality-gate off] [--profile]
    BENCH_LATENCY_S=0.05 .venv/bin/python benchmarks/synthesize.py --concurrency 64
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import http.client
import io
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchsmith.tools.offline import offline_environment

offline_environment()  # before the imports below load models or Chroma

from benchsmith.graphs.contexts.synthesize import SynthesisContext  # noqa: E402
from benchsmith.graphs.runtime.resources import run_seam  # noqa: E402
from benchsmith.graphs.runtime.runner import run_job  # noqa: E402
from benchsmith.graphs.synthesis.run import builder  # noqa: E402
from benchsmith.jobs.synthesize import cluster  # noqa: E402
from benchsmith.stores.persistence.workspace import Workspace  # noqa: E402
from tests.synthesis_fixtures import COLLECTION, build_collection  # noqa: E402

LATENCY_S = float(os.environ.get("BENCH_LATENCY_S", "0.2"))
# Issue 23's bounds, at the two settings it names: (concurrency, latency in s) -> least rate ratio.
RATE_TARGETS = {(8, 0.2): 0.8, (64, 0.05): 0.6}
CPU_PER_CALL_TARGETS_MS = {(64, 0.05): 1.0}  # where calls are many: at 8 in flight a run's fixed costs weigh
MODEL = "openai:sim"
CONDITIONS = ("quiet", "neighbour")
BARE_CALLS_PER_THREAD = 32  # 2,048 calls at 64 in flight: as many as a timed synthesis makes, within a factor of 2
BARE_MODEL = "bare"  # the server answers this model with a fixed reply (SERVER_SCRIPT)
NEIGHBOUR_SCRIPT = "while True: pass"
WARM_UP_SEED = 10_000  # far from the timed runs' seeds 0, 1, 2...: nothing of it is in their cache


SERVER_SCRIPT = """
import sys, time
from tests.openai_server import FakeOpenAIServer
from tests.synthesis_fixtures import server_replier
BARE_REPLY = {"answer": "a fixed reply for the bare client"}
def replier(request):
    return BARE_REPLY if request.get("model") == sys.argv[2] else server_replier(request)
server = FakeOpenAIServer(replier=replier, latency_s=float(sys.argv[1]), keep_alive=True).start()
print(server.base_url, flush=True)
time.sleep(3600)
"""


@contextlib.contextmanager
def model_server(latency_s: float) -> Iterator[tuple[str, int]]:
    """The simulated model in its own process, so its work does not share our interpreter: its
    base URL and process id."""
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER_SCRIPT, str(latency_s), BARE_MODEL],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    try:
        yield process.stdout.readline().strip(), process.pid
    finally:
        process.kill()
        process.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class ThreadProfiles:
    """cProfile in this thread and in every thread started while it is on (LangGraph's workers),
    each timing its own thread's CPU (``time.thread_time``)."""

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []
        self._lock = threading.Lock()

    def _profile_this_thread(self, *_: object) -> None:
        profile = cProfile.Profile(time.thread_time)
        with self._lock:
            self.profiles.append(profile)
        profile.enable()  # replaces this hook in this thread

    def __enter__(self) -> ThreadProfiles:
        threading.setprofile(self._profile_this_thread)
        self._profile_this_thread()
        return self

    def __exit__(self, *_: object) -> None:
        threading.setprofile(None)
        self.profiles[0].disable()  # the workers' threads have ended with the run

    def summary(self, top: int = 10, save_to: Path | None = None) -> str:
        stats = pstats.Stats(self.profiles[0], stream=(out := io.StringIO()))
        for profile in self.profiles[1:]:
            stats.add(profile)
        if save_to is not None:
            stats.dump_stats(save_to)
        stats.sort_stats("cumulative").print_stats(top)
        return out.getvalue()


@contextlib.contextmanager
def busy_neighbour() -> Iterator[int]:
    """A CPU-bound process on the cores this one runs on, as another job on a shared machine: its pid."""
    process = subprocess.Popen([sys.executable, "-c", NEIGHBOUR_SCRIPT])
    try:
        os.sched_setaffinity(process.pid, os.sched_getaffinity(0))
        time.sleep(0.2)  # running before the timing starts
        yield process.pid
    finally:
        process.kill()
        process.wait()


def bare_request_body() -> dict[str, Any]:
    """A chat request about as long as synthesis's (about 430 input tokens a call)."""
    words = " ".join(f"word{number}" for number in range(300))
    return {
        "model": BARE_MODEL,
        "stream": False,
        "temperature": 0.0,
        "seed": 0,
        "messages": [
            {"role": "system", "content": "Reply with a JSON object."},
            {"role": "user", "content": f"<passage>\n{words}\n</passage>"},
        ],
    }


def bare_client_calls(base_url: str, concurrency: int, calls_per_thread: int) -> dict[str, float]:
    """The reference: ``concurrency`` threads, each posting through its own kept-alive
    ``http.client`` connection and decoding the JSON reply, nothing else. Its CPU and wall time,
    from the moment every thread is ready."""
    parts = urlsplit(base_url)
    body = json.dumps(bare_request_body()).encode()
    headers = {"Content-Type": "application/json", "Authorization": "Bearer sk-benchmark"}
    go, errors = threading.Event(), []

    def post_in_a_loop() -> None:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        try:
            go.wait()
            for _ in range(calls_per_thread):
                connection.request("POST", f"{parts.path}/chat/completions", body=body, headers=headers)
                response = connection.getresponse()
                reply = json.loads(response.read())
                if response.status != 200 or "choices" not in reply:
                    raise RuntimeError(f"bare client: HTTP {response.status}: {reply}")
        except Exception as error:  # reported after the run
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=post_in_a_loop) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    measure = Measure.start()
    go.set()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return measure.stop(calls=concurrency * calls_per_thread)


@dataclass
class Measure:
    """This process's CPU (all threads), wall time, context switches and the load average over a span."""

    cpu: float
    wall: float
    switches: int
    load: float

    @classmethod
    def start(cls) -> Measure:
        return cls(time.process_time(), time.perf_counter(), context_switches(), os.getloadavg()[0])

    def stop(self, calls: int) -> dict[str, float]:
        wall, cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu
        return {
            "calls": calls,
            "wall_s": wall,
            "cpu_s": cpu,
            "cpu_ms_per_call": cpu / calls * 1000,
            "calls_per_s": calls / wall,
            "switches_per_call": (context_switches() - self.switches) / calls,
            "load_before": self.load,
            "load_after": os.getloadavg()[0],
        }


def context_switches() -> int:
    """Voluntary and involuntary context switches of this process's threads so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_nvcsw + usage.ru_nivcsw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--conversations",
        type=int,
        default=None,
        help="Default: 4 × concurrency, at least 32 (enough to keep every slot busy).",
    )
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3, help="Timed runs per condition; the medians are judged.")
    parser.add_argument(
        "--conditions",
        default=",".join(CONDITIONS),
        help="Comma-separated, of: quiet (nothing of ours beside the run), neighbour (a CPU-bound "
        "process on the same cores, started and stopped by the benchmark).",
    )
    parser.add_argument(
        "--quality-gate",
        choices=("replan", "flag", "off"),
        default="off",
        help="The synthesis's offline quality gate (default off: it parses every turn with spaCy, "
        "a cost per turn, not per model call; replan is synthesize's default).",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="Print the top 10 functions by cumulative CPU time (cProfile in every thread).",
    )
    parser.add_argument(
        "--profile-out",
        type=Path,
        metavar="FILE",
        help="With --profile: also save each run's whole profile there (pstats format; the "
        "condition and run number are added to the name).",
    )
    parser.add_argument("--timed-run", help=argparse.SUPPRESS)  # JSON: one timed run, in the process it starts
    args = parser.parse_args()
    if args.timed_run:
        print(json.dumps(timed_run(args, **json.loads(args.timed_run))), flush=True)
        return
    conversations = args.conversations or max(32, 4 * args.concurrency)
    conditions = [name.strip() for name in args.conditions.split(",") if name.strip()]
    if unknown := set(conditions) - set(CONDITIONS):
        parser.error(f"unknown conditions {sorted(unknown)}: choose from {', '.join(CONDITIONS)}")

    with tempfile.TemporaryDirectory() as directory, model_server(LATENCY_S) as (base_url, server_pid):
        workspace = Workspace.resolve(Path(directory) / "ws")
        # Deduplication keeps about 70% of the fixture's pages, and a cluster holds one more chunk than
        # its size (the one an unanswerable turn holds out): 6 pages per conversation leave spare clusters.
        build_collection(workspace, Path(directory) / "corpus", documents=max(100, 6 * conversations + 100))
        results: list[dict[str, Any]] = []
        # The conditions alternate run by run, so a change in the machine's other load falls on both.
        for number in range(args.runs):
            for condition in conditions:
                seed = len(results)  # each run's own seed: a cold response cache and its own clustering
                # The clustering depends on the seed: made before the timing, as `benchsmith cluster` makes it.
                cluster(COLLECTION, size=4, seed=seed, workspace=str(workspace.root))
                with busy_neighbour() if condition == "neighbour" else contextlib.nullcontext() as neighbour_pid:
                    # A process of its own per run, as `benchsmith synthesize` is: nothing a run read or
                    # built (the passage cache, the clients) is left warm for the next.
                    settings = {
                        "workspace": str(workspace.root),
                        "base_url": base_url,
                        "server_pid": server_pid,
                        "neighbour_pid": neighbour_pid,
                        "seed": seed,
                        "conversations": conversations,
                        "run_id": f"bench-{condition}-{number}",
                    }
                    command = [sys.executable, __file__, *sys.argv[1:], "--timed-run", json.dumps(settings)]
                    if args.profile_out:
                        command += [
                            "--profile-out",
                            str(
                                args.profile_out.with_name(
                                    f"{args.profile_out.stem}-{condition}-{number}{args.profile_out.suffix}"
                                )
                            ),
                        ]
                    finished = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
                *printed, last = finished.stdout.strip().splitlines()
                run = {**json.loads(last), "condition": condition, "number": number}
                results.append(run)
                print_run(run, args)
                if printed:  # the profile's summary
                    print("\n".join(printed))

    print(
        f"\n{conversations} conversations × {args.turns} turns at concurrency {args.concurrency}, model latency "
        f"{LATENCY_S * 1000:.0f} ms, quality gate {args.quality_gate}; medians of {args.runs} run(s) per condition "
        f"on {os.cpu_count()} cores{' (under the profiler: CPU figures inflated)' if args.profile else ''}"
    )
    print(
        f"{'condition':<10} {'CPU ms/call':>11} {'bare ms/call':>12} {'× bare':>7} {'of ideal':>8} "
        f"{'switches/call':>13} {'load':>11}"
    )
    rate_target = RATE_TARGETS.get((args.concurrency, LATENCY_S))
    cpu_target = CPU_PER_CALL_TARGETS_MS.get((args.concurrency, LATENCY_S))
    for condition in conditions:
        runs = [run for run in results if run["condition"] == condition]
        cpu_ms = statistics.median(run["cpu_ms_per_call"] for run in runs)
        bare_ms = statistics.median(run["bare"]["cpu_ms_per_call"] for run in runs)
        ratio = statistics.median(run["rate_ratio"] for run in runs)
        loads = [value for run in runs for value in (run["load_before"], run["load_after"])]
        print(
            f"{condition:<10} {cpu_ms:>11.3f} {bare_ms:>12.3f} {statistics.median(r['bare_ratio'] for r in runs):>7.2f} "
            f"{ratio:>8.3f} {statistics.median(r['switches_per_call'] for r in runs):>13.2f} "
            f"{min(loads):>5.2f}-{max(loads):<5.2f}"
        )
        if not args.profile:  # the profiler inflates the CPU it measures
            verdicts = []
            if rate_target:
                verdicts.append(f"rate ≥ {rate_target}: {'met' if ratio >= rate_target else 'NOT met'}")
            if cpu_target:
                verdicts.append(f"CPU ≤ {cpu_target} ms: {'met' if cpu_ms <= cpu_target else 'NOT met'}")
            if verdicts:
                print(f"{'':<10} targets: {'; '.join(verdicts)}")


def timed_run(
    args: argparse.Namespace,
    *,
    workspace: str,
    base_url: str,
    server_pid: int,
    neighbour_pid: int | None,
    seed: int,
    conversations: int,
    run_id: str,
) -> dict[str, Any]:
    """One run in this process: warm up, the bare client, then the timed synthesis; its measures."""
    os.environ["OPENAI_API_KEY"] = "sk-benchmark"
    os.environ["OPENAI_BASE_URL"] = base_url
    space = Workspace.resolve(workspace)

    def synthesize(run_id: str, count: int, turns: int, concurrency: int, seed: int) -> None:
        context = SynthesisContext(
            workspace=workspace,
            llm=MODEL,
            cluster_size=4,
            concurrency=concurrency,
            seed=seed,
            quality_gate=args.quality_gate,
        )
        run_job(
            builder,
            job="synthesize",
            workspace=space,
            run_id=run_id,
            context=context,
            settings={},
            inputs={"run_id": run_id, "collection": COLLECTION, "conversations": count, "turns": turns},
            max_concurrency=concurrency,
        )

    # Import and build the clients first (a seed and run of their own: nothing of them is in the timed
    # run's cache), so the timing covers synthesis only.
    synthesize(f"warm-up-{run_id}", 2, 2, 2, seed=WARM_UP_SEED + seed)
    bare_client_calls(base_url, args.concurrency, 2)
    bare = bare_client_calls(base_url, args.concurrency, BARE_CALLS_PER_THREAD)
    profiles = ThreadProfiles() if args.profile else contextlib.nullcontext()
    neighbour_cpu, server_cpu = cpu_seconds(neighbour_pid) if neighbour_pid else 0.0, cpu_seconds(server_pid)
    measure = Measure.start()
    with profiles:
        synthesize(run_id, conversations, args.turns, args.concurrency, seed=seed)
    stats = run_seam(space, run_id, MODEL, SynthesisContext(seed=seed)).stats
    model_calls = stats.calls - stats.cache_hits
    run = measure.stop(calls=model_calls)
    run.update(
        bare=bare,
        cache_hits=stats.cache_hits,
        retries=stats.retries,
        server_cpu_s=cpu_seconds(server_pid) - server_cpu,
        neighbour_cores=(cpu_seconds(neighbour_pid) - neighbour_cpu) / run["wall_s"] if neighbour_pid else 0.0,
        ideal_per_min=min(args.concurrency, conversations) * 60 / (model_calls / conversations * LATENCY_S),
        per_min=conversations / (run["wall_s"] / 60),
    )
    run["rate_ratio"] = run["per_min"] / run["ideal_per_min"]
    run["bare_ratio"] = run["cpu_ms_per_call"] / bare["cpu_ms_per_call"]
    if args.profile:
        print("Top 10 by cumulative CPU time (all threads):")
        print(profiles.summary(save_to=args.profile_out))
    return run


def print_run(run: dict[str, Any], args: argparse.Namespace) -> None:
    bare = run["bare"]
    neighbour = f", neighbour {run['neighbour_cores']:.2f} cores" if run["condition"] == "neighbour" else ""
    print(
        f"[{run['condition']} {run['number'] + 1}/{args.runs}] {run['calls']} model calls "
        f"({run['cache_hits']} cache hits, {run['retries']} retries) in {run['wall_s']:.2f} s: "
        f"{run['per_min']:.0f} conversations/min of an ideal {run['ideal_per_min']:.0f} "
        f"({run['rate_ratio']:.3f}); client CPU {run['cpu_ms_per_call']:.3f} ms/call "
        f"({run['cpu_s'] / run['wall_s']:.2f} cores), {run['switches_per_call']:.2f} switches/call; "
        f"server {run['server_cpu_s'] / run['calls'] * 1000:.2f} ms/call; "
        f"bare client {bare['cpu_ms_per_call']:.3f} ms/call at {bare['calls_per_s']:.0f} calls/s "
        f"({bare['switches_per_call']:.2f} switches/call) → ×{run['bare_ratio']:.2f}; "
        f"load {run['load_before']:.2f} → {run['load_after']:.2f}{neighbour}",
        flush=True,
    )


if __name__ == "__main__":
    main()
