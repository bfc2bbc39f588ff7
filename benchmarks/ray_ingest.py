"""Ingestion's CPU per chunk without embedding, on Ray (``ray="local"``) against the single-process path.

The synthetic corpus of benchmarks/synthetic_corpus.py (topical prose, near-duplicates,
boilerplate; one chunk per document) of ``--chunks`` documents goes through the ingestion graph's
stages up to the quality filter (load, clean, chunk, dedup, quality: graphs/ingest.py), with and
without ``--ray local``. The CPU counted is the whole process tree's (this process and every process
it started: on Ray the raylet, the GCS, the workers that map the batches, their idle time included),
read from /proc before and after each run; each run has its own workspace. A first, untimed run of
each path on a small corpus imports everything and starts Ray's workers.

Printed per round: the CPU seconds and milliseconds per chunk of each path, wall seconds, and the
ratio Ray / one process (issue 35's bound: at most 1.2 on one machine); then the medians.

    .venv/bin/python benchmarks/ray_ingest.py [--chunks 20000] [--rounds 3]
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
from benchsmith.graphs.runtime.runner import run_job  # noqa: E402
from benchsmith.stores.persistence.workspace import Workspace  # noqa: E402

RATIO_BOUND = 1.2
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


def measured(root: Path, corpus: Path, name: str, ray: str | None) -> tuple[float, float, int]:
    """(tree CPU seconds, wall seconds, chunks) of one run of the stages."""
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
    return tree_cpu_seconds() - cpu, wall, int(values.values["chunks"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        write_corpus(root / "small" / "corpus.jsonl", 500, seed=1)
        write_corpus(root / "corpus" / "corpus.jsonl", args.chunks)
        for ray in (None, "local"):  # imports, Ray's start and its worker processes: untimed
            measured(root, root / "small", f"warm-{ray}", ray)
        print(f"{args.chunks:,} chunks, stages load → quality (no embedding), {os.cpu_count()} CPUs")
        ratios, per_chunk = [], {"one process": [], "Ray": []}
        for round_number in range(args.rounds):
            alone, alone_wall, chunks = measured(root, root / "corpus", f"alone-{round_number}", None)
            on_ray, ray_wall, _ = measured(root, root / "corpus", f"ray-{round_number}", "local")
            ratios.append(on_ray / alone)
            per_chunk["one process"].append(alone / chunks * 1000)
            per_chunk["Ray"].append(on_ray / chunks * 1000)
            print(
                f"round {round_number + 1}: one process {alone:.1f} CPU s ({per_chunk['one process'][-1]:.3f} ms "
                f"per chunk, {alone_wall:.1f} s wall), Ray {on_ray:.1f} CPU s ({per_chunk['Ray'][-1]:.3f} ms per "
                f"chunk, {ray_wall:.1f} s wall), ratio {ratios[-1]:.3f}"
            )
        ratio = statistics.median(ratios)
        verdict = "within" if ratio <= RATIO_BOUND else "above"
        print(
            f"median: one process {statistics.median(per_chunk['one process']):.3f} ms per chunk, Ray "
            f"{statistics.median(per_chunk['Ray']):.3f} ms per chunk, ratio {ratio:.3f} ({verdict} the bound "
            f"{RATIO_BOUND})"
        )


if __name__ == "__main__":
    main()
