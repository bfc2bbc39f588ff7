"""Does synthesis cost the same per conversation at 1,600 conversations as at 100?

Offline baseline agents (no model latency, so the orchestration, the files and the
checkpoints are all there is to measure) over a collection of unit vectors stored straight
into Chroma. For 100, 400 and 1,600 conversations of ``--turns`` turns it prints:

* ms per conversation: the run's wall time, and the process's CPU time (all threads; the
  steadier figure on a loaded machine), clustering done beforehand;
* checkpoint bytes per conversation: the run's thread in checkpoints.sqlite (checkpoint,
  metadata and pending writes), and the dialogue bytes per conversation beside it;
* the ratios of the time per conversation at 1,600 to the time at 100 (target ≤ 1.2) and
  whether checkpoints stay within 5 KB per conversation beyond the dialogue.

    .venv/bin/python benchmarks/synthesis_scaling.py [--turns 4] [--sizes 100 400 1600]
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchsmith.tools.offline import offline_environment

offline_environment()  # before the imports below load models or Chroma

from benchsmith.graphs.contexts.synthesize import SynthesisContext  # noqa: E402
from benchsmith.graphs.runtime.resources import chroma_client  # noqa: E402
from benchsmith.graphs.runtime.runner import run_job  # noqa: E402
from benchsmith.graphs.synthesis.run import builder  # noqa: E402
from benchsmith.stores.formats.benchmark_files import DIALOGUES_FILE  # noqa: E402
from benchsmith.stores.persistence.vectors import VectorStore  # noqa: E402
from benchsmith.stores.persistence.workspace import Workspace  # noqa: E402
from benchsmith.tools.corpus.corpus_clusters import cluster_collection  # noqa: E402
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction  # noqa: E402

TIME_TARGET, CHECKPOINT_TARGET_BYTES = 1.2, 5_000
CLUSTER_SIZE, COLLECTION = 4, "scaling"
WORDS = (
    "harbour tide ledger quorum lantern basalt orchard cipher meadow falcon glacier quartz vessel "
    "spindle archive thicket compass ember"
).split()


def build_collection(workspace: Workspace, chunks: int, seed: int = 0) -> VectorStore:
    """``chunks`` passages of a few sentences with topic-structured unit vectors."""
    rng = np.random.default_rng(seed)
    topics = rng.normal(size=(64, 384)).astype(np.float32)
    labels = rng.integers(0, len(topics), size=chunks)
    vectors = topics[labels] + 0.6 * rng.normal(size=(chunks, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = []
    for number, label in enumerate(labels):
        words = [WORDS[(label + offset) % len(WORDS)] for offset in range(6)]
        texts.append(
            f"The {words[0]} record {number} describes the {words[1]} near the {words[2]}. "
            f"It explains how the {words[3]} changes the {words[4]} over time. "
            f"Finally it notes that the {words[5]} register {number} keeps every entry."
        )
    store = VectorStore(
        chroma_client(workspace, None), COLLECTION, ChromaEmbeddingFunction(spec="synthetic"), "synthetic"
    )
    ids = [f"chunk{number:06d}" for number in range(chunks)]
    store.upsert(ids, vectors, texts, [{"title": f"record {number}"} for number in range(chunks)])
    return store


def checkpoint_bytes(workspace: Workspace, run_id: str) -> int:
    connection = sqlite3.connect(workspace.checkpoints_path)
    try:
        stored = connection.execute(
            "SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints WHERE thread_id = ?",
            (run_id,),
        ).fetchone()[0]
        writes = connection.execute(
            "SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes WHERE thread_id = ?", (run_id,)
        ).fetchone()[0]
    finally:
        connection.close()
    return stored + writes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 400, 1600])
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as directory:
        workspace = Workspace.resolve(Path(directory) / "ws")
        store = build_collection(workspace, CLUSTER_SIZE * max(args.sizes) + 400)
        cluster_collection(workspace, store, CLUSTER_SIZE)
        context = SynthesisContext(
            workspace=str(workspace.root), cluster_size=CLUSTER_SIZE, concurrency=args.concurrency
        )
        per_conversation: dict[int, float] = {}
        cpu_per_conversation: dict[int, float] = {}
        print(f"offline synthesis, {args.turns} turns per conversation, concurrency {args.concurrency}")
        print(
            f"{'conversations':>13} {'wall ms/conv':>13} {'cpu ms/conv':>12} {'checkpoint B/conv':>18} "
            f"{'dialogue B/conv':>16}"
        )
        for size in args.sizes:
            run_id = f"scale-{size}"
            started, cpu_started = time.perf_counter(), time.process_time()
            run_job(
                builder,
                job="synthesize",
                workspace=workspace,
                run_id=run_id,
                context=context,
                settings={},
                inputs={"run_id": run_id, "collection": COLLECTION, "conversations": size, "turns": args.turns},
                max_concurrency=args.concurrency,
            )
            per_conversation[size] = (time.perf_counter() - started) * 1000 / size
            cpu_per_conversation[size] = (time.process_time() - cpu_started) * 1000 / size
            dialogue_bytes = (workspace.run_dir(run_id) / DIALOGUES_FILE).stat().st_size / size
            checkpoints = checkpoint_bytes(workspace, run_id) / size
            print(
                f"{size:>13} {per_conversation[size]:>13.1f} {cpu_per_conversation[size]:>12.1f} "
                f"{checkpoints:>18,.0f} {dialogue_bytes:>16,.0f}"
            )
            within = checkpoints - dialogue_bytes <= CHECKPOINT_TARGET_BYTES
        smallest, largest = min(args.sizes), max(args.sizes)
        for label, figures in (("wall", per_conversation), ("cpu", cpu_per_conversation)):
            ratio = figures[largest] / figures[smallest]
            print(
                f"{label} time per conversation at {largest} / at {smallest}  {ratio:.2f}  "
                f"(target ≤ {TIME_TARGET}: {'met' if ratio <= TIME_TARGET else 'NOT met'})"
            )
        print(
            f"checkpoints beyond the dialogue at {largest}: "
            f"{'within' if within else 'NOT within'} {CHECKPOINT_TARGET_BYTES:,} bytes per conversation"
        )


if __name__ == "__main__":
    main()
