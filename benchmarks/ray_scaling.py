"""Synthesis rate with 1, 2 and 4 Ray workers against a model server with a fixed latency.

The loopback OpenAI-compatible test server, in a process of its own, answers every call after
``--latency`` seconds (default 0.2). For each worker count N, a local Ray instance is started with
N logical CPUs (one conversation task each) and a synthesis of ``--per-worker`` × N conversations
runs on it through ``ray="local"``, N conversations in flight, after an untimed run that starts
and warms the N workers. With K model calls per conversation (from the run's usage ledger) the
ideal is N × 60 / (K × latency) conversations per minute; printed: the measured rate, its share of
the ideal (issue 35's bound: at least 0.85 at 4) and its ratio to N = 1. The timed span is the
whole call (planning on the stored clustering and export included), so it understates the rate
while items are in flight a little. Ray's workers, the driver and the server share this machine's
cores: at 200 ms a call the workers wait on the model, not on the CPU.

    .venv/bin/python benchmarks/ray_scaling.py [--workers 1 2 4] [--per-worker 6] [--turns 3]
        [--latency 0.2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchsmith.tools.offline import offline_environment  # noqa: E402

offline_environment()  # before the imports below load models or Chroma

import ray  # noqa: E402

from benchmarks.synthesize import MODEL, model_server  # noqa: E402
from benchsmith.jobs.synthesize import synthesize  # noqa: E402
from benchsmith.stores.persistence.jsonl import load_jsonl  # noqa: E402
from benchsmith.stores.persistence.workspace import Workspace  # noqa: E402
from tests.synthesis_fixtures import COLLECTION, build_collection  # noqa: E402

IDEAL_SHARE_AT_4 = 0.85
WARM_UP_SEED = 10_000  # far from the timed runs' seeds: nothing of it is in their cache


def run(workspace: Workspace, conversations: int, workers: int, turns: int, seed: int) -> tuple[float, int]:
    """``(seconds, model calls)`` of one synthesis on the Ray instance this process holds."""
    started = time.perf_counter()
    result = synthesize(
        COLLECTION,
        conversations=conversations,
        turns=turns,
        llm=MODEL,
        seed=seed,
        concurrency=workers,
        cluster_size=4,
        quality_gate="off",
        workspace=str(workspace.root),
        ray="local",
    )
    elapsed = time.perf_counter() - started
    calls = sum(1 for call in load_jsonl(result.run_dir / "usage.jsonl") if not call["cached"])
    return elapsed, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--per-worker", type=int, default=6, help="conversations per worker")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root, model_server(args.latency) as (base_url, _):
        os.environ.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="sk-bench")  # Ray's local workers inherit it
        workspace = Workspace.resolve(Path(root) / "ws")
        build_collection(workspace, Path(root) / "corpus", documents=40 * max(args.workers))
        print(
            f"latency {args.latency * 1000:.0f} ms per call, {args.turns} turns per conversation, "
            f"one conversation in flight per worker; {os.cpu_count()} CPUs"
        )
        print("workers  conversations  seconds  conv/min    ideal  of ideal  × 1 worker")
        base_rate = None
        for workers in args.workers:
            ray.shutdown()
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, object_store_memory=128 << 20)
            run(workspace, workers, workers, args.turns, WARM_UP_SEED + workers)  # starts and warms the workers
            conversations = args.per_worker * workers
            seconds, calls = run(workspace, conversations, workers, args.turns, workers)
            rate = conversations * 60 / seconds
            ideal = workers * 60 / (calls / conversations * args.latency)
            base_rate = base_rate or rate
            print(
                f"{workers:7d}  {conversations:13d}  {seconds:7.1f}  {rate:8.1f}  {ideal:7.1f}  "
                f"{rate / ideal:8.2f}  {rate / base_rate:10.2f}"
            )
        ray.shutdown()
        print(f"bound: at least {IDEAL_SHARE_AT_4} of the ideal at 4 workers")


if __name__ == "__main__":
    main()
