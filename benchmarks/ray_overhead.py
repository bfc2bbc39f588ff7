"""Ray's overhead per conversation against the single-process path, measured in the same run.

The loopback OpenAI-compatible test server, in a process of its own, answers every call after
``--latency`` seconds (default 0.05, issue 35's 50 ms per model call). The same synthesis
(``--conversations`` × ``--turns``, ``--concurrency`` in flight, the quality gate off as in
benchmarks/synthesize.py: its spaCy parse is a cost per turn, not per call) runs twice per round:
in this process, and with ``ray="local"`` (a Ray instance on this machine, one task per
conversation; the workers are started and warmed by a first, untimed run). Each timed run has its
own seed, so no reply of one is in the cache for another. Printed per round: both wall times,
their ratio (issue 35's bound: at most 1.2 on one machine) and the overhead per conversation;
then the medians. Both paths hold the same number of conversations in flight; on this 2-core
machine Ray's workers, the driver and the server share the two cores.

    .venv/bin/python benchmarks/ray_overhead.py [--conversations 12] [--turns 3] [--concurrency 2]
        [--latency 0.05] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchsmith.tools.offline import offline_environment  # noqa: E402

offline_environment()  # before the imports below load models or Chroma

from benchmarks.synthesize import MODEL, model_server  # noqa: E402
from benchsmith.jobs.synthesize import synthesize  # noqa: E402
from benchsmith.stores.persistence.workspace import Workspace  # noqa: E402
from tests.synthesis_fixtures import COLLECTION, build_collection  # noqa: E402

RATIO_BOUND = 1.2
WARM_UP_SEED = 10_000  # far from the timed runs' seeds: nothing of it is in their cache


def timed(workspace: Workspace, args: argparse.Namespace, seed: int, ray: str | None) -> float:
    started = time.perf_counter()
    result = synthesize(
        COLLECTION,
        conversations=args.conversations,
        turns=args.turns,
        llm=MODEL,
        seed=seed,
        concurrency=args.concurrency,
        cluster_size=4,
        quality_gate="off",
        workspace=str(workspace.root),
        ray=ray,
    )
    elapsed = time.perf_counter() - started
    if len(result.dialogues) != args.conversations:
        raise SystemExit(f"a run wrote {len(result.dialogues)} of {args.conversations} conversations")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=12)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root, model_server(args.latency) as (base_url, _):
        os.environ.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="sk-bench")  # Ray's local workers inherit it
        workspace = Workspace.resolve(Path(root) / "ws")
        build_collection(workspace, Path(root) / "corpus", documents=120)
        for ray in (None, "local"):  # imports, spaCy, Ray's worker processes: untimed
            timed(workspace, args, WARM_UP_SEED + (ray is not None), ray)
        print(
            f"{args.conversations} conversations × {args.turns} turns, {args.concurrency} in flight, "
            f"{args.latency * 1000:.0f} ms per model call, {os.cpu_count()} CPUs"
        )
        ratios, overheads = [], []
        for round_number in range(args.rounds):
            alone = timed(workspace, args, 2 * round_number, None)
            on_ray = timed(workspace, args, 2 * round_number + 1, "local")
            ratios.append(on_ray / alone)
            overheads.append((on_ray - alone) / args.conversations * 1000)
            print(
                f"round {round_number + 1}: one process {alone:.2f} s, Ray {on_ray:.2f} s, "
                f"ratio {ratios[-1]:.3f}, overhead {overheads[-1]:+.1f} ms per conversation"
            )
        ratio = statistics.median(ratios)
        verdict = "within" if ratio <= RATIO_BOUND else "above"
        print(
            f"median: ratio {ratio:.3f} ({verdict} the bound {RATIO_BOUND}), "
            f"overhead {statistics.median(overheads):+.1f} ms per conversation"
        )


if __name__ == "__main__":
    main()
