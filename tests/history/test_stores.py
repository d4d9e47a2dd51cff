"""The history keeper's stores against their real backends: a dict, a SQLite file (threads and processes) and a
redis-server on loopback. Every store is bounded in entries and bytes (least recently used evicted first, never
an error), forgets entries past their time to live, and keeps exact totals under concurrent writers.

Times to live are checked without waiting: the memory and SQLite stores take a clock, and the Redis store's
expiry is read back (``PTTL``) and its clean-up driven by removing a value as Redis would.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading

import pytest

from support.history_stores import STORES, make_store, redis_server, redis_store  # noqa: F401 - the fixture
from toolwire.errors import InvalidOption
from toolwire.history import MemoryStore, SQLiteStore


@pytest.fixture(params=STORES)
def kind(request):
    return request.param


def test_get_put_delete_and_replace(kind, request, tmp_path):
    store = make_store(kind, request, tmp_path)
    assert store.get("a") is None
    store.put("a", b"one")
    store.put("b", b"\x00\xff" * 10)
    assert store.get("a") == b"one" and store.get("b") == b"\x00\xff" * 10
    store.put("a", b"three")  # replaced: counted once, with its new size
    assert store.get("a") == b"three"
    stats = store.stats()
    assert (stats.entries, stats.bytes, stats.evicted) == (2, len("a") + 5 + len("b") + 20, 0)
    store.delete("a")
    store.delete("never")
    assert store.get("a") is None and store.stats().entries == 1
    store.clear()
    assert store.stats() == type(stats)(0, 0, 0)


def test_entry_bound_evicts_the_least_recently_used(kind, request, tmp_path):
    store = make_store(kind, request, tmp_path, max_entries=3)
    for key in "abc":
        store.put(key, b"x")
    assert store.get("a") == b"x"  # a is now the most recently used
    store.put("d", b"x")  # evicts b, the least recently used
    assert [store.get(k) for k in "abcd"] == [b"x", None, b"x", b"x"]
    for n in range(20):  # a full store keeps taking writes: it evicts, it never raises
        store.put(f"k{n}", b"y")
    stats = store.stats()
    assert stats.entries == 3 and stats.evicted == 1 + 20
    assert [store.get(f"k{n}") for n in (17, 18, 19)] == [b"y"] * 3


def test_byte_bound_evicts_and_refuses_what_cannot_fit(kind, request, tmp_path):
    store = make_store(kind, request, tmp_path, max_bytes=100)
    for n in range(5):
        store.put(f"k{n}", bytes(28))  # 30 bytes each with the key: three fit
    stats = store.stats()
    assert stats.bytes <= 100 and stats.entries == 3 and stats.evicted == 2
    assert [store.get(f"k{n}") is not None for n in range(5)] == [False, False, True, True, True]
    store.put("huge", bytes(200))  # larger than the whole store: not stored, nothing else lost
    assert store.get("huge") is None and store.stats().entries == 3 and store.stats().evicted == 3


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_time_to_live_with_a_clock(kind, tmp_path):
    now = [1000.0]
    clock = lambda: now[0]  # noqa: E731
    store = MemoryStore(ttl=60, clock=clock) if kind == "memory" else SQLiteStore(tmp_path / "h.db", ttl=60, clock=clock)
    store.put("old", b"1")
    store.put("kept", b"2")
    now[0] += 50
    assert store.get("kept") == b"2"  # a read refreshes the age
    now[0] += 20  # old: 70 s unused; kept: 20 s
    assert store.get("old") is None and store.get("kept") == b"2"
    now[0] += 61
    store.put("new", b"3")  # a write also clears what has expired
    assert store.stats().entries == 1 and store.get("kept") is None and store.get("new") == b"3"


def test_redis_time_to_live_is_set_refreshed_and_cleaned(redis_server):  # noqa: F811
    store = redis_store(redis_server, ttl=60)
    store.put("k", b"v")
    value_key = store._values + "k"
    assert 59_000 < store.client.pttl(value_key) <= 60_000
    store.client.pexpire(value_key, 5_000)
    assert store.get("k") == b"v" and store.client.pttl(value_key) > 59_000  # a read refreshes it
    store.put("other", b"w")
    store.client.delete(value_key)  # what Redis does when the time runs out
    assert store.get("k") is None
    assert store.stats().entries == 1 and store.stats().bytes == len("other") + 1  # the bookkeeping follows
    without = redis_store(redis_server, ttl=None)
    without.put("k", b"v")
    assert without.client.pttl(without._values + "k") == -1


def test_bad_bounds_are_refused_naming_the_field():
    for kw, name in (({"max_entries": 0}, "max_entries"), ({"max_bytes": -1}, "max_bytes"), ({"ttl": 0}, "ttl"),
                     ({"max_entries": True}, "max_entries"), ({"ttl": "1h"}, "ttl")):
        with pytest.raises(InvalidOption) as err:
            MemoryStore(**kw)
        assert err.value.field == name


def _write_many(store, prefix: str, count: int) -> None:
    for n in range(count):
        store.put(f"{prefix}{n}", bytes(10 + n % 7))
        store.get(f"{prefix}{max(0, n - 3)}")


@pytest.mark.parametrize("kind", STORES)
def test_concurrent_writers_keep_exact_totals_inside_the_bounds(kind, request, tmp_path):
    store = make_store(kind, request, tmp_path, max_entries=50, max_bytes=600)
    threads = [threading.Thread(target=_write_many, args=(store, f"t{t}-", 120)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stats = store.stats()
    assert stats.entries <= 50 and stats.bytes <= 600
    if kind == "sqlite":
        with sqlite3.connect(tmp_path / "history.db") as db:
            assert db.execute("SELECT COUNT(*), SUM(size) FROM entries").fetchone() == (stats.entries, stats.bytes)
    elif kind == "redis":
        sizes = store.client.hgetall(store._keys[1])
        assert len(sizes) == stats.entries == store.client.zcard(store._keys[0])
        assert sum(int(v) for v in sizes.values()) == stats.bytes
        assert all(store.client.exists(store._values.encode() + k) for k in sizes)
    # every entry written and not evicted is readable: writes + evictions account for all 480 distinct keys
    present = sum(store.get(f"t{t}-{n}") is not None for t in range(4) for n in range(120))
    assert present == stats.entries and stats.evicted == 480 - stats.entries


def _process_writer(path: str, prefix: str) -> None:
    store = SQLiteStore(path, max_entries=40, max_bytes=1 << 20)
    _write_many(store, prefix, 150)
    store.close()


def test_sqlite_is_safe_across_processes(tmp_path):
    path = str(tmp_path / "shared.db")
    SQLiteStore(path, max_entries=40, max_bytes=1 << 20).close()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_process_writer, args=(path, f"p{n}-")) for n in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert [w.exitcode for w in workers] == [0, 0, 0]
    store = SQLiteStore(path, max_entries=40, max_bytes=1 << 20)
    stats = store.stats()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*), SUM(size) FROM entries").fetchone() == (stats.entries, stats.bytes)
    assert stats.entries == 40 and stats.evicted == 450 - 40
