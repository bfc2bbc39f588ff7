"""The work-item queue in a real PostgreSQL: atomic claims, leases that run out, results only
from the claim's holder."""

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from benchsmith.stores.persistence.jsonl import RecordLog
from benchsmith.stores.persistence.work_items import LocalItems, PostgresItems


def items(count: int) -> list[tuple[str, dict]]:
    return [(f"c{number:03d}", {"cluster_id": number}) for number in range(count)]


def test_concurrent_workers_never_claim_the_same_item(database):
    PostgresItems(database, "run", "setup").add(items(60))

    def drain(worker: str) -> list[str]:
        queue, taken = PostgresItems(database, "run", worker), []
        while (claimed := queue.claim_next()) is not None:
            item_id, payload = claimed
            assert payload["cluster_id"] == int(item_id[1:])
            taken.append(item_id)
            assert queue.complete(item_id, {"conversation_id": item_id, "by": worker})
        return taken

    with ThreadPoolExecutor(max_workers=4) as pool:
        taken = list(pool.map(drain, ["w1", "w2", "w3", "w4"]))
    claimed = [item_id for worker in taken for item_id in worker]
    assert sorted(claimed) == [item_id for item_id, _ in items(60)]  # each exactly once
    assert sum(1 for worker in taken if worker) >= 2  # the work was shared
    queue = PostgresItems(database, "run", "reader")
    assert queue.counts().done == 60 and queue.open_ids() == []
    assert [result["conversation_id"] for result in queue.results()] == [item_id for item_id, _ in items(60)]


def test_a_lost_lease_passes_the_item_on_and_the_late_result_is_refused(database):
    dead = PostgresItems(database, "run", "dead", lease_s=0.2)
    dead.add(items(2))
    assert dead.claim_next()[0] == "c000"
    alive = PostgresItems(database, "run", "alive", lease_s=30)
    assert alive.claim_next()[0] == "c001"  # c000 is still leased
    assert alive.claim_next() is None
    time.sleep(0.4)
    assert alive.claim("c000")  # the lease ran out
    assert alive.complete("c000", {"conversation_id": "c000", "by": "alive"})
    assert not dead.complete("c000", {"conversation_id": "c000", "by": "dead"})  # done once, by the holder
    assert [result["by"] for result in alive.results()] == ["alive"]


def test_adding_the_plan_twice_keeps_progress_and_a_failed_item_reopens(database):
    queue = PostgresItems(database, "run", "w")
    queue.add(items(3))
    assert queue.claim("c001") and queue.complete("c001", {"conversation_id": "c001"})
    assert queue.claim("c002")
    queue.fail("c002", "RuntimeError: model down")
    queue.add(items(3))
    counts = queue.counts()
    assert (counts.total, counts.done, counts.failed, counts.pending) == (3, 1, 1, 1)
    assert queue.open_ids() == ["c000", "c002"]
    assert not PostgresItems(database, "other-run", "w").open_ids()  # runs do not see each other's items


def test_local_items_follow_the_record_log(tmp_path):
    log = RecordLog(tmp_path / "dialogues.jsonl", "conversation_id")
    local = LocalItems(log, ["c000", "c001"])
    assert local.claim("c000") and local.complete("c000", {"conversation_id": "c000"})
    assert not local.complete("c000", {"conversation_id": "c000"})  # appended once
    assert local.open_ids() == ["c001"] and local.counts().done == 1
    assert not local.claim("c000")


@pytest.mark.parametrize("bad", ["sqlite:///x.db", "mysql://host/db"])
def test_only_postgresql_urls_are_databases(bad):
    from benchsmith.stores.errors import InputError
    from benchsmith.stores.persistence.postgres import database_url

    with pytest.raises(InputError, match="postgresql://"):
        database_url(bad)
