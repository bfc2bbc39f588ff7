"""How fast the labelling page answers over a large collection (issue 33: at most 100 ms at the 95th
percentile over 100,000 chunks, each question's pool built once and cached).

Data, generated from ``--seed`` (no downloads): ``--chunks`` synthetic documents
(benchmarks/synthetic_corpus.py), stored in a Chroma collection of a fresh workspace with the
vectors of a 64-dimension feature-hashing embedder (registered by name, so no model is loaded or
timed); ``--questions`` questions, each eight words of a random document.

Measured in one run:

* the first start of a labelling run (`benchsmith.open_label_session`): the collection exported as
  the run's BEIR corpus, BM25 built over it, the stored vectors read, each question's pool (BM25,
  dense, RRF hybrid; top 10 each) built and appended to pools.jsonl; and a second start, which
  reads the pools back (what "cached per question" means: no index is built again);
* the page's answers through the real server (benchsmith/pages/server.py, a new connection per
  request as urllib makes it): ``GET /api/item`` (a pair's question, passage and marks) at random
  positions, ``POST /api/judge`` (a judgment appended and synced, the progress answered),
  ``GET /api/state``; and the baseline, ``GET /static/pages.css``, the cost of a request itself.

Target (exit status 1 if missed): each API route's p95 ≤ 100 ms. Ratios to the baseline are printed.

    .venv/bin/python benchmarks/label_page_latency.py [--chunks 100000] [--questions 20] [--requests 300]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import threading
import time
import urllib.request
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic_corpus import write_corpus

import benchsmith
from benchsmith.graphs.runtime.resources import chroma_client, register_embedder
from benchsmith.pages.server import serve
from benchsmith.stores.persistence.jsonl import read_jsonl
from benchsmith.stores.persistence.vectors import VectorStore
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction

TARGET_P95_MS = 100.0
BATCH = 4096


class HashingEmbedder:
    """Feature hashing of words into 64 dimensions, L2-normalized: fast, deterministic, no model."""

    name = "label-bench-hashing-64"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                vectors[row, zlib.crc32(word.encode()) % 64] += 1.0
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)


def percentile_ms(seconds: list[float], share: float) -> float:
    return float(np.percentile(np.asarray(seconds) * 1000, share))


def timed(request: urllib.request.Request | str) -> float:
    start = time.perf_counter()
    with urllib.request.urlopen(request) as answer:
        answer.read()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    embedder = HashingEmbedder()
    register_embedder(embedder)

    with tempfile.TemporaryDirectory(prefix="label-bench-") as folder:
        root = Path(folder)
        workspace = Workspace.resolve(root / "ws")
        write_corpus(root / "corpus.jsonl", args.chunks, args.seed)
        started = time.perf_counter()
        store = VectorStore(
            chroma_client(workspace, None), "label-bench", ChromaEmbeddingFunction(embedder), embedder.name
        )
        records = [record for _, record in read_jsonl(root / "corpus.jsonl")]
        for start in range(0, len(records), BATCH):
            batch = records[start : start + BATCH]
            texts = [record["text"] for record in batch]
            store.upsert(
                [record["_id"] for record in batch],
                embedder.encode(texts).tolist(),
                texts,
                [{"title": record["title"]} for record in batch],
            )
        stored_s = time.perf_counter() - started
        questions = root / "questions.txt"
        asked = [" ".join(rng.choice(records)["text"].split()[:8]) for _ in range(args.questions)]
        questions.write_text("\n".join(asked) + "\n", encoding="utf-8")
        del records

        options = {"collection": "label-bench", "run_id": "bench", "workspace": workspace.root}
        started = time.perf_counter()
        session = benchsmith.open_label_session(questions, **options)
        first_start_s = time.perf_counter() - started
        started = time.perf_counter()
        session = benchsmith.open_label_session(questions, **options)
        second_start_s = time.perf_counter() - started
        pairs = len(session.queue)

        ready, stop = threading.Event(), threading.Event()
        address: dict[str, str] = {}
        server = threading.Thread(
            target=serve,
            args=(session, "127.0.0.1", 0, lambda found: (address.update(url=found.url), ready.set()), stop),
            daemon=True,
        )
        server.start()
        ready.wait(30)
        base = address["url"]
        times: dict[str, list[float]] = {"static": [], "item": [], "judge": [], "state": []}
        for number in range(args.requests):  # interleaved, so a slow moment falls on every route alike
            index = rng.randrange(pairs)
            times["static"].append(timed(base + "static/pages.css"))
            times["item"].append(timed(f"{base}api/item?index={index}"))
            body = json.dumps({"index": index, "grade": number % 4, "seconds": 1.0}).encode()
            times["judge"].append(timed(urllib.request.Request(base + "api/judge", data=body, method="POST")))
            times["state"].append(timed(base + "api/state"))
        stop.set()
        server.join(10)

    print(f"collection: {args.chunks:,} chunks stored in {stored_s:.1f} s; {args.questions} questions, {pairs:,} pairs")
    print(f"first start (corpus export, BM25, vectors, every pool): {first_start_s:.1f} s")
    print(f"second start (pools read back): {second_start_s:.2f} s")
    baseline = percentile_ms(times["static"], 95)
    print(f"{'request':<24}{'p50 ms':>10}{'p95 ms':>10}{'p95 / static':>14}")
    missed = []
    for route, label in (
        ("static", "GET /static/pages.css"),
        ("item", "GET /api/item"),
        ("judge", "POST /api/judge"),
        ("state", "GET /api/state"),
    ):
        p50, p95 = percentile_ms(times[route], 50), percentile_ms(times[route], 95)
        print(f"{label:<24}{p50:>10.2f}{p95:>10.2f}{p95 / baseline:>14.2f}")
        if route != "static" and p95 > TARGET_P95_MS:
            missed.append(f"{label} p95 {p95:.1f} ms > {TARGET_P95_MS:g} ms")
    for line in missed:
        print("MISSED:", line)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
