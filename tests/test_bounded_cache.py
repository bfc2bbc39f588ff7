"""The bounded in-process cache (stores/bounded_cache.py) and the caches that use it."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from benchsmith.stores.bounded_cache import BoundedCache


def test_the_least_recently_used_entries_are_dropped_beyond_the_bound():
    cache: BoundedCache[str, int] = BoundedCache(3)
    cache.put_many({"a": 1, "b": 2, "c": 3})
    assert cache.get_many(["a"]) == {"a": 1}  # "a" used last: "b" is now the oldest
    cache.put_many({"d": 4})
    assert len(cache) == 3 and "b" not in cache and cache.get_many(["a", "b", "c", "d"]) == {"a": 1, "c": 3, "d": 4}
    with pytest.raises(ValueError):
        BoundedCache(0)


def test_get_or_fetch_fetches_only_what_is_missing_and_returns_all_of_a_request_larger_than_the_bound():
    cache: BoundedCache[int, str] = BoundedCache(2)
    asked: list[list[int]] = []

    def fetch(keys: list[int]) -> dict[int, str]:
        asked.append(keys)
        return {key: str(key) for key in keys if key != 99}  # 99 is unknown to the source

    assert cache.get_or_fetch([1, 2, 3, 99, 1], fetch) == {1: "1", 2: "2", 3: "3"}
    assert asked == [[1, 2, 3, 99]] and len(cache) == 2
    assert cache.get_or_fetch([3], fetch) == {3: "3"} and len(asked) == 1  # held: no fetch


def test_threads_sharing_a_cache_never_exceed_its_bound():
    cache: BoundedCache[int, int] = BoundedCache(50)
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda start: cache.get_or_fetch(range(start, start + 40), lambda keys: {k: k for k in keys}),
                      range(0, 2000, 10)))
    assert len(cache) == 50


def test_synthesis_keeps_a_bounded_number_of_passages_and_embeddings():
    from benchsmith.graphs import synthesize

    for cache in (synthesize._passage_cache, synthesize._embedding_cache):
        assert isinstance(cache, BoundedCache) and cache.maxsize == synthesize.PASSAGE_CACHE_SIZE
    bound = synthesize._passage_cache.maxsize
    synthesize._passage_cache.put_many({f"bound-test-{number}": {"text": ""} for number in range(bound + 1)})
    assert len(synthesize._passage_cache) == bound and "bound-test-0" not in synthesize._passage_cache
