"""CPU per chunk of the default in-process embedder by model batch size, on stdlib chunks.

The model pads each batch to its longest text and runs 6 transformer layers over it; the batch's
activations (batch × 256 tokens × 1,536 for the feed-forward layer) stop fitting the CPU's caches
somewhere above 16 texts. Prints, for each batch size, the CPU seconds per chunk and the ratio
to the default batch size (tools/retrieval/embedding.py), all measured in this run on the same chunks.

    .venv/bin/python benchmarks/embedding_batch.py [--chunks 300] [--sizes 8 16 32 64] [--threads N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchsmith.tools.offline import offline_environment

offline_environment()

import torch  # noqa: E402

from benchsmith.tools.corpus.chunking import chunk_document  # noqa: E402
from benchsmith.tools.corpus.cleaning import clean_documents  # noqa: E402
from benchsmith.tools.corpus.loaders import load_sources  # noqa: E402
from benchsmith.tools.retrieval.embedding import DEFAULT_BATCH_SIZE, load_embedder  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=300)
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 32, 64])
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    documents = clean_documents(load_sources(["stdlib"]).documents[:150])
    texts = [chunk.text for document in documents for chunk in chunk_document(document, chunk_size=1024)]
    texts = texts[: args.chunks]
    embedder = load_embedder()
    embedder.encode(texts[:8])  # load and warm the model outside the timings
    seconds: dict[int, float] = {}
    for size in sorted(set(args.sizes) | {DEFAULT_BATCH_SIZE}):
        embedder.batch_size = size
        started = time.process_time()
        embedder.encode(texts)
        seconds[size] = time.process_time() - started
    embedder.batch_size = DEFAULT_BATCH_SIZE
    print(f"{len(texts)} stdlib chunks of up to 1,024 characters, {args.threads} torch thread(s)")
    for size, spent in seconds.items():
        marker = "  (default)" if size == DEFAULT_BATCH_SIZE else ""
        print(
            f"batch {size:>3}: {1000 * spent / len(texts):6.1f} ms CPU per chunk, "
            f"{spent / seconds[DEFAULT_BATCH_SIZE]:.2f} × the default{marker}"
        )


if __name__ == "__main__":
    main()
