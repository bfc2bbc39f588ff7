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

``--profile`` runs the timed synthesis under cProfile in every thread, timing each thread's CPU
(not the wall clock, which would rank the waits for the server first), and prints the top 10
functions by cumulative CPU time; the profiler roughly doubles the CPU per call, so take the
CPU figure from a run without it.

    .venv/bin/python benchmarks/synthesize.py [--conversations N] [--turns 4] [--concurrency 8] [--profile]
    BENCH_LATENCY_S=0.05 .venv/bin/python benchmarks/synthesize.py --concurrency 64
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchsmith.tools.offline import offline_environment  # noqa: E402

offline_environment()  # before the imports below load models or Chroma

from benchsmith.graphs.jobs.synthesize import cluster  # noqa: E402
from benchsmith.graphs.runtime.resources import run_seam  # noqa: E402
from benchsmith.graphs.runtime.runner import run_job  # noqa: E402
from benchsmith.graphs.synthesize import SynthesisContext, builder  # noqa: E402
from benchsmith.stores.workspace import Workspace  # noqa: E402
from tests.synthesis_fixtures import COLLECTION, build_collection  # noqa: E402

LATENCY_S = float(os.environ.get("BENCH_LATENCY_S", "0.2"))
# Issue 23's bounds, at the two settings it names: (concurrency, latency in s) -> least rate ratio.
RATE_TARGETS = {(8, 0.2): 0.8, (64, 0.05): 0.6}
CPU_PER_CALL_TARGETS_MS = {(64, 0.05): 1.0}  # where calls are many: at 8 in flight a run's fixed costs weigh
MODEL = "openai:sim"


SERVER_SCRIPT = """
import sys, time
from tests.openai_server import FakeOpenAIServer
from tests.synthesis_fixtures import server_replier
server = FakeOpenAIServer(replier=server_replier, latency_s=float(sys.argv[1]), keep_alive=True).start()
print(server.base_url, flush=True)
time.sleep(3600)
"""


@contextlib.contextmanager
def model_server(latency_s: float) -> Iterator[tuple[str, int]]:
    """The simulated model in its own process, so its work does not share our interpreter: its
    base URL and process id."""
    process = subprocess.Popen([sys.executable, "-c", SERVER_SCRIPT, str(latency_s)], stdout=subprocess.PIPE,
                               text=True, cwd=Path(__file__).resolve().parent.parent)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=None,
                        help="Default: 4 × concurrency, at least 32 (enough to keep every slot busy).")
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--profile", action="store_true",
                        help="Print the top 10 functions by cumulative CPU time (cProfile in every thread).")
    parser.add_argument("--profile-out", type=Path, metavar="FILE",
                        help="With --profile: also save the whole profile there (pstats format).")
    args = parser.parse_args()
    conversations = args.conversations or max(32, 4 * args.concurrency)

    with tempfile.TemporaryDirectory() as directory, model_server(LATENCY_S) as (base_url, server_pid):
        workspace = Workspace.resolve(Path(directory) / "ws")
        # Deduplication keeps about 70% of the fixture's pages, and a cluster holds one more chunk than
        # its size (the one an unanswerable turn holds out): 6 pages per conversation leave spare clusters.
        build_collection(workspace, Path(directory) / "corpus", documents=max(100, 6 * conversations + 100))
        os.environ["OPENAI_API_KEY"] = "sk-benchmark"
        os.environ["OPENAI_BASE_URL"] = base_url

        def synthesize(run_id: str, count: int, turns: int, concurrency: int, seed: int) -> None:
            context = SynthesisContext(workspace=str(workspace.root), llm=MODEL, cluster_size=4,
                                       concurrency=concurrency, seed=seed)
            run_job(builder, job="synthesize", workspace=workspace, run_id=run_id, context=context, settings={},
                    inputs={"run_id": run_id, "collection": COLLECTION, "conversations": count, "turns": turns},
                    max_concurrency=concurrency)

        # Cluster, import and build the clients first (another seed: nothing of it is in the cache),
        # so the timing covers synthesis only; the clustering depends on the seed, so the timed
        # run's is made here too, as `benchsmith cluster` makes it before a run.
        synthesize("warm-up", 2, 2, 2, seed=1)
        cluster(COLLECTION, size=4, seed=0, workspace=str(workspace.root))
        profiles = ThreadProfiles() if args.profile else contextlib.nullcontext()
        cpu_started, server_cpu_started, started = time.process_time(), cpu_seconds(server_pid), time.perf_counter()
        with profiles:
            synthesize("bench", conversations, args.turns, args.concurrency, seed=0)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        server_cpu = cpu_seconds(server_pid) - server_cpu_started
        stats = run_seam(workspace, "bench", MODEL, SynthesisContext(seed=0)).stats

    turns = conversations * args.turns
    model_calls = stats.calls - stats.cache_hits
    in_flight = min(args.concurrency, conversations)
    measured = conversations / (elapsed / 60)
    ideal = in_flight * 60 / (model_calls / conversations * LATENCY_S)
    print(f"{conversations} conversations × {args.turns} turns at concurrency {args.concurrency}, "
          f"model latency {LATENCY_S * 1000:.0f} ms")
    print(f"model calls: {model_calls} ({model_calls / conversations:.1f} per conversation, "
          f"{model_calls / turns:.2f} per turn; {stats.cache_hits} cache hits, {stats.retries} retries)")
    print(f"tokens per turn: {stats.input_tokens / turns:.0f} in, {stats.output_tokens / turns:.0f} out")
    print(f"elapsed {elapsed:.2f} s → {measured:.1f} conversations/min ({model_calls / elapsed:.0f} calls/s); "
          f"ideal {ideal:.1f}")
    print(f"client CPU {cpu:.2f} s → {cpu / model_calls * 1000:.2f} ms per model call "
          f"({cpu / elapsed:.2f} cores busy on average{'; under the profiler' if args.profile else ''})")
    print(f"server CPU {server_cpu:.2f} s ({server_cpu / model_calls * 1000:.2f} ms per call); "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    ratio = measured / ideal
    target = RATE_TARGETS.get((args.concurrency, LATENCY_S))
    verdict = f"  (target ≥ {target}: {'met' if ratio >= target else 'NOT met'})" if target else ""
    print(f"ratio measured / ideal  {ratio:.3f}{verdict}")
    if not args.profile:  # the profiler inflates the CPU it measures
        cpu_ms = cpu / model_calls * 1000
        cpu_target = CPU_PER_CALL_TARGETS_MS.get((args.concurrency, LATENCY_S))
        cpu_verdict = f"  (target ≤ {cpu_target}: {'met' if cpu_ms <= cpu_target else 'NOT met'})" if cpu_target else ""
        print(f"client CPU per call {cpu_ms:.2f} ms{cpu_verdict}")
    if args.profile:
        print("\nTop 10 by cumulative CPU time (all threads):")
        print(profiles.summary(save_to=args.profile_out))


if __name__ == "__main__":
    main()
