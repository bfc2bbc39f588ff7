"""The bounded in-process cache (stores/persistence/bounded_cache.py) and the caches that use it."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from benchsmith.stores.persistence.bounded_cache import BoundedCache


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
        list(
            pool.map(
                lambda start: cache.get_or_fetch(range(start, start + 40), lambda keys: {k: k for k in keys}),
                range(0, 2000, 10),
            )
        )
    assert len(cache) == 50


def test_synthesis_keeps_a_bounded_number_of_passages_and_embeddings():
    from benchsmith.graphs.synthesis import lookups

    cache = lookups.chunk_cache
    assert isinstance(cache, BoundedCache) and cache.maxsize == lookups.PASSAGE_CACHE_SIZE
    bound = cache.maxsize
    cache.put_many({f"bound-test-{number}": ({"text": ""}, None) for number in range(bound + 1)})
    assert len(cache) == bound and "bound-test-0" not in cache


def test_setdefault_keeps_the_first_value_and_get_marks_it_recently_used():
    cache: BoundedCache[str, int] = BoundedCache(2)
    assert cache.setdefault("a", 1) == 1 and cache.setdefault("a", 2) == 1
    cache["b"] = 2
    assert cache.get("a") == 1  # "a" now the most recently used: "b" goes first
    cache["c"] = 3
    assert "b" not in cache and cache.get("a") == 1 and cache["c"] == 3 and cache.get("b", -1) == -1


def test_every_process_level_cache_of_the_runtime_is_bounded():
    """A long-lived process (Studio, a worker) runs job after job: what it keeps per run, workspace,
    collection or endpoint is bounded. The registries of objects a user registers by name, and
    the per-run work items released when a run ends, are not caches."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    registries = {("graphs/runtime/resources.py", name) for name in ("_models", "_embedders", "_scorers", "_items")}
    unbounded = []
    for path in sorted([*(root / "graphs").rglob("*.py"), root / "tools" / "cached_embedding.py"]):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id.startswith("_")
                and isinstance(node.value, ast.Dict)
            ):
                where = (str(path.relative_to(root)), node.target.id)
                if where not in registries:
                    unbounded.append(where)
    # These keep one corpus at a time (cleared when another comes): audit's word statistics, select's
    # corpora and chunk indexes.
    assert sorted(unbounded) == [
        ("graphs/runtime/corpus_indexes.py", "_statistics_cache"),
        ("graphs/select/retrieval.py", "_chunk_indexes"),
        ("graphs/select/retrieval.py", "_corpora"),
    ]
