"""Ingestion's CPU per chunk without embedding, on Ray (``ray="local"``) against the single-process path.

The synthetic corpus of benchmarks/synthetic_corpus.py (topical prose, near-duplicates,
boilerplate; one chunk per document) of ``--chunks`` documents goes through the ingestion graph's
stages up to the quality filter (load, clean, chunk, dedup, quality: graphs/ingest.py), with and
without ``--ray local``. The CPU counted is the whole process tree's (this process and every process
it started: on Ray the raylet, the GCS, the workers that map the batches, their idle time included),
read from /proc before and after each run; each run has its own workspace. A first, untimed run of
each path on a small corpus imports everything and starts Ray's workers.

Each path runs at two sizes (``--base`` and ``--chunks``): the CPU per chunk is the difference of
the two runs over the difference of their chunks, what each further chunk costs (Ray's cost per run,
a few CPU seconds to start each stage's Ray Data pipeline and its worker processes, is left out:
it does not grow with the corpus). Ray's processes also spend CPU at rest (the raylet, the GCS,
idle workers polling), measured over ``IDLE_S`` seconds before the runs: a cost per second that a
longer run (a busier machine) pays more of, printed apart. Printed per round: each run's CPU and wall seconds, the ratio
Ray / one process of the whole larger run and of the cost per chunk (issue 35's bound: at most 1.2
on one machine); then the medians.

    .venv/bin/python benchmarks/ray_ingest.py [--chunks 20000] [--base 5000] [--rounds 2] [--ray-cpus N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchsmith.tools.offline import offline_environment  # noqa: E402

offline_environment()  # before the imports below load models or Chroma

from langgraph.graph import END, START, StateGraph  # noqa: E402

from benchmarks.synthetic_corpus import write_corpus  # noqa: E402
from benchsmith.graphs.ingest import IngestContext, IngestInput, IngestState, chunk, clean, dedup, load, quality, timed  # noqa: E402
from benchsmith.graphs.runtime.ray_items import connect  # noqa: E402
from benchsmith.graphs.runtime.runner import run_job  # noqa: E402
from benchsmith.stores.persistence.workspace import Workspace  # noqa: E402

RATIO_BOUND = 1.2
IDLE_S = 10.0  # seconds Ray's processes are watched at rest: their CPU per second, whatever the corpus
STAGES_WITHOUT_EMBEDDING = (load, clean, chunk, dedup, quality)


def without_embedding() -> StateGraph:
    """The ingestion graph up to the quality filter (the embed stage left out)."""
    builder = StateGraph(IngestState, context_schema=IngestContext, input_schema=IngestInput)
    for stage in STAGES_WITHOUT_EMBEDDING:
        builder.add_node(stage.__name__, timed(stage))
    builder.add_edge(START, STAGES_WITHOUT_EMBEDDING[0].__name__)
    for before, after in pairwise(STAGES_WITHOUT_EMBEDDING):
        builder.add_edge(before.__name__, after.__name__)
    builder.add_edge(STAGES_WITHOUT_EMBEDDING[-1].__name__, END)
    return builder


def tree_cpu_seconds() -> float:
    """CPU seconds (user and system) of this process and every living process under it."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended meanwhile
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    mine, total = os.getpid(), 0.0
    for pid, cpu in times.items():
        ancestor = pid
        while ancestor not in (mine, 0, 1) and ancestor in parents:
            ancestor = parents[ancestor]
        if ancestor == mine:
            total += cpu
    return total


def measured(root: Path, corpus: Path, name: str, ray: str | None) -> tuple[float, float, float, int]:
    """(tree CPU seconds, this process's CPU seconds in the stages, wall seconds, chunks) of one run of
    the stages; this process's share is what a larger cluster cannot spread (it writes every file)."""
    workspace = Workspace.resolve(root / name)
    context = IngestContext(workspace=str(workspace.root), ray=ray)
    cpu, started = tree_cpu_seconds(), time.perf_counter()
    values = run_job(
        without_embedding(),
        job="ingest",
        workspace=workspace,
        run_id=name,
        inputs={"run_id": name, "sources": [str(corpus)], "collection": "bench"},
        context=context,
        settings={"sources": [str(corpus)], "collection": "bench"},
    )
    wall = time.perf_counter() - started
    driver = sum(values.values["stage_cpu_seconds"].values())
    return tree_cpu_seconds() - cpu, driver, wall, int(values.values["chunks"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--base", type=int, default=5_000, help="The smaller corpus the marginal cost is taken from.")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--ray-cpus", type=int, help="CPUs of the local Ray instance (default: all); 1 maps one batch at a time."
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        write_corpus(root / "small" / "corpus.jsonl", 500, seed=1)
        sizes = {"base": args.base, "large": args.chunks}
        for name, size in sizes.items():
            write_corpus(root / name / "corpus.jsonl", size)
        # Ray started from this (the main) thread, as the ingest job does: Linux ends a child process when
        # the thread that started it ends (Ray asks for that), and the stages run on threads of their own.
        if args.ray_cpus:  # an instance of that size; connect keeps it
            import ray

            ray.init(num_cpus=args.ray_cpus, include_dashboard=False, log_to_driver=False)
        connect("local")
        for ray in (None, "local"):  # imports, Ray's start and its worker processes: untimed
            measured(root, root / "small", f"warm-{ray}", ray)
        idle_before = tree_cpu_seconds()
        time.sleep(IDLE_S)
        idle = (tree_cpu_seconds() - idle_before) / IDLE_S
        print(f"Ray's processes at rest: {idle:.3f} CPU s per second (over {IDLE_S:.0f} s; counted in Ray's figures)")
        print(f"{args.base:,} and {args.chunks:,} chunks, stages load → quality (no embedding), {os.cpu_count()} CPUs")
        whole, marginal = [], []
        for round_number in range(args.rounds):
            cpu: dict[tuple[str, str], float] = {}
            driver: dict[str, float] = {}
            walls: dict[tuple[str, str], float] = {}
            chunks: dict[str, int] = {}
            for name in sizes:
                for path, ray in (("one process", None), ("Ray", "local")):
                    used, own, wall, chunks[name] = measured(root, root / name, f"{name}-{ray}-{round_number}", ray)
                    cpu[path, name], walls[path, name] = used, wall
                    if ray:
                        driver[name] = own
                    print(
                        f"round {round_number + 1}, {chunks[name]:,} chunks, {path}: {used:.1f} CPU s "
                        f"({used / chunks[name] * 1000:.3f} ms per chunk; {own:.1f} s of it this process's in the "
                        f"stages), {wall:.1f} s wall"
                    )
            extra = chunks["large"] - chunks["base"]
            per_chunk = {
                path: (cpu[path, "large"] - cpu[path, "base"]) / extra * 1000 for path in ("one process", "Ray")
            }
            at_rest = idle * (walls["Ray", "large"] - walls["Ray", "base"]) / extra * 1000
            whole.append(cpu["Ray", "large"] / cpu["one process", "large"])
            marginal.append(per_chunk["Ray"] / per_chunk["one process"])
            print(
                f"round {round_number + 1}: at {chunks['large']:,} chunks Ray / one process {whole[-1]:.3f}; per chunk "
                f"more ({chunks['base']:,} → {chunks['large']:,}): one process {per_chunk['one process']:.3f} ms, "
                f"Ray {per_chunk['Ray']:.3f} ms (this process {(driver['large'] - driver['base']) / extra * 1000:.3f} "
                f"ms, the nodes the rest), ratio {marginal[-1]:.3f}; of Ray's, {at_rest:.3f} ms per chunk is its "
                f"processes' CPU at rest over the longer run (ratio without it "
                f"{(per_chunk['Ray'] - at_rest) / per_chunk['one process']:.3f})"
            )
        ratio = statistics.median(marginal)
        verdict = "within" if ratio <= RATIO_BOUND else "above"
        print(
            f"median: ratio per chunk {ratio:.3f} ({verdict} the bound {RATIO_BOUND}); whole run at "
            f"{args.chunks:,} chunks {statistics.median(whole):.3f} (Ray's fixed cost per run included)"
        )


if __name__ == "__main__":
    main()
