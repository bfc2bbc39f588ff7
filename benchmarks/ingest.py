"""Ingestion overhead on the standard-library corpus.

Prints (whole ingest time) / (pure embedding time of the same chunks), both measured in
this run with the same warm model, and the seconds of each stage. Target: ≤ 1.25, that is
loading, cleaning, chunking, dedup, quality filtering, Chroma writes and checkpoints add at
most a quarter to the unavoidable cost of embedding.

    .venv/bin/python benchmarks/ingest.py [--embedder SPEC] [--batch-size N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchsmith.tools.offline import offline_environment

offline_environment()  # before the imports below load models or Chroma

from benchsmith.graphs.ingest import KEPT_FILE, IngestContext, builder  # noqa: E402
from benchsmith.graphs.runtime.runner import run_job  # noqa: E402
from benchsmith.stores.persistence.jsonl import load_jsonl  # noqa: E402
from benchsmith.stores.persistence.runs import RunDirectory  # noqa: E402
from benchsmith.stores.persistence.workspace import Workspace  # noqa: E402
from benchsmith.tools.retrieval.embedding import DEFAULT_EMBEDDER, load_embedder  # noqa: E402

TARGET = 1.25


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()

    embedder = load_embedder(args.embedder)
    embedder.encode(["warm-up sentence so both timings start from a loaded, initialised model"])

    with tempfile.TemporaryDirectory() as directory:
        workspace = Workspace.resolve(directory)
        context = IngestContext(workspace=str(workspace.root), embedder=args.embedder, batch_size=args.batch_size)
        started = time.perf_counter()
        outcome = run_job(
            builder,
            job="ingest",
            workspace=workspace,
            run_id="bench",
            inputs={"run_id": "bench", "sources": ["stdlib"], "collection": "bench"},
            context=context,
            settings={},
        )
        whole = time.perf_counter() - started
        texts = [chunk["text"] for chunk in load_jsonl(RunDirectory(workspace, "bench").file(KEPT_FILE))]

    started = time.perf_counter()
    embedder.encode(texts)
    pure = time.perf_counter() - started

    values = outcome.values
    print(
        f"corpus: stdlib · {values['files_read']} modules · {values['chunks']} chunks · "
        f"{values['indexed']} indexed · embedder {embedder.name} · batch {args.batch_size}"
    )
    print("seconds per stage:")
    for stage, seconds in values["stage_seconds"].items():
        print(f"  {stage:<8} {seconds:8.2f}")
    print(f"whole ingest            {whole:8.2f} s")
    print(f"pure embedding          {pure:8.2f} s  ({len(texts) / pure:.1f} chunks/s)")
    ratio = whole / pure
    print(f"ratio whole / embedding {ratio:8.3f}  (target ≤ {TARGET}: {'met' if ratio <= TARGET else 'NOT met'})")


if __name__ == "__main__":
    main()
