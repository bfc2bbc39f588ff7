"""Writes done in batches by a background thread (stores/persistence/write_behind.py): the response cache's
commits and the usage ledger's appends leave the threads of model calls, and nothing submitted is
lost or reordered."""

from __future__ import annotations

import json
import sqlite3
import threading

import pytest

from benchsmith.stores.persistence import write_behind
from benchsmith.stores.persistence.llm_cache import LLMCache
from benchsmith.stores.persistence.usage import UsageLedger
from benchsmith.stores.persistence.write_behind import WriteBehind, drain_all


def submit_from_threads(submit, threads: int, each: int) -> None:
    start = threading.Barrier(threads)

    def work(worker: int) -> None:
        start.wait()
        for number in range(each):
            submit((worker, number))

    workers = [threading.Thread(target=work, args=(worker,), name=f"submitter-{worker}") for worker in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def test_every_item_is_written_once_in_each_threads_order_in_fewer_writes_than_items():
    batches: list[list[tuple[int, int]]] = []
    writer = WriteBehind(batches.append, name="test")
    submit_from_threads(writer.submit, threads=8, each=500)
    writer.drain()
    written = [item for batch in batches for item in batch]
    assert sorted(written) == [(worker, number) for worker in range(8) for number in range(500)]
    for worker in range(8):
        assert [number for who, number in written if who == worker] == list(range(500))
    assert len(batches) < len(written)


def test_drain_returns_only_once_what_was_submitted_before_it_is_written():
    release, batches = threading.Event(), []

    def slow_write(batch: list[int]) -> None:
        release.wait()
        batches.append(batch)

    writer = WriteBehind(slow_write, name="test")
    writer.submit(1)
    drained = threading.Thread(target=writer.drain)
    drained.start()
    drained.join(0.2)
    assert drained.is_alive() and batches == []  # the write has not finished: drain still waits
    release.set()
    drained.join()
    assert batches == [[1]]


def test_a_failed_write_is_raised_once_at_the_next_drain_and_later_writes_go_on():
    written: list[int] = []

    def write(batch: list[int]) -> None:
        if 0 in batch:
            raise OSError("disk full")
        written.extend(batch)

    writer = WriteBehind(write, name="test")
    writer.submit(0)
    with pytest.raises(OSError, match="disk full"):
        writer.drain()
    writer.submit(1)
    writer.drain()
    assert written == [1]


def test_an_idle_writer_lets_its_thread_end_and_the_next_submit_starts_one(monkeypatch):
    monkeypatch.setattr(write_behind, "IDLE_EXIT_S", 0.05)
    written: list[int] = []
    writer = WriteBehind(written.extend, name="test")
    writer.submit(1)
    writer.drain()
    first = writer._thread
    first.join(5)
    assert not first.is_alive() and writer._thread is None
    writer.submit(2)
    writer.drain()
    assert written == [1, 2]


def test_drain_all_writes_every_writer_of_the_process():
    first, second = [], []
    writers = [WriteBehind(first.extend, name="a"), WriteBehind(second.extend, name="b")]
    writers[0].submit(1)
    writers[1].submit(2)
    drain_all()
    assert (first, second) == ([1], [2])


def written_by(monkeypatch, target, attribute: str) -> list[str]:
    """The names of the threads that run ``target.attribute``."""
    names, original = [], getattr(target, attribute)

    def recording(*args, **kwargs):
        names.append(threading.current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setattr(target, attribute, recording)
    return names


def test_cache_puts_are_answered_at_once_and_never_committed_by_the_putting_threads(tmp_path, monkeypatch):
    committers = written_by(monkeypatch, LLMCache, "_commit")
    cache = LLMCache(tmp_path / "cache.sqlite")
    submit_from_threads(
        lambda item: cache.put(f"key-{item[0]}-{item[1]}", "model", f"reply {item}"), threads=8, each=50
    )
    assert cache.get("key-3-7") == "reply (3, 7)"  # committed or not, this process sees it
    cache.flush()  # what the writer has not taken yet is committed here, in the flushing thread
    assert committers and not any(name.startswith("submitter-") for name in committers)
    with sqlite3.connect(tmp_path / "cache.sqlite") as other:  # another connection, as another process reads
        assert other.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 400
    assert len(cache) == 400 and cache._pending == {}
    cache.put("last", "model", "reply")
    cache.close()  # commits what is left
    reopened = LLMCache(tmp_path / "cache.sqlite")
    assert reopened.get("last") == "reply"
    reopened.close()


def test_ledger_lines_from_many_threads_are_whole_and_counted_once(tmp_path, monkeypatch):
    path = tmp_path / "run" / "usage.jsonl"  # its folder made at the first write
    from benchsmith.stores.persistence import usage

    appenders = written_by(monkeypatch, usage, "_append_lines")
    ledger = UsageLedger(path)
    submit_from_threads(
        lambda item: ledger.record(
            {
                "model": "m",
                "agent": str(item),
                "input_tokens": 1,
                "output_tokens": 2,
                "cost_usd": 0.0,
                "retries": 0,
                "cached": False,
            }
        ),
        threads=8,
        each=100,
    )
    totals = UsageLedger(path).totals()  # another ledger object of the path drains the same writer
    assert (totals["calls"], totals["input_tokens"], totals["output_tokens"]) == (800, 800, 1600)
    lines = path.read_text().splitlines()
    assert len({json.loads(line)["agent"] for line in lines}) == 800
    assert appenders and not any(name.startswith("submitter-") for name in appenders)
    assert len(appenders) < 800  # many lines per write


def test_ledger_sync_writes_the_lines_before_it_returns(tmp_path):
    ledger = UsageLedger(tmp_path / "usage.jsonl")
    ledger.record(
        {
            "model": "m",
            "agent": "a",
            "input_tokens": 1,
            "output_tokens": 1,
            "cost_usd": 0.0,
            "retries": 0,
            "cached": False,
        }
    )
    ledger.sync()
    assert len((tmp_path / "usage.jsonl").read_text().splitlines()) == 1
