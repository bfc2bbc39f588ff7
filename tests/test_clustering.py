import random
from itertools import pairwise

import numpy as np
import pytest

from benchsmith.tools.corpus.clustering import (
    build_inverted_file,
    cluster_path,
    drop_near_identical,
    greedy_path,
    greedy_traversal_clusters,
    ivf_knn,
    knn_graph,
    mean_consecutive_similarity,
    naive_greedy_path,
)

TOPICS, MEMBERS, DIMENSION = 12, 40, 64


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


def random_vectors(n: int, d: int = 16, seed: int = 0) -> np.ndarray:
    return unit_rows(np.random.default_rng(seed).standard_normal((n, d)))


@pytest.fixture(scope="module")
def planted() -> tuple[np.ndarray, np.ndarray]:
    """12 topic centroids in 64-d, 40 noisy members each (member-centroid cosine ≈ 0.9)."""
    rng = np.random.default_rng(3)
    centroids = unit_rows(rng.standard_normal((TOPICS, DIMENSION)))
    topics = np.repeat(np.arange(TOPICS), MEMBERS)
    noise = rng.standard_normal((len(topics), DIMENSION)) * 0.5 / np.sqrt(DIMENSION)
    return unit_rows(centroids[topics] + noise), topics


def test_every_chunk_is_in_exactly_one_cluster_of_full_size_but_the_last():
    for n, size in [(1, 8), (7, 8), (8, 8), (50, 8), (61, 5), (30, 1)]:
        result = greedy_traversal_clusters(random_vectors(n), size=size)
        members = [row for cluster in result.clusters for row in cluster]
        assert sorted(members) == list(range(n))
        assert all(len(cluster) == size for cluster in result.clusters[:-1])
        assert 1 <= len(result.clusters[-1]) <= size
        assert len(result.clusters) == -(-n // size)
        assert members == result.path and result.dropped == []


def test_path_stays_within_planted_topics(planted):
    vectors, topics = planted
    path = greedy_traversal_clusters(vectors).path
    ours = mean_consecutive_similarity(vectors, path)
    shuffled = mean_consecutive_similarity(vectors, np.random.default_rng(0).permutation(len(vectors)).tolist())
    assert ours > shuffled + 0.3, (ours, shuffled)
    same_topic = np.mean(topics[path[:-1]] == topics[path[1:]])
    assert same_topic >= 0.95, same_topic  # the path leaves a topic about once per topic


def test_same_seed_same_clusters_other_seed_other_start(planted):
    vectors, _ = planted
    first, again = greedy_traversal_clusters(vectors, seed=5), greedy_traversal_clusters(vectors, seed=5)
    assert first.clusters == again.clusters and first.searches == again.searches
    other = greedy_traversal_clusters(vectors, seed=6)
    assert other.path[0] != first.path[0]


def test_exhausted_neighbour_list_continues_at_the_nearest_unvisited_chunk():
    vectors = random_vectors(150, d=8, seed=1)
    neighbours = knn_graph(vectors, 3)
    path, searches = greedy_path(vectors, neighbours, seed=2)
    assert sorted(path) == list(range(150))
    visited = np.zeros(150, dtype=bool)
    visited[path[0]] = True
    jumps = 0
    for here, after in pairwise(path):
        listed = [row for row in neighbours[here] if not visited[row]]
        if listed:
            assert after == listed[0]
        else:  # brute force: the most similar unvisited chunk, not a random one
            similarities = np.where(visited, -np.inf, vectors @ vectors[here])
            assert after == int(np.argmax(similarities))
            jumps += 1
        visited[after] = True
    assert searches == jumps > 0


def test_greedy_path_equals_naive_reference_with_full_neighbour_lists():
    vectors = random_vectors(60, d=8, seed=4)
    full = knn_graph(vectors, 1000)  # clamped to n - 1: every other chunk is listed
    assert full.shape == (60, 59)
    for seed in range(3):
        path, searches = greedy_path(vectors, full, seed=seed)
        assert path == naive_greedy_path(vectors, seed=seed) and searches == 0
        # With short lists the exact searches fill the gaps: still the same walk.
        short_path, short_searches = greedy_path(vectors, knn_graph(vectors, 2), seed=seed)
        assert short_path == path and short_searches > 0


def test_exact_graph_lists_the_most_similar_other_rows_nearest_first():
    vectors = random_vectors(40, seed=7)
    similarities = vectors @ vectors.T
    np.fill_diagonal(similarities, -np.inf)
    expected = np.argsort(-similarities, axis=1, kind="stable")[:, :5]
    assert np.array_equal(knn_graph(vectors, 5), expected)


def test_approximate_path_is_complete_and_as_coherent_as_the_exact_path(planted):
    vectors, _ = planted
    exact = greedy_traversal_clusters(vectors)
    approximate = greedy_traversal_clusters(vectors, exact_limit=100)  # forces the inverted file
    assert sorted(approximate.path) == list(range(len(vectors)))
    exact_similarity = mean_consecutive_similarity(vectors, exact.path)
    assert mean_consecutive_similarity(vectors, approximate.path) >= 0.97 * exact_similarity


def test_inverted_file_graph_and_searches_reach_every_chunk(planted):
    vectors, _ = planted
    ivf = build_inverted_file(vectors, cell_size=32)
    assert sorted(np.concatenate(ivf.members).tolist()) == list(range(len(vectors)))  # each row in one cell
    neighbours = ivf_knn(vectors, ivf, 4, probes=3)
    assert neighbours.shape == (len(vectors), 4) and not (neighbours == np.arange(len(vectors))[:, None]).any()
    path, searches = greedy_path(vectors, neighbours, ivf=ivf)
    assert sorted(path) == list(range(len(vectors))) and searches > 0
    exact_path, _ = greedy_path(vectors, knn_graph(vectors, 4))
    assert mean_consecutive_similarity(vectors, path) >= 0.97 * mean_consecutive_similarity(vectors, exact_path)


def test_inverted_file_probing_every_cell_is_exact():
    """With all cells probed, graph and searches see every row: the exact walk, step for step."""
    vectors = random_vectors(300, d=8, seed=5)
    ivf = build_inverted_file(vectors, cell_size=30)
    cells = len(ivf.members)
    neighbours = ivf_knn(vectors, ivf, 3, probes=cells)
    assert np.array_equal(neighbours, knn_graph(vectors, 3))
    exact = greedy_path(vectors, neighbours, seed=2)
    assert exact[1] > 0  # the walk had to search
    assert greedy_path(vectors, neighbours, seed=2, ivf=ivf, search_probes=cells) == exact


def words(rng: random.Random, count: int = 120) -> str:
    return " ".join(f"w{rng.randrange(3000)}" for _ in range(count))


def test_near_identical_chunk_after_its_original_is_dropped(planted):
    vectors, _ = planted
    rng = random.Random(0)
    texts = [words(rng) for _ in range(len(vectors))]
    # Plant a near-copy of chunk 0 (one word edited) with an almost identical embedding.
    copy = texts[0].split()
    copy[60] = "edited"
    texts.append(" ".join(copy))
    vectors = unit_rows(np.vstack([vectors, vectors[0] + 1e-4]))
    result = greedy_traversal_clusters(vectors, texts=texts)
    assert len(result.dropped) == 1 and result.dropped[0] in (0, len(texts) - 1)
    assert sorted(result.path) == sorted(set(range(len(texts))) - set(result.dropped))
    assert sorted(row for cluster in result.clusters for row in cluster) == sorted(result.path)
    without_texts = greedy_traversal_clusters(vectors)  # the copy comes right after its original
    assert without_texts.dropped == [] and len(without_texts.path) == len(texts)
    assert abs(without_texts.path.index(0) - without_texts.path.index(len(texts) - 1)) == 1


def test_drop_near_identical_compares_with_the_last_kept_chunk():
    rng = random.Random(1)
    original, other = words(rng), words(rng)
    edited = original.replace(original.split()[50], "edited", 1)
    assert drop_near_identical([0, 1, 2, 3], [original, edited, original, other]) == ([0, 3], [1, 2])
    assert drop_near_identical([0, 1], [original, other]) == ([0, 1], [])
    assert drop_near_identical([0, 1], ["short text", "short text"]) == ([0], [1])


def test_cluster_path_and_similarity_helpers():
    assert cluster_path([4, 2, 0, 1, 3], 2) == [[4, 2], [0, 1], [3]]
    assert cluster_path([], 3) == []
    vectors = np.eye(3, dtype=np.float32)
    assert mean_consecutive_similarity(vectors, [0, 0, 1]) == pytest.approx(0.5)
    assert mean_consecutive_similarity(vectors, [2]) == 0.0


def test_rows_that_are_not_unit_length_are_normalized():
    vectors = random_vectors(30, seed=2)
    assert greedy_traversal_clusters(vectors * 3.0).path == greedy_traversal_clusters(vectors).path


def test_invalid_inputs_are_rejected_with_clear_errors():
    vectors = random_vectors(10)
    with pytest.raises(ValueError, match="non-empty"):
        greedy_traversal_clusters(np.zeros((0, 8), dtype=np.float32))
    with pytest.raises(ValueError, match="non-empty"):
        greedy_traversal_clusters(np.ones(8, dtype=np.float32))
    with pytest.raises(ValueError, match="cluster size"):
        greedy_traversal_clusters(vectors, size=0)
    with pytest.raises(ValueError, match="neighbours"):
        greedy_traversal_clusters(vectors, neighbours=0)
    with pytest.raises(ValueError, match="texts"):
        greedy_traversal_clusters(vectors, texts=["only one"])
    with pytest.raises(ValueError, match="NaN"):
        greedy_traversal_clusters(np.full((3, 4), np.nan, dtype=np.float32))
    with pytest.raises(ValueError, match="threshold"):
        drop_near_identical([0], ["text"], threshold=0)


def test_more_neighbours_than_chunks_and_a_single_chunk():
    few = greedy_traversal_clusters(random_vectors(5), neighbours=16, size=2)
    assert sorted(few.path) == list(range(5)) and [len(c) for c in few.clusters] == [2, 2, 1]
    single = greedy_traversal_clusters(random_vectors(1))
    assert single.path == [0] and single.clusters == [[0]] and single.searches == 0
