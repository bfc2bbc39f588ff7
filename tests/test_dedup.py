import random

import pytest

from benchsmith.tools.corpus.dedup import _fingerprint, char_shingles, find_near_duplicates, jaccard

VOCABULARY = [f"w{i}" for i in range(3000)]


def random_text(rng: random.Random, words: int = 120) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(words))


def perturb(rng: random.Random, text: str, edits: int) -> str:
    """A near-duplicate: a few words replaced (true Jaccard of 5-grams stays high)."""
    words = text.split()
    for _ in range(edits):
        words[rng.randrange(len(words))] = rng.choice(VOCABULARY)
    return " ".join(words)


def test_planted_near_duplicates_are_removed_and_distinct_texts_kept():
    rng = random.Random(7)
    originals = [random_text(rng) for _ in range(200)]
    copies = [perturb(rng, originals[i], edits=2) for i in range(0, 200, 4)]  # 50 planted
    texts = originals + copies
    ids = [f"o{i}" for i in range(len(originals))] + [f"c{i}" for i in range(0, 200, 4)]
    matches = find_near_duplicates(ids, texts)
    removed = {m.removed_id: m.kept_id for m in matches}
    assert removed == {f"c{i}": f"o{i}" for i in range(0, 200, 4)}
    assert all(m.jaccard >= 0.8 for m in matches)


def test_first_occurrence_is_kept_and_exact_repeats_count():
    rng = random.Random(1)
    text = random_text(rng)
    matches = find_near_duplicates(["a", "b", "a"], [text, perturb(rng, text, 1), text])
    assert [(m.removed_id, m.kept_id) for m in matches] == [("b", "a"), ("a", "a")]


def test_texts_below_the_threshold_are_kept():
    rng = random.Random(3)
    base = random_text(rng, 100)
    far = perturb(rng, base, 40)  # shares well under 80% of its 5-grams
    similarity = jaccard(_fingerprint(char_shingles(base)), _fingerprint(char_shingles(far)))
    assert similarity < 0.8
    assert find_near_duplicates(["x", "y"], [base, far]) == []
    assert [m.removed_id for m in find_near_duplicates(["x", "y"], [base, far], threshold=similarity - 0.05)] == ["y"]


def test_shingles_ignore_case_and_whitespace():
    assert char_shingles("Hello   World") == char_shingles("hello world")
    assert char_shingles("abc") == {b"abc"}


def test_threshold_is_validated():
    with pytest.raises(ValueError, match="threshold"):
        find_near_duplicates(["a"], ["text"], threshold=1.5)
