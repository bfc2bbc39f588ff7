"""Collection statistics: document frequencies, chunks sharing words, the random-pair baseline,
and the soft-switch choice they feed."""

from __future__ import annotations

import random

import numpy as np
import pytest

from benchsmith.stores.persistence.corpus_stats import load_corpus_stats, save_corpus_stats
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.benchmark.dialogue_walk import Position, choose_soft_switch, soft_switch_candidates
from benchsmith.tools.corpus.corpus_statistics import compute_corpus_statistics, random_pair_similarity

TEXTS = [
    "The tide table lists high water.",
    "Tide gauges record water levels.",
    "Ferry crossings follow the tide.",
    "The harbour master assigns moorings.",
    "Moorings are booked by radio.",
    "Water, water everywhere.",
]


def statistics(posting_cap: int = 1000):
    vectors = np.random.default_rng(1).normal(size=(len(TEXTS), 8)).astype(np.float32)
    return compute_corpus_statistics(
        "docs", [f"id{i}" for i in range(len(TEXTS))], vectors, TEXTS, posting_cap=posting_cap
    )


def brute_force(words: set[str]) -> int:
    return sum(1 for text in TEXTS if words <= set(text.lower().replace(",", " ").replace(".", " ").split()))


def test_document_frequencies_and_shared_chunks_match_a_brute_force_count():
    stats = statistics()
    assert stats.chunks == 6
    assert stats.document_frequency("tide") == 3 and stats.document_frequency("Water") == 3
    assert stats.document_frequency("absent") == 0
    for words in ({"tide"}, {"tide", "water"}, {"the", "tide"}, {"moorings", "radio"}, {"water", "absent"}):
        assert stats.chunks_with_all(words) == brute_force(words), words


def test_capped_words_keep_the_count_an_upper_bound():
    stats = statistics(posting_cap=2)  # "tide", "water", "the" have no postings
    for words in ({"tide", "water"}, {"the", "tide"}, {"moorings", "radio"}, {"the", "harbour"}):
        assert stats.chunks_with_all(words) >= brute_force(words), words
    assert stats.chunks_with_all({"moorings", "radio"}) == 1  # posted words still count exactly


def test_statistics_survive_a_round_trip_through_the_workspace(tmp_path):
    workspace = Workspace.resolve(tmp_path / "ws")
    saved = statistics()
    save_corpus_stats(workspace, saved)
    loaded = load_corpus_stats(workspace, "docs")
    assert loaded.vocabulary == saved.vocabulary and loaded.similarity == saved.similarity
    assert loaded.chunks_with_all({"tide", "water"}) == saved.chunks_with_all({"tide", "water"})
    assert load_corpus_stats(workspace, "other") is None


def test_random_pair_similarity_is_the_mean_and_spread_of_sampled_cosines():
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(40, 16))
    baseline = random_pair_similarity(vectors, pairs=5000, seed=7)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    every_pair = (unit @ unit.T)[np.triu_indices(40, k=1)]
    assert baseline["mean"] == pytest.approx(every_pair.mean(), abs=0.01)
    assert baseline["std"] == pytest.approx(every_pair.std(), abs=0.01)
    assert random_pair_similarity(vectors, pairs=5000, seed=7) == baseline  # seeded
    assert random_pair_similarity(vectors[:1])["pairs"] == 0


def test_a_soft_switch_takes_the_paths_next_chunk_a_similar_neighbour_or_is_labelled_hard():
    clusters = [["a0", "a1", "a2"], ["b0", "b1"], ["c0"]]
    here = Position(0, 2)
    candidates = soft_switch_candidates(clusters, here, used={"a0"})
    assert candidates[0] == Position(1, 0)  # the path continues into the next cluster
    assert set(candidates[1:]) == {Position(0, 1), Position(1, 1)}  # the neighbourhood, minus used chunks
    similarity = {Position(1, 0): 0.2, Position(0, 1): 0.7, Position(1, 1): 0.9}
    assert choose_soft_switch(candidates, similarity.get, 0.5) == (Position(1, 1), "soft")
    assert choose_soft_switch(candidates, {**similarity, Position(1, 0): 0.6}.get, 0.5) == (Position(1, 0), "soft")
    assert choose_soft_switch(candidates, similarity.get, 0.95) == (Position(1, 0), "hard")


def test_soft_switch_choice_is_a_function_of_its_inputs():
    clusters = [[f"c{c}-{o}" for o in range(4)] for c in range(5)]
    rng = random.Random(0)
    similarity = {Position(c, o): rng.random() for c in range(5) for o in range(4)}
    first = choose_soft_switch(soft_switch_candidates(clusters, Position(2, 1), set()), similarity.get, 0.5)
    again = choose_soft_switch(soft_switch_candidates(clusters, Position(2, 1), set()), similarity.get, 0.5)
    assert first == again and first[0].cluster in (2, 3)
