"""Greedy traversal clustering (MTR-Pipeline): one semantic path through every chunk, cut
into clusters of ``size`` consecutive chunks.

The method:

1. A k-nearest-neighbour graph over the (L2-normalized, so cosine = dot product)
   embeddings, built by blocks of rows that are independent of each other (``map_blocks``
   may run them as Ray tasks on a cluster: the same graph, ids, order and ties). Up to ``exact_limit`` chunks it is exact: blocks of rows are multiplied
   against all vectors and ``np.argpartition`` picks the top k, so memory stays bounded
   (``BLOCK_ELEMENTS`` similarities at a time) and nothing n×n is ever built. Above it an
   inverted file routes the candidates: spherical k-means cells of ~256 rows, and each
   row's neighbours are found exactly among the members of the 48 cells nearest to its
   own, a fixed cost per row, so the graph grows linearly with n.
2. The walk starts at a seeded random chunk and steps to the nearest *unvisited*
   neighbour on the current chunk's list. When the whole list is visited, it continues at
   the nearest unvisited chunk found by a search, never at a random one, so the path only
   jumps as far as it has to. With the exact graph the search is an exact scan over a
   compacted copy of the unvisited vectors; with the inverted file it scans the 8 cells
   nearest to the current chunk that still hold unvisited ones.
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
  every step); beyond it the quadratic exact graph gives way to the inverted file.
* Inverted file: cells of 256 rows (6 Lloyd iterations on a sample of 40 rows per cell),
  48 cells probed for the graph, 8 for a search. With it forced on 20k vectors the path
  keeps 0.967 of the reference's mean consecutive similarity on random vectors (the hard
  case: true neighbours are barely closer than the rest) and 0.9998 on planted topics,
  against the 0.95 target; 16 probes give 0.90 at a third of the time. 100k vectors take
  about 15 s (random) and 21 s (planted topics), and doubling n about doubles the time.
  An HNSW index (hnswlib) was measured first: similar quality, but 50 s at 100k, time
  growing 2.5-2.8× per doubling, and a C++ build at install.
* ``near_identical=0.9``: word 5-gram Jaccard; copies of a passage with a few edited
  words score above it (one edited word in 120 leaves 0.92), different passages on one
  topic far below.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchsmith.words import words

DEFAULT_SIZE = 8
DEFAULT_NEIGHBOURS = 16
DEFAULT_NEAR_IDENTICAL = 0.9
DEFAULT_EXACT_LIMIT = 20_000
BLOCK_ELEMENTS = 1 << 24  # similarities per block of the exact graph: 64 MB float32 (+ 128 MB argpartition)
IVF_CELL_SIZE = 256  # mean rows per k-means cell of the inverted file
IVF_GRAPH_PROBES = 48  # cells whose members are the candidate neighbours of a cell's rows
IVF_SEARCH_PROBES = 8  # cells holding unvisited rows that a search scans
KMEANS_ITERATIONS = 6
KMEANS_SAMPLE_PER_CELL = 40
SHINGLE_WORDS = 5
TEXT_WINDOW = 4096  # path rows whose texts are read at once by the near-identical check
IVF_BLOCK_ROWS = 16_384  # rows of the inverted file's graph per block (a Ray task with --ray)
TextsOf = Callable[[Sequence[int]], Sequence[str]]  # the texts of these rows, in their order
# map_blocks(function, shared, blocks) = [function(shared, block) for block in blocks], in order, here
# (map_here) or elsewhere: a Ray-backed map runs each block as a task on a cluster.
BlockMap = Callable[[Callable[[Any, Any], Any], Any, Sequence[Any]], list[Any]]


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
    matrix: np.ndarray = np.ascontiguousarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise ValueError(f"expected a non-empty (n, d) matrix of embeddings, got shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1)
    if not np.isfinite(norms).all():
        raise ValueError("embeddings contain NaN or infinite values")
    if np.abs(norms - 1).max() > 1e-3:  # float32 rounding of normalized embeddings is ~1e-7
        matrix = matrix / np.where(norms == 0, 1, norms)[:, None]
    return matrix


def knn_graph(
    vectors: np.ndarray,
    k: int = DEFAULT_NEIGHBOURS,
    *,
    exact_limit: int = DEFAULT_EXACT_LIMIT,
    seed: int = 0,
    map_blocks: BlockMap | None = None,
) -> np.ndarray:
    """(n, k) indices of each row's k most similar other rows, nearest first.

    ``k`` is clamped to n - 1. Exact up to ``exact_limit`` rows, an inverted file above. The
    blocks of rows go through ``map_blocks`` (:data:`BlockMap`): the graph is the same wherever they run.
    """
    matrix = as_unit_rows(vectors)
    k = _clamp_neighbours(k, len(matrix))
    if len(matrix) <= exact_limit or k == 0:
        return exact_knn(matrix, k, map_blocks)
    return ivf_knn(matrix, build_inverted_file(matrix, seed=seed), k, map_blocks=map_blocks)


def _clamp_neighbours(k: int, n: int) -> int:
    if k < 1:
        raise ValueError(f"neighbours must be at least 1, got {k}")
    return min(k, n - 1)


def exact_knn(matrix: np.ndarray, k: int, map_blocks: BlockMap | None = None) -> np.ndarray:
    """Blocked brute force: ties are ordered by index, so the result is deterministic. The blocks
    of rows go through ``map_blocks`` (default: one after another here)."""
    n = len(matrix)
    if k == 0:
        return np.empty((n, k), dtype=np.int64)
    rows = max(1, min(n, BLOCK_ELEMENTS // n))
    blocks = [("exact", start, min(n, start + rows)) for start in range(0, n, rows)]
    return np.concatenate((map_blocks or map_here)(neighbours_of_block, (matrix, k, None, None), blocks))


def map_here(function: Callable[[Any, Any], Any], shared: Any, blocks: Sequence[Any]) -> list[Any]:
    """``function(shared, block)`` for each block in turn, in this process: the default :data:`BlockMap`."""
    return [function(shared, block) for block in blocks]


def neighbours_of_block(shared: tuple[np.ndarray, int, Any, Any], block: tuple[Any, ...]) -> np.ndarray:
    """One block's part of the k-NN graph: the neighbour lists of rows ``start:stop`` (``("exact",
    start, stop)``) or of the rows of cells ``first:last`` of the inverted file (``("cells", first,
    last)``, rows in cell order). ``shared`` is ``(matrix, k, cell members, probed cells)``, read,
    never written (a Ray node maps it from the object store)."""
    matrix, k, members, probed = shared
    if block[0] == "exact":
        return _exact_rows(matrix, k, block[1], block[2])
    return np.concatenate([_cell_rows(matrix, k, members, probed, cell) for cell in range(block[1], block[2])])


def _exact_rows(matrix: np.ndarray, k: int, start: int, stop: int) -> np.ndarray:
    n = len(matrix)
    similarities = matrix[start:stop] @ matrix.T
    similarities[np.arange(stop - start), np.arange(start, stop)] = -np.inf  # never your own neighbour
    top = np.argpartition(similarities, n - k, axis=1)[:, n - k :]
    top_similarities = np.take_along_axis(similarities, top, axis=1)
    order = np.lexsort((top, -top_similarities))  # by similarity, then index
    return np.take_along_axis(top, order, axis=1)


@dataclass
class InvertedFile:
    """Spherical k-means cells over the rows: ``centroids`` (C, d) and each cell's rows."""

    centroids: np.ndarray
    members: list[np.ndarray]


def build_inverted_file(matrix: np.ndarray, *, cell_size: int = IVF_CELL_SIZE, seed: int = 0) -> InvertedFile:
    """About ``n / cell_size`` cells from a few Lloyd iterations on a sample (the cells only
    route candidates, they need not be optimal), then every row in its nearest cell."""
    n = len(matrix)
    cells = max(1, n // cell_size)
    rng = np.random.default_rng(seed)
    centroids = matrix[rng.choice(n, cells, replace=False)].copy()
    sample = matrix[rng.choice(n, min(n, KMEANS_SAMPLE_PER_CELL * cells), replace=False)]
    for _ in range(KMEANS_ITERATIONS):
        nearest = np.argmax(sample @ centroids.T, axis=1)
        sums = np.zeros_like(centroids)
        np.add.at(sums, nearest, sample)
        norms = np.linalg.norm(sums, axis=1)
        filled = norms > 0
        centroids[filled] = sums[filled] / norms[filled, None]  # an empty cell keeps its seed row
    assignment = np.concatenate(
        [np.argmax(matrix[start : start + 8192] @ centroids.T, axis=1) for start in range(0, n, 8192)]
    )
    order = np.argsort(assignment, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(assignment, minlength=cells))])
    return InvertedFile(centroids, [order[bounds[c] : bounds[c + 1]] for c in range(cells)])


def ivf_knn(
    matrix: np.ndarray,
    ivf: InvertedFile,
    k: int,
    probes: int = IVF_GRAPH_PROBES,
    map_blocks: BlockMap | None = None,
) -> np.ndarray:
    """The k nearest other rows of every row among the members of the ``probes`` cells
    nearest to its own cell: exact within those candidates, so the cost per row is fixed
    and the graph grows linearly with n. Runs of cells of about ``IVF_BLOCK_ROWS`` rows go
    through ``map_blocks`` (default: one after another here)."""
    result = np.empty((len(matrix), k), dtype=np.int64)
    probed = np.argsort(-(ivf.centroids @ ivf.centroids.T), axis=1, kind="stable")[:, :probes]
    bounds = np.cumsum([0] + [len(rows) for rows in ivf.members])
    blocks, first = [], 0
    for cell in range(len(ivf.members)):
        if bounds[cell + 1] - bounds[first] >= IVF_BLOCK_ROWS or cell == len(ivf.members) - 1:
            blocks.append(("cells", first, cell + 1))
            first = cell + 1
    shared = (matrix, k, ivf.members, probed)
    for (_, first, last), neighbours in zip(
        blocks, (map_blocks or map_here)(neighbours_of_block, shared, blocks), strict=True
    ):
        result[np.concatenate(ivf.members[first:last])] = neighbours
    return result


def _cell_rows(matrix: np.ndarray, k: int, members: list[np.ndarray], probed: np.ndarray, cell: int) -> np.ndarray:
    """The neighbour lists of one cell's rows, nearest first."""
    rows = members[cell]
    if not len(rows):
        return np.empty((0, k), dtype=np.int64)
    candidates = np.concatenate([members[other] for other in probed[cell]])
    if len(candidates) <= k:  # too few around (tiny inputs): every row is a candidate
        candidates = np.arange(len(matrix))
    similarities = matrix[rows] @ matrix[candidates].T
    similarities[rows[:, None] == candidates[None, :]] = -np.inf  # never your own neighbour
    top = np.argpartition(-similarities, k - 1, axis=1)[:, :k]
    top_similarities = np.take_along_axis(similarities, top, axis=1)
    order = np.argsort(-top_similarities, axis=1, kind="stable")
    return candidates[np.take_along_axis(top, order, axis=1)]


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


class _IvfSearch:
    """Nearest unvisited row among the ``probes`` cells nearest to the current row that
    still hold unvisited rows. Each cell's list is compacted as it empties, and so is the
    list of cells that still hold rows (when half of it is empty), so a search ranks only
    live cells, and sorts only the best few of them: a million rows make ~3,900 cells,
    and a full sort of them at each of ~170,000 searches was the walk's largest cost."""

    def __init__(self, matrix: np.ndarray, ivf: InvertedFile, visited: np.ndarray, probes: int):
        self.matrix, self.visited, self.probes = matrix, visited, probes
        self.members = list(ivf.members)
        self.alive = np.array([len(rows) for rows in ivf.members])
        self.live = np.flatnonzero(self.alive)  # cells that held unvisited rows when last compacted
        self.live_centroids = ivf.centroids[self.live]

    def nearest(self, path: list[int]) -> int:
        if 2 * np.count_nonzero(self.alive[self.live]) < len(self.live):
            keep = self.alive[self.live] > 0
            self.live, self.live_centroids = self.live[keep], self.live_centroids[keep]
        current = self.matrix[path[-1]]
        best, best_similarity, scanned = -1, -np.inf, 0
        for cell in self._cells_by_similarity(self.live_centroids @ current):
            if not self.alive[cell]:
                continue
            rows = self.members[cell]
            rows = self.members[cell] = rows[~self.visited[rows]]
            self.alive[cell] = len(rows)
            if not len(rows):
                continue
            similarities = self.matrix[rows] @ current
            position = int(np.argmax(similarities))
            if similarities[position] > best_similarity:
                best, best_similarity = int(rows[position]), float(similarities[position])
            scanned += 1
            if scanned == self.probes:
                break
        return best

    def _cells_by_similarity(self, similarities: np.ndarray) -> Iterator[int]:
        """Live cells, most similar first (ties: lower cell first): the best ``4 × probes`` by a
        partial sort, the rest only if a search needs more (some of the best may be empty)."""
        head = min(len(similarities), 4 * self.probes)
        if head < len(similarities):
            best = np.argpartition(-similarities, head - 1)[:head]
            best = best[np.lexsort((best, -similarities[best]))]
            yield from self.live[best].tolist()
            rest = np.ones(len(similarities), dtype=np.bool_)
            rest[best] = False
            positions = np.flatnonzero(rest)
            yield from self.live[positions[np.argsort(-similarities[positions], kind="stable")]].tolist()
        else:
            yield from self.live[np.argsort(-similarities, kind="stable")].tolist()


def greedy_path(
    vectors: np.ndarray,
    neighbours: np.ndarray,
    *,
    seed: int = 0,
    ivf: InvertedFile | None = None,
    search_probes: int = IVF_SEARCH_PROBES,
) -> tuple[list[int], int]:
    """The greedy walk over a k-NN graph: (visiting order of all rows, number of searches).

    ``neighbours`` is the (n, k) output of :func:`knn_graph`. Pass the inverted file the
    graph came from to search its cells for the nearest unvisited row when a list is
    exhausted (``search_probes`` cells with unvisited rows); without one the search is an
    exact scan.
    """
    matrix = as_unit_rows(vectors)
    n = len(matrix)
    if neighbours.ndim != 2 or len(neighbours) != n or (n > 1 and neighbours.shape[1] == 0):
        raise ValueError(f"neighbours must be an ({n}, k) index matrix with k >= 1, got {neighbours.shape}")
    visited = bytearray(n)  # bytearray: fast to index from Python; viewed as numpy by the search
    visited_view = np.frombuffer(visited, dtype=np.bool_)
    search = _ExactSearch(matrix, visited_view) if ivf is None else _IvfSearch(matrix, ivf, visited_view, search_probes)
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
    tokens = words(text)
    if len(tokens) <= size:
        return {tuple(tokens)}
    return {tuple(tokens[i : i + size]) for i in range(len(tokens) - size + 1)}


def shingle_jaccard(a: set[tuple[str, ...]], b: set[tuple[str, ...]]) -> float:
    intersection = len(a & b)
    return intersection / (len(a) + len(b) - intersection)


def drop_near_identical(
    path: Sequence[int], texts: Sequence[str] | TextsOf, threshold: float = DEFAULT_NEAR_IDENTICAL
) -> tuple[list[int], list[int]]:
    """(kept, dropped): a chunk is dropped when its word 5-gram Jaccard with the last kept
    chunk before it on the path is at least ``threshold``.

    Comparing with the last *kept* chunk means a run of copies collapses to its first.
    ``texts`` is every row's text, or ``texts_of(rows)`` giving the texts of rows asked for
    (windows of the path in turn): a million texts need not be held.
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"near-identical threshold must be in (0, 1], got {threshold}")
    texts_of = texts if callable(texts) else lambda rows: [texts[row] for row in rows]
    kept: list[int] = []
    dropped: list[int] = []
    previous: set[tuple[str, ...]] | None = None
    for start in range(0, len(path), TEXT_WINDOW):
        window = path[start : start + TEXT_WINDOW]
        for row, text in zip(window, texts_of(window), strict=True):
            shingles = word_shingles(text)
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


def greedy_traversal_clusters(
    vectors: np.ndarray,
    *,
    size: int = DEFAULT_SIZE,
    neighbours: int = DEFAULT_NEIGHBOURS,
    seed: int = 0,
    texts: Sequence[str] | TextsOf | None = None,
    near_identical: float = DEFAULT_NEAR_IDENTICAL,
    exact_limit: int = DEFAULT_EXACT_LIMIT,
    map_blocks: BlockMap | None = None,
) -> Clustering:
    """Greedy traversal clustering of the rows of ``vectors`` (see the module docstring).

    ``texts[i]`` is the text of row i (or ``texts(rows)`` the texts of those rows: see
    :func:`drop_near_identical`); without texts nothing is dropped. The result depends
    only on the inputs and the seed, not on where ``map_blocks`` builds the graph's blocks.
    """
    if size < 1:
        raise ValueError(f"cluster size must be at least 1, got {size}")
    matrix = as_unit_rows(vectors)
    n = len(matrix)
    if texts is not None and not callable(texts) and len(texts) != n:
        raise ValueError(f"got {len(texts)} texts for {n} embeddings")
    k = _clamp_neighbours(neighbours, n)
    started = time.perf_counter()
    ivf = None
    if n <= exact_limit or n == 1:
        graph = exact_knn(matrix, k, map_blocks)
    else:
        ivf = build_inverted_file(matrix, seed=seed)
        graph = ivf_knn(matrix, ivf, k, map_blocks=map_blocks)
    walk_started = time.perf_counter()
    path, searches = greedy_path(matrix, graph, seed=seed, ivf=ivf)
    seconds = {"graph": walk_started - started, "walk": time.perf_counter() - walk_started}
    dropped: list[int] = []
    if texts is not None:
        path, dropped = drop_near_identical(path, texts, near_identical)
    return Clustering(path=path, clusters=cluster_path(path, size), dropped=dropped, searches=searches, seconds=seconds)


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
