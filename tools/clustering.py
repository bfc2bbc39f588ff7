"""Greedy traversal clustering (MTR-Pipeline): one semantic path through every chunk, cut
into clusters of ``size`` consecutive chunks.

The method:

1. A k-nearest-neighbour graph over the (L2-normalized, so cosine = dot product)
   embeddings. Up to ``exact_limit`` chunks it is exact: blocks of rows are multiplied
   against all vectors and ``np.argpartition`` picks the top k, so memory stays bounded
   (``BLOCK_ELEMENTS`` similarities at a time) and nothing n×n is ever built. Above it an
   HNSW index (hnswlib) answers the k+1 nearest of every vector (self dropped).
2. The walk starts at a seeded random chunk and steps to the nearest *unvisited*
   neighbour on the current chunk's list. When the whole list is visited, it continues at
   the nearest unvisited chunk found by a search, never at a random one, so the path only
   jumps as far as it has to. With HNSW, visited chunks are marked deleted in the index
   and the search is a k=1 query; once few chunks remain (``exact_tail``) or hnswlib
   cannot return a result, an exact scan over the remaining vectors takes over. The exact
   graph uses the exact scan throughout, over a compacted copy of the unvisited vectors.
3. With texts, a chunk whose word 5-gram Jaccard with the last kept chunk before it on
   the path is at least ``near_identical`` is dropped (and reported): the same passage
   twice in one cluster would give two gold chunks for one question.
4. The path is cut every ``size`` chunks; only the last cluster may be smaller.

Consecutive clusters are neighbours on the path, so they are about related material.

Defaults and why (timings: benchmarks/cluster.py, 2 CPU cores, dimension 384):

* ``size=8``, ``neighbours=16``: the method's defaults. With 16 neighbours the list runs
  dry (a search) at about 5 % of steps on random vectors and 16 % on planted topics,
  where a topic's last members find their whole list visited.
* ``exact_limit=20_000``: up to there the exact graph takes seconds (about 4 s at 20k)
  and the path is exactly the O(n²) reference's (nearest unvisited by a full scan at
  every step); beyond it the exact graph's quadratic cost overtakes HNSW's (whose time
  grows about 2.6× per doubling of n at 50-100k: its searches lengthen and the index
  outgrows the CPU caches).
* HNSW ``M=48`` (``ef_construction=48``: hnswlib raises it to M anyway), query ``ef=24``
  for the graph, ``ef=8`` for the searches: with the HNSW index forced on 10k and 20k
  vectors the path keeps 0.973 and 0.958 of the reference's mean consecutive similarity
  on random vectors (the hard case: true neighbours are barely closer than the rest) and
  0.999 on planted topics, against the 0.95 target; M=40 gives 0.94 at 20k, M=56 and 64
  gain 1-2 % for 15-35 % more time. A larger ``ef_construction`` or graph ``ef`` mostly
  adds time; a search ``ef`` of 1 loses 1 % on planted topics and 16 gains nothing. 100k
  vectors take about 50 s (random) and 19 s (planted topics); there the path keeps 0.90
  (random: the graph's recall@16 is about 0.6 at 50k) and 0.99 (planted) of the exact
  path.
* ``exact_tail`` = 40·sqrt(n): see :func:`default_exact_tail`.
* ``threads=-1`` (all cores) for the index build: hnswlib's parallel insertion makes the
  graph, and so a path above ``exact_limit``, vary slightly from run to run; ``threads=1``
  makes it reproducible at about twice the build time. Paths up to ``exact_limit``
  depend only on the seed.
* ``near_identical=0.9``: word 5-gram Jaccard; copies of a passage with a few edited
  words score above it (one edited word in 120 leaves 0.92), different passages on one
  topic far below.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

DEFAULT_SIZE = 8
DEFAULT_NEIGHBOURS = 16
DEFAULT_NEAR_IDENTICAL = 0.9
DEFAULT_EXACT_LIMIT = 20_000
BLOCK_ELEMENTS = 1 << 24  # similarities per block of the exact graph: 64 MB float32 (+ 128 MB argpartition)
HNSW_M = 48
HNSW_EF_CONSTRUCTION = 48
HNSW_EF = 24
HNSW_SEARCH_EF = 8
EXACT_TAIL_SCALE = 40  # exact scans take over when at most 40·sqrt(n) rows remain
SHINGLE_WORDS = 5
WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class Clustering:
    path: list[int]  # row indices in visiting order, near-identical chunks removed
    clusters: list[list[int]]  # consecutive slices of ``path``
    dropped: list[int]  # rows dropped as near-identical to the chunk kept before them
    searches: int  # how often the walk searched for the nearest unvisited chunk
    seconds: dict[str, float] = field(default_factory=dict)  # "graph" and "walk"


def as_unit_rows(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` as a C-contiguous float32 (n, d) matrix with unit rows.

    Rows already of unit length are used as they are (no copy for float32 input); others
    are normalized in a copy, and zero rows stay zero (similar to nothing).
    """
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise ValueError(f"expected a non-empty (n, d) matrix of embeddings, got shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1)
    if not np.isfinite(norms).all():
        raise ValueError("embeddings contain NaN or infinite values")
    if np.abs(norms - 1).max() > 1e-3:  # float32 rounding of normalized embeddings is ~1e-7
        matrix = matrix / np.where(norms == 0, 1, norms)[:, None]
    return matrix


def knn_graph(vectors: np.ndarray, k: int = DEFAULT_NEIGHBOURS, *, exact_limit: int = DEFAULT_EXACT_LIMIT,
              seed: int = 0, threads: int = -1) -> np.ndarray:
    """(n, k) indices of each row's k most similar other rows, nearest first.

    ``k`` is clamped to n - 1. Exact up to ``exact_limit`` rows, HNSW above.
    """
    matrix = as_unit_rows(vectors)
    k = _clamp_neighbours(k, len(matrix))
    if len(matrix) <= exact_limit or k == 0:
        return exact_knn(matrix, k)
    return hnsw_knn(build_hnsw(matrix, seed=seed, threads=threads), matrix, k)


def _clamp_neighbours(k: int, n: int) -> int:
    if k < 1:
        raise ValueError(f"neighbours must be at least 1, got {k}")
    return min(k, n - 1)


def exact_knn(matrix: np.ndarray, k: int) -> np.ndarray:
    """Blocked brute force: ties are ordered by index, so the result is deterministic."""
    n = len(matrix)
    result = np.empty((n, k), dtype=np.int64)
    if k == 0:
        return result
    rows = max(1, min(n, BLOCK_ELEMENTS // n))
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        similarities = matrix[start:stop] @ matrix.T
        similarities[np.arange(stop - start), np.arange(start, stop)] = -np.inf  # never your own neighbour
        top = np.argpartition(similarities, n - k, axis=1)[:, n - k:]
        top_similarities = np.take_along_axis(similarities, top, axis=1)
        order = np.lexsort((top, -top_similarities))  # by similarity, then index
        result[start:stop] = np.take_along_axis(top, order, axis=1)
    return result


def build_hnsw(matrix: np.ndarray, *, seed: int = 0, threads: int = -1):
    """An inner-product HNSW index over the rows, labelled by row index."""
    import hnswlib  # imported here: the exact path (small collections, tests) does not need it

    index = hnswlib.Index(space="ip", dim=matrix.shape[1])
    index.init_index(max_elements=len(matrix), M=HNSW_M, ef_construction=HNSW_EF_CONSTRUCTION,
                     random_seed=seed, allow_replace_deleted=False)
    index.add_items(matrix, np.arange(len(matrix)), num_threads=threads)
    return index


def hnsw_knn(index, matrix: np.ndarray, k: int) -> np.ndarray:
    """The k nearest other rows of every row according to ``index``."""
    n = len(matrix)
    index.set_ef(max(HNSW_EF, k + 1))
    try:
        labels, _ = index.knn_query(matrix, k=k + 1, num_threads=-1)
    except RuntimeError:  # some row reached fewer than k + 1 rows (tiny or degenerate graphs)
        return exact_knn(matrix, k)
    labels = labels.astype(np.int64)
    # Drop each row's own label; where the approximate search missed it, drop the farthest.
    own = labels == np.arange(n)[:, None]
    own[~own.any(axis=1), -1] = True
    return labels[~own].reshape(n, k)


class _ExactSearch:
    """Nearest unvisited row by a scan over a compacted copy of the unvisited rows.

    The copy is rebuilt when half of it has been visited, so a scan costs at most twice
    the number of unvisited rows and the copies add up to O(n) rows in all.
    """

    def __init__(self, matrix: np.ndarray, visited: np.ndarray, candidates: np.ndarray | None = None):
        self.visited = visited  # shared with the walk, updated by it
        self.ids = np.arange(len(matrix)) if candidates is None else candidates
        self.block = matrix if candidates is None else matrix[candidates]
        self.matrix = matrix

    def nearest(self, path: list[int]) -> int:
        alive = ~self.visited[self.ids]
        if 2 * np.count_nonzero(alive) < len(self.ids):
            self.ids, self.block = self.ids[alive], self.block[alive]
            alive = alive[alive]
        similarities = self.block @ self.matrix[path[-1]]
        similarities[~alive] = -np.inf
        return int(self.ids[np.argmax(similarities)])  # argmax: the lowest index among ties


class _HnswSearch:
    """Nearest unvisited row by a k=1 query on the HNSW index with visited rows deleted.

    Deleted rows still route the search, but it must find ``ef`` live rows before it
    stops, so it gets slower as the live rows thin out: below ``exact_tail`` remaining
    rows an exact scan is cheaper and takes over (as it does if hnswlib finds nothing).
    """

    def __init__(self, index, matrix: np.ndarray, visited: np.ndarray, exact_tail: int):
        self.index, self.matrix, self.visited = index, matrix, visited
        index.set_ef(HNSW_SEARCH_EF)
        self.exact_tail = exact_tail
        self.deleted = 0  # path[:deleted] is marked deleted in the index
        self.exact: _ExactSearch | None = None

    def nearest(self, path: list[int]) -> int:
        if self.exact is None and len(self.matrix) - len(path) <= self.exact_tail:
            self.exact = _ExactSearch(self.matrix, self.visited, np.flatnonzero(~self.visited))
        if self.exact is not None:
            return self.exact.nearest(path)
        for row in path[self.deleted:]:
            self.index.mark_deleted(row)
        self.deleted = len(path)
        try:
            labels, _ = self.index.knn_query(self.matrix[path[-1]], k=1)
        except RuntimeError:  # "Cannot return the results": the search reached no live row
            labels = None
        if labels is None or self.visited[int(labels[0, 0])]:  # the index ran dry: scan from now on
            self.exact = _ExactSearch(self.matrix, self.visited, np.flatnonzero(~self.visited))
            return self.exact.nearest(path)
        return int(labels[0, 0])


def default_exact_tail(n: int) -> int:
    """Remaining rows below which an exact scan beats an HNSW query with deleted rows.

    A scan costs the remaining count r; a query must step over deleted rows to find live
    ones, so it costs about n / r: the two meet near sqrt(n). 40·sqrt(n) (12.6k of 100k)
    gave the fastest walk on 100k random and planted-topic vectors of dimension 384; half
    of it doubled the walk's time on random vectors, twice it nearly did on planted topics.
    """
    return int(EXACT_TAIL_SCALE * np.sqrt(n))


def greedy_path(vectors: np.ndarray, neighbours: np.ndarray, *, seed: int = 0, index=None,
                exact_tail: int | None = None) -> tuple[list[int], int]:
    """The greedy walk over a k-NN graph: (visiting order of all rows, number of searches).

    ``neighbours`` is the (n, k) output of :func:`knn_graph`. Pass the HNSW ``index`` the
    graph came from to search it for the nearest unvisited row when a list is exhausted;
    without one the search is an exact scan. ``exact_tail`` (default
    :func:`default_exact_tail`) is the number of remaining rows below which HNSW searches
    give way to exact scans.
    """
    matrix = as_unit_rows(vectors)
    n = len(matrix)
    if neighbours.ndim != 2 or len(neighbours) != n or (n > 1 and neighbours.shape[1] == 0):
        raise ValueError(f"neighbours must be an ({n}, k) index matrix with k >= 1, got {neighbours.shape}")
    visited = bytearray(n)  # bytearray: fast to index from Python; viewed as numpy by the search
    visited_view = np.frombuffer(visited, dtype=np.bool_)
    if index is None:
        search = _ExactSearch(matrix, visited_view)
    else:
        search = _HnswSearch(index, matrix, visited_view, default_exact_tail(n) if exact_tail is None else exact_tail)
    rows = neighbours.tolist()
    current = int(np.random.default_rng(seed).integers(n))
    path, searches = [current], 0
    visited[current] = 1
    for _ in range(n - 1):
        for candidate in rows[current]:
            if not visited[candidate]:
                break
        else:  # every listed neighbour is visited: jump to the nearest unvisited chunk
            candidate = search.nearest(path)
            searches += 1
        visited[candidate] = 1
        path.append(candidate)
        current = candidate
    return path, searches


def naive_greedy_path(vectors: np.ndarray, *, seed: int = 0) -> list[int]:
    """Reference walk: the nearest unvisited row by a full scan at every step, O(n² d)
    (numpy, over the unvisited rows, compacted when half of them are visited).

    Starts where :func:`greedy_path` starts for the same seed; with an exact graph of
    k = n - 1 both give the same path.
    """
    matrix = as_unit_rows(vectors)
    n = len(matrix)
    visited = np.zeros(n, dtype=np.bool_)
    search = _ExactSearch(matrix, visited)
    path = [int(np.random.default_rng(seed).integers(n))]
    visited[path[0]] = True
    for _ in range(n - 1):
        path.append(search.nearest(path))
        visited[path[-1]] = True
    return path


def word_shingles(text: str, size: int = SHINGLE_WORDS) -> set[tuple[str, ...]]:
    """Word ``size``-grams of the lower-cased text (the whole text if it is shorter)."""
    words = WORD.findall(text.lower())
    if len(words) <= size:
        return {tuple(words)}
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def shingle_jaccard(a: set, b: set) -> float:
    intersection = len(a & b)
    return intersection / (len(a) + len(b) - intersection)


def drop_near_identical(path: Sequence[int], texts: Sequence[str],
                        threshold: float = DEFAULT_NEAR_IDENTICAL) -> tuple[list[int], list[int]]:
    """(kept, dropped): a chunk is dropped when its word 5-gram Jaccard with the last kept
    chunk before it on the path is at least ``threshold``.

    Comparing with the last *kept* chunk means a run of copies collapses to its first.
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"near-identical threshold must be in (0, 1], got {threshold}")
    kept: list[int] = []
    dropped: list[int] = []
    previous: set | None = None
    for row in path:
        shingles = word_shingles(texts[row])
        if previous is not None and shingle_jaccard(shingles, previous) >= threshold:
            dropped.append(row)
            continue
        kept.append(row)
        previous = shingles
    return kept, dropped


def cluster_path(path: Sequence[int], size: int = DEFAULT_SIZE) -> list[list[int]]:
    """``path`` cut every ``size`` items; only the last cluster may be smaller."""
    if size < 1:
        raise ValueError(f"cluster size must be at least 1, got {size}")
    return [list(path[start : start + size]) for start in range(0, len(path), size)]


def greedy_traversal_clusters(vectors: np.ndarray, *, size: int = DEFAULT_SIZE, neighbours: int = DEFAULT_NEIGHBOURS,
                              seed: int = 0, texts: Sequence[str] | None = None,
                              near_identical: float = DEFAULT_NEAR_IDENTICAL,
                              exact_limit: int = DEFAULT_EXACT_LIMIT, threads: int = -1) -> Clustering:
    """Greedy traversal clustering of the rows of ``vectors`` (see the module docstring).

    ``texts[i]`` is the text of row i; without texts nothing is dropped. ``threads`` is
    passed to hnswlib's index build (1 makes paths above ``exact_limit`` reproducible).
    """
    if size < 1:
        raise ValueError(f"cluster size must be at least 1, got {size}")
    matrix = as_unit_rows(vectors)
    n = len(matrix)
    if texts is not None and len(texts) != n:
        raise ValueError(f"got {len(texts)} texts for {n} embeddings")
    k = _clamp_neighbours(neighbours, n)
    started = time.perf_counter()
    index = None
    if n <= exact_limit or n == 1:
        graph = exact_knn(matrix, k)
    else:
        index = build_hnsw(matrix, seed=seed, threads=threads)
        graph = hnsw_knn(index, matrix, k)
    walk_started = time.perf_counter()
    path, searches = greedy_path(matrix, graph, seed=seed, index=index)
    seconds = {"graph": walk_started - started, "walk": time.perf_counter() - walk_started}
    dropped: list[int] = []
    if texts is not None:
        path, dropped = drop_near_identical(path, texts, near_identical)
    return Clustering(path=path, clusters=cluster_path(path, size), dropped=dropped, searches=searches,
                      seconds=seconds)


def mean_consecutive_similarity(vectors: np.ndarray, path: Sequence[int]) -> float:
    """Mean dot product (cosine for unit rows) of consecutive rows on ``path``; 0 for fewer than 2."""
    if len(path) < 2:
        return 0.0
    order = np.asarray(path, dtype=np.int64)
    total = 0.0
    step = 8192  # bounded temporaries however long the path
    for start in range(0, len(order) - 1, step):
        here, after = order[start : start + step], order[start + 1 : start + step + 1]
        here = here[: len(after)]
        total += float(np.einsum("ij,ij->", vectors[here], vectors[after], dtype=np.float64))
    return total / (len(order) - 1)
