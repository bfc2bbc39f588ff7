"""Greedy traversal clustering (tools/corpus/clustering.py): speed and path quality.

Measured in one run, on unit vectors of dimension 384 of two kinds: ``random`` (Gaussian,
normalized: no structure, the hardest case for an approximate index) and ``clustered``
(n/100 planted topics, members = centroid + Gaussian noise, member-centroid cosine ≈ 0.7):

* ours: seconds for the k-NN graph, the walk and both together, on 10k, 50k and 100k
  vectors (10k uses the exact graph, the larger sizes the inverted file: the default
  ``exact_limit`` is 20k); on 10k and 20k also with the inverted file forced
  (``exact_limit=0``), which checks its default parameters against the reference;
* the naive reference on 10k and 20k: the nearest unvisited vector by a full (numpy
  vectorized) scan at every step, O(n²);
* the mean cosine similarity of consecutive vectors on each path, and ours over naive.

Targets: 100k in under 60 s; t(100k) / t(50k) ≤ 2.5 (the naive t(20k) / t(10k) is printed
beside it, ~4×); path similarity of ours / naive ≥ 0.95 on 10k and 20k.

    .venv/bin/python benchmarks/cluster.py [--quick]

``--quick`` runs small sizes only (ours 2k/5k/10k, naive 2k/4k); its targets are indicative.
Memory stays at a few copies of the largest matrix (100k × 384 float32 = 150 MB).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchsmith.tools.corpus import clustering
from benchsmith.tools.corpus.clustering import greedy_traversal_clusters, mean_consecutive_similarity, naive_greedy_path

DIMENSION = 384
TOPIC_SHARE = 0.01  # planted topics per vector
TIME_LIMIT = 60.0
GROWTH_LIMIT = 2.5
SIMILARITY_RATIO = 0.95
SIZES = {
    "full": {"ours": (10_000, 50_000, 100_000), "naive": (10_000, 20_000)},
    "quick": {"ours": (2_000, 5_000, 10_000), "naive": (2_000, 4_000)},
}


def make_vectors(kind: str, n: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, DIMENSION), dtype=np.float32)
    if kind == "clustered":
        topics = max(1, int(n * TOPIC_SHARE))
        centroids = rng.standard_normal((topics, DIMENSION), dtype=np.float32)
        centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
        # Noise of norm ~1 around a unit centroid: members share cosine ~0.5 with each other.
        vectors = centroids[rng.integers(topics, size=n)] + vectors / np.float32(np.sqrt(DIMENSION))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def run_ours(vectors: np.ndarray, exact_limit: int = clustering.DEFAULT_EXACT_LIMIT) -> dict:
    result = greedy_traversal_clusters(vectors, exact_limit=exact_limit)
    return {
        "graph": result.seconds["graph"],
        "walk": result.seconds["walk"],
        "total": sum(result.seconds.values()),
        "searches": result.searches,
        "similarity": mean_consecutive_similarity(vectors, result.path),
    }


def run_naive(vectors: np.ndarray) -> dict:
    started = time.perf_counter()
    path = naive_greedy_path(vectors)
    return {"total": time.perf_counter() - started, "similarity": mean_consecutive_similarity(vectors, path)}


def seconds(value: float | None) -> str:
    return f"{value:8.2f}" if value is not None else f"{'-':>8}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    args = parser.parse_args()
    sizes = SIZES["quick" if args.quick else "full"]
    small, large = sizes["naive"], sizes["ours"]

    print(
        f"dimension {DIMENSION} · neighbours {clustering.DEFAULT_NEIGHBOURS} · exact up to "
        f"{clustering.DEFAULT_EXACT_LIMIT:,} · inverted file: cells of {clustering.IVF_CELL_SIZE}, "
        f"{clustering.IVF_GRAPH_PROBES} probed for the graph, {clustering.IVF_SEARCH_PROBES} for a search"
    )
    print(
        f"{'data':<10}{'n':>8}  {'method':<14}{'graph s':>8}{'walk s':>8}{'total s':>8}"
        f"{'searches':>10}{'similarity':>12}{'/ naive':>9}"
    )
    results: dict[tuple[str, int, str], dict] = {}
    for kind in ("random", "clustered"):
        for n in sorted(set(small) | set(large)):
            vectors = make_vectors(kind, n)
            runs = []
            if n in small:
                runs.append(("naive", lambda vectors=vectors: run_naive(vectors)))
            runs.append(("ours", lambda vectors=vectors: run_ours(vectors)))
            if n in small:
                runs.append(("ours, IVF", lambda vectors=vectors: run_ours(vectors, exact_limit=0)))
            for method, run in runs:
                row = results[kind, n, method] = run()
                reference = results.get((kind, n, "naive"))
                ratio = f"{row['similarity'] / reference['similarity']:9.3f}" if reference else f"{'-':>9}"
                print(
                    f"{kind:<10}{n:>8,}  {method:<14}{seconds(row.get('graph'))}{seconds(row.get('walk'))}"
                    f"{seconds(row['total'])}{row.get('searches', '-'):>10}{row['similarity']:12.4f}{ratio}",
                    flush=True,
                )
            del vectors

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    biggest, before = large[-1], large[-2]
    print("\ntargets:")
    for kind in ("random", "clustered"):
        total = results[kind, biggest, "ours"]["total"]
        growth = total / results[kind, before, "ours"]["total"]
        naive_growth = results[kind, small[1], "naive"]["total"] / results[kind, small[0], "naive"]["total"]
        print(
            f"  {kind}: {biggest:,} in {total:.1f} s (target < {TIME_LIMIT:.0f} s"
            f"{' at 100,000' if args.quick else ''}: {verdict(total < TIME_LIMIT)})"
        )
        print(
            f"  {kind}: t({biggest:,}) / t({before:,}) = {growth:.2f} (target ≤ {GROWTH_LIMIT}: "
            f"{verdict(growth <= GROWTH_LIMIT)}); naive t({small[1]:,}) / t({small[0]:,}) = {naive_growth:.2f}"
        )
        for n in small:
            naive = results[kind, n, "naive"]["similarity"]
            for method in ("ours", "ours, IVF"):
                ratio = results[kind, n, method]["similarity"] / naive
                print(
                    f"  {kind}: similarity {method} / naive at {n:,} = {ratio:.3f} "
                    f"(target ≥ {SIMILARITY_RATIO}: {verdict(ratio >= SIMILARITY_RATIO)})"
                )


if __name__ == "__main__":
    main()
