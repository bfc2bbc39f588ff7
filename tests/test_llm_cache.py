"""The SQLite response cache opened by several threads at once (select's judge workers each
open the verdict store when their batch starts)."""

import threading

from benchsmith.stores.persistence.llm_cache import LLMCache


def test_threads_opening_a_new_cache_at_once_all_open_it_and_write(tmp_path):
    # Before the setup was serialized, 7 of 8 runs of this test failed ("database is locked" in
    # one of the 60 trials or more).
    for trial in range(60):
        path = tmp_path / f"cache-{trial}.sqlite"
        start, errors = threading.Barrier(4), []

        def open_and_write(worker: int, path=path, start=start, errors=errors) -> None:
            start.wait()
            try:
                cache = LLMCache(path)
                cache.put(f"key-{worker}", "model", f"response-{worker}")
                cache.close()
            except Exception as error:  # collected, asserted below
                errors.append(repr(error))

        threads = [threading.Thread(target=open_and_write, args=(worker,)) for worker in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == [], f"trial {trial}: {errors[0]}"
        cache = LLMCache(path)
        assert [cache.get(f"key-{worker}") for worker in range(4)] == [f"response-{worker}" for worker in range(4)]
        cache.close()
