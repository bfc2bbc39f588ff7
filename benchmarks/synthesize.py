"""Synthesis throughput against a model with a fixed latency.

The loopback OpenAI-compatible test server, in a process of its own as a real model server
would be, answers every call after 200 ms. With C
conversations in flight and K model calls per conversation, the ideal is C × 60 / (K × 0.2)
conversations per minute; this prints the measured rate divided by that ideal (target
≥ 0.8 at concurrency 8: orchestration, checkpoints, the HTTP client and Chroma reads may
cost at most a fifth), and the model calls and tokens per turn.

    .venv/bin/python benchmarks/synthesize.py [--conversations 32] [--turns 4] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from benchsmith.agents.models import ModelSettings, build_seam  # noqa: E402
from benchsmith.graphs.resources import register_model  # noqa: E402
from benchsmith.graphs.runner import run_job  # noqa: E402
from benchsmith.graphs.synthesize import SynthesisContext, builder  # noqa: E402
from benchsmith.stores.workspace import Workspace  # noqa: E402
from tests.synthesis_fixtures import COLLECTION, build_collection  # noqa: E402

LATENCY_S = float(os.environ.get("BENCH_LATENCY_S", "0.2"))
TARGET = 0.8


SERVER_SCRIPT = """
import sys, time
from tests.openai_server import FakeOpenAIServer
from tests.synthesis_fixtures import server_replier
server = FakeOpenAIServer(replier=server_replier, latency_s=float(sys.argv[1])).start()
print(server.base_url, flush=True)
time.sleep(3600)
"""


@contextlib.contextmanager
def model_server(latency_s: float) -> Iterator[str]:
    """The simulated model in its own process, so its work does not share our interpreter."""
    process = subprocess.Popen([sys.executable, "-c", SERVER_SCRIPT, str(latency_s)], stdout=subprocess.PIPE,
                               text=True, cwd=Path(__file__).resolve().parent.parent)
    try:
        yield process.stdout.readline().strip()
    finally:
        process.kill()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=32)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as directory, model_server(LATENCY_S) as base_url:
        workspace = Workspace.resolve(Path(directory) / "ws")
        build_collection(workspace, Path(directory) / "corpus", documents=max(100, 4 * args.conversations + 20))
        os.environ["OPENAI_API_KEY"] = "sk-benchmark"
        os.environ["OPENAI_BASE_URL"] = base_url
        seam = build_seam("openai:sim", ModelSettings())
        context = SynthesisContext(workspace=str(workspace.root), llm=register_model("benchmark-model", seam),
                                   cluster_size=4, concurrency=args.concurrency)
        # Cluster and build every agent's client first, so the timing covers synthesis only.
        run_job(builder, job="synthesize", workspace=workspace, run_id="warm-up", context=context, settings={},
                inputs={"run_id": "warm-up", "collection": COLLECTION, "conversations": 2, "turns": 2},
                max_concurrency=2)
        seam.stats.__init__()
        started = time.perf_counter()
        run_job(builder, job="synthesize", workspace=workspace, run_id="bench", context=context, settings={},
                inputs={"run_id": "bench", "collection": COLLECTION, "conversations": args.conversations,
                        "turns": args.turns},
                max_concurrency=args.concurrency)
        elapsed = time.perf_counter() - started

    turns = args.conversations * args.turns
    calls_per_conversation = seam.stats.calls / args.conversations
    measured = args.conversations / (elapsed / 60)
    ideal = args.concurrency * 60 / (calls_per_conversation * LATENCY_S)
    print(f"{args.conversations} conversations × {args.turns} turns at concurrency {args.concurrency}, "
          f"model latency {LATENCY_S * 1000:.0f} ms")
    print(f"model calls: {seam.stats.calls} ({calls_per_conversation:.1f} per conversation, "
          f"{seam.stats.calls / turns:.2f} per turn)")
    print(f"tokens per turn: {seam.stats.input_tokens / turns:.0f} in, {seam.stats.output_tokens / turns:.0f} out")
    print(f"elapsed {elapsed:.2f} s → {measured:.1f} conversations/min; ideal {ideal:.1f}")
    ratio = measured / ideal
    print(f"ratio measured / ideal  {ratio:.3f}  (target ≥ {TARGET}: {'met' if ratio >= TARGET else 'NOT met'})")


if __name__ == "__main__":
    main()
