"""Where the history keeper keeps what each assistant turn emitted: bounded key -> bytes stores.

Three stores, one contract (:class:`HistoryStore`):

* :class:`MemoryStore` (the default): one process, a dict behind a lock;
* :class:`SQLiteStore`: one machine, several threads and processes (stdlib ``sqlite3``, WAL, each write one
  ``BEGIN IMMEDIATE`` transaction);
* :class:`RedisStore`: several serving replicas sharing conversations (``pip install toolwire[history]``:
  redis-py; every operation one Lua script, so it is atomic on the server).

Every store is bounded by ``max_entries`` and ``max_bytes`` (key and value bytes) and evicts the least recently
used entries past either bound; ``ttl`` (seconds, None for none) forgets an entry that was not written or read
for that long (a read refreshes it, so a conversation in progress stays). A value larger than ``max_bytes`` is
not stored. A full store never raises: it evicts, and :meth:`HistoryStore.stats` counts what it evicted.
Stores hold opaque bytes; what they mean (and the fingerprints that make a stale or foreign entry harmless)
is the keeper's business (:mod:`toolwire.history.keeper`).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

from toolwire.errors import InvalidOption, MissingExtra

Clock = Callable[[], float]


@dataclass(frozen=True)
class StoreStats:
    """``entries`` and ``bytes`` held now; ``evicted``: entries removed to stay inside the bounds, or refused as
    larger than ``max_bytes`` (expired entries are not counted)."""

    entries: int
    bytes: int
    evicted: int


class HistoryStore:
    """A bounded, thread-safe key -> bytes store. Subclasses implement :meth:`get`, :meth:`put`, :meth:`delete`,
    :meth:`stats` and :meth:`clear`; the bounds are checked here."""

    def __init__(self, *, max_entries: int = 100_000, max_bytes: int = 256 << 20, ttl: float | None = 24 * 3600):
        if not isinstance(max_entries, int) or isinstance(max_entries, bool) or max_entries < 1:
            raise InvalidOption(f"max_entries must be a positive integer, got {max_entries!r}", field="max_entries")
        if not isinstance(max_bytes, int) or isinstance(max_bytes, bool) or max_bytes < 1:
            raise InvalidOption(f"max_bytes must be a positive integer, got {max_bytes!r}", field="max_bytes")
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl > 0):
            raise InvalidOption(f"ttl must be a positive number of seconds or None, got {ttl!r}", field="ttl")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.ttl = ttl

    def get(self, key: str) -> bytes | None:
        """The value stored under ``key`` (refreshing its age), or None."""
        raise NotImplementedError

    def get_many(self, keys: list[str]) -> list[bytes | None]:
        """:meth:`get` of each key, in one round trip where the backend allows (one lock, one transaction, one
        Redis pipeline): the keeper looks up every assistant turn of a request at once."""
        return [self.get(key) for key in keys]

    def put(self, key: str, value: bytes) -> None:
        """Store ``value`` under ``key`` (replacing any), then evict the least recently used entries while a bound
        is passed. A value that alone passes ``max_bytes`` is not stored (and counted as evicted)."""
        raise NotImplementedError

    def delete(self, key: str) -> None:
        """Forget ``key`` (nothing happens when it is absent)."""
        raise NotImplementedError

    def stats(self) -> StoreStats:
        """What the store holds now, and how many entries it evicted."""
        raise NotImplementedError

    def clear(self) -> None:
        """Forget every entry (the eviction count too)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release connections (a no-op for the memory store)."""


def _size(key: str, value: bytes) -> int:
    return len(key.encode("utf-8", "surrogatepass")) + len(value)


class MemoryStore(HistoryStore):
    """The default store: this process only. ``clock`` (seconds) is for tests of the time to live."""

    def __init__(self, *, max_entries: int = 100_000, max_bytes: int = 256 << 20, ttl: float | None = 24 * 3600,
                 clock: Clock = time.monotonic):
        super().__init__(max_entries=max_entries, max_bytes=max_bytes, ttl=ttl)
        self._clock = clock
        self._data: OrderedDict[str, tuple[bytes, float]] = OrderedDict()  # key -> (value, last use), oldest first
        self._bytes = 0
        self._evicted = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> bytes | None:
        with self._lock:
            item = self._data.get(key)
            if item is None:
                return None
            now = self._clock()
            if self.ttl is not None and now - item[1] >= self.ttl:
                self._remove(key)
                return None
            self._data[key] = (item[0], now)
            self._data.move_to_end(key)
            return item[0]

    def get_many(self, keys: list[str]) -> list[bytes | None]:
        return [self.get(key) for key in keys]  # (the lock is per key: a dict look-up each)

    def put(self, key: str, value: bytes) -> None:
        value = bytes(value)
        size = _size(key, value)
        with self._lock:
            if key in self._data:
                self._remove(key)
            if size > self.max_bytes:
                self._evicted += 1
                return
            now = self._clock()
            self._expire(now)
            self._data[key] = (value, now)
            self._bytes += size
            while len(self._data) > self.max_entries or self._bytes > self.max_bytes:
                self._remove(next(iter(self._data)))
                self._evicted += 1

    def _expire(self, now: float) -> None:
        if self.ttl is None:
            return
        while self._data:
            oldest = next(iter(self._data))
            if now - self._data[oldest][1] < self.ttl:
                return
            self._remove(oldest)

    def _remove(self, key: str) -> None:
        value, _ = self._data.pop(key)
        self._bytes -= _size(key, value)

    def delete(self, key: str) -> None:
        with self._lock:
            if key in self._data:
                self._remove(key)

    def stats(self) -> StoreStats:
        with self._lock:
            return StoreStats(len(self._data), self._bytes, self._evicted)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._bytes = 0
            self._evicted = 0


_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value BLOB NOT NULL, size INTEGER NOT NULL,
                                    used REAL NOT NULL, seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS entries_used ON entries(used);
CREATE INDEX IF NOT EXISTS entries_seq ON entries(seq);
CREATE TABLE IF NOT EXISTS totals (id INTEGER PRIMARY KEY CHECK (id = 0), entries INTEGER NOT NULL,
                                   bytes INTEGER NOT NULL, evicted INTEGER NOT NULL, tick INTEGER NOT NULL);
INSERT OR IGNORE INTO totals VALUES (0, 0, 0, 0, 0);
"""


class SQLiteStore(HistoryStore):
    """A store in one SQLite file, shared by the threads and processes of one machine.

    Each thread (and each process: a forked child opens its own) uses its own connection; the database runs in
    WAL mode, and every write is one ``BEGIN IMMEDIATE`` transaction that also expires and evicts, so the
    totals (kept in the ``totals`` table) stay exact under concurrent writers. ``timeout`` is how long a writer
    waits for the lock (seconds). ``clock`` gives the time entries are stamped with (wall time: processes
    share it)."""

    def __init__(self, path: str | os.PathLike, *, max_entries: int = 100_000, max_bytes: int = 256 << 20,
                 ttl: float | None = 24 * 3600, timeout: float = 30.0, clock: Clock = time.time):
        super().__init__(max_entries=max_entries, max_bytes=max_bytes, ttl=ttl)
        self.path = os.fspath(path)
        self._timeout = timeout
        self._clock = clock
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        self._connection()  # creates the tables

    def _connection(self) -> sqlite3.Connection:
        local = self._local
        db = getattr(local, "db", None)
        if db is None or local.pid != os.getpid():
            db = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript("BEGIN IMMEDIATE;" + _SCHEMA + "COMMIT;")
            local.db, local.pid = db, os.getpid()
            with self._all_lock:
                self._all.append(db)
        return db

    class _Tx:
        def __init__(self, db: sqlite3.Connection):
            self.db = db

        def __enter__(self) -> sqlite3.Connection:
            self.db.execute("BEGIN IMMEDIATE")
            return self.db

        def __exit__(self, kind, exc, tb) -> None:
            self.db.execute("COMMIT" if kind is None else "ROLLBACK")

    def _transaction(self) -> "SQLiteStore._Tx":
        return SQLiteStore._Tx(self._connection())

    def get(self, key: str) -> bytes | None:
        return self.get_many([key])[0]

    def get_many(self, keys: list[str]) -> list[bytes | None]:
        now = self._clock()
        with self._transaction() as db:
            return [self._get(db, key, now) for key in keys]

    def _get(self, db: sqlite3.Connection, key: str, now: float) -> bytes | None:
        row = db.execute("SELECT value, size, used FROM entries WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        if self.ttl is not None and now - row[2] >= self.ttl:
            db.execute("DELETE FROM entries WHERE key = ?", (key,))
            db.execute("UPDATE totals SET entries = entries - 1, bytes = bytes - ? WHERE id = 0", (row[1],))
            return None
        tick = db.execute("UPDATE totals SET tick = tick + 1 WHERE id = 0 RETURNING tick").fetchone()[0]
        db.execute("UPDATE entries SET used = ?, seq = ? WHERE key = ?", (now, tick, key))
        return bytes(row[0])

    def put(self, key: str, value: bytes) -> None:
        value = bytes(value)
        size = _size(key, value)
        now = self._clock()
        with self._transaction() as db:
            self._remove(db, key)
            if size > self.max_bytes:
                db.execute("UPDATE totals SET evicted = evicted + 1 WHERE id = 0")
                return
            if self.ttl is not None:
                gone = db.execute("SELECT COUNT(*), TOTAL(size) FROM entries WHERE used <= ?",
                                  (now - self.ttl,)).fetchone()
                if gone[0]:
                    db.execute("DELETE FROM entries WHERE used <= ?", (now - self.ttl,))
                    db.execute("UPDATE totals SET entries = entries - ?, bytes = bytes - ? WHERE id = 0",
                               (gone[0], int(gone[1])))
            entries, total, tick = db.execute("UPDATE totals SET entries = entries + 1, bytes = bytes + ?, "
                                              "tick = tick + 1 WHERE id = 0 RETURNING entries, bytes, tick",
                                              (size,)).fetchone()
            db.execute("INSERT INTO entries VALUES (?, ?, ?, ?, ?)", (key, value, size, now, tick))
            evicted = 0
            while entries > self.max_entries or total > self.max_bytes:
                batch = db.execute("SELECT key, size FROM entries WHERE key != ? ORDER BY seq LIMIT ?",
                                   (key, max(1, entries - self.max_entries))).fetchall()
                if not batch:
                    break
                for old, old_size in batch:
                    if entries <= self.max_entries and total <= self.max_bytes:
                        break
                    db.execute("DELETE FROM entries WHERE key = ?", (old,))
                    entries, total, evicted = entries - 1, total - old_size, evicted + 1
            if evicted:
                db.execute("UPDATE totals SET entries = ?, bytes = ?, evicted = evicted + ? WHERE id = 0",
                           (entries, total, evicted))

    @staticmethod
    def _remove(db: sqlite3.Connection, key: str) -> None:
        row = db.execute("DELETE FROM entries WHERE key = ? RETURNING size", (key,)).fetchone()
        if row is not None:
            db.execute("UPDATE totals SET entries = entries - 1, bytes = bytes - ? WHERE id = 0", (row[0],))

    def delete(self, key: str) -> None:
        with self._transaction() as db:
            self._remove(db, key)

    def stats(self) -> StoreStats:
        row = self._connection().execute("SELECT entries, bytes, evicted FROM totals WHERE id = 0").fetchone()
        return StoreStats(*row)

    def clear(self) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM entries")
            db.execute("UPDATE totals SET entries = 0, bytes = 0, evicted = 0, tick = 0 WHERE id = 0")

    def close(self) -> None:
        with self._all_lock:
            for db in self._all:
                try:
                    db.close()
                except sqlite3.Error:
                    pass
            self._all.clear()
        self._local = threading.local()


# Every Redis operation is one script, so concurrent replicas see consistent totals. KEYS: the value key, the
# recency sorted set (member -> a counter, the store's last use of it), the size hash, the counters hash
# (bytes, evicted, tick). ARGV[1] is the member (the caller's key); the prefix rebuilds other members' value keys
# (same hash tag, same slot). Values expire by Redis's own clock (PEXPIRE, refreshed on use), so the oldest
# members of the recency set are the first to lose their value: a write drops those from the bookkeeping.
_PURGE = """
local function tick(counters)
  return redis.call('HINCRBY', counters, 'tick', 1)
end
local function drop(prefix, lru, sizes, counters, member)
  local size = redis.call('HGET', sizes, member)
  if size then
    redis.call('HDEL', sizes, member)
    redis.call('HINCRBY', counters, 'bytes', -tonumber(size))
  end
  redis.call('ZREM', lru, member)
  redis.call('DEL', prefix .. member)
end
"""

_GET = _PURGE + """
local value = redis.call('GET', KEYS[1])
if not value then
  if redis.call('ZSCORE', KEYS[2], ARGV[1]) then drop(ARGV[2], KEYS[2], KEYS[3], KEYS[4], ARGV[1]) end
  return false
end
local ttl = tonumber(ARGV[3])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
redis.call('ZADD', KEYS[2], tick(KEYS[4]), ARGV[1])
return value
"""

_PUT = _PURGE + """
local member, prefix, value = ARGV[1], ARGV[2], ARGV[3]
local size, ttl, max_entries, max_bytes = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
drop(prefix, KEYS[2], KEYS[3], KEYS[4], member)
if size > max_bytes then
  redis.call('HINCRBY', KEYS[4], 'evicted', 1)
  return 0
end
if ttl > 0 then
  for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, 255)) do
    if redis.call('EXISTS', prefix .. m) == 1 then break end
    drop(prefix, KEYS[2], KEYS[3], KEYS[4], m)
  end
  redis.call('SET', KEYS[1], value, 'PX', ttl)
else
  redis.call('SET', KEYS[1], value)
end
redis.call('ZADD', KEYS[2], tick(KEYS[4]), member)
redis.call('HSET', KEYS[3], member, size)
local total = redis.call('HINCRBY', KEYS[4], 'bytes', size)
local evicted = 0
while redis.call('ZCARD', KEYS[2]) > max_entries or total > max_bytes do
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if (not oldest) or oldest == member then break end
  drop(prefix, KEYS[2], KEYS[3], KEYS[4], oldest)
  evicted = evicted + 1
  total = tonumber(redis.call('HGET', KEYS[4], 'bytes'))
end
if evicted > 0 then redis.call('HINCRBY', KEYS[4], 'evicted', evicted) end
return evicted
"""

_DELETE = _PURGE + """
drop(ARGV[2], KEYS[2], KEYS[3], KEYS[4], ARGV[1])
return 1
"""


class RedisStore(HistoryStore):
    """A store in Redis, shared by serving replicas: ``RedisStore(redis.Redis(...))`` or ``RedisStore(url=...)``.

    Keys live under ``prefix`` (a hash tag, ``{toolwire-history}`` by default, so every key of one store is in
    one cluster slot): ``<prefix>:v:<key>`` holds a value (with the time to live as a Redis expiry), and three
    bookkeeping keys hold the recency order, the sizes and the totals. Each operation is one Lua script, so
    concurrent replicas keep the totals exact; ages come from the server's clock (value expiry), so replicas need
    not agree on time. Needs redis-py (``pip install toolwire[history]``)."""

    def __init__(self, client: Any = None, *, url: str | None = None, prefix: str = "{toolwire-history}",
                 max_entries: int = 100_000, max_bytes: int = 256 << 20, ttl: float | None = 24 * 3600):
        super().__init__(max_entries=max_entries, max_bytes=max_bytes, ttl=ttl)
        if client is None:
            try:
                import redis
            except ImportError:
                raise MissingExtra("RedisStore needs redis-py: pip install toolwire[history]") from None
            if url is None:
                raise InvalidOption("RedisStore needs a redis client or url=", field="url")
            client = redis.Redis.from_url(url)
        self.client = client
        self.prefix = prefix
        self._values = f"{prefix}:v:"
        self._keys = [f"{prefix}:lru", f"{prefix}:sizes", f"{prefix}:totals"]
        self._ttl_ms = 0 if ttl is None else max(1, int(ttl * 1000))
        self._get = client.register_script(_GET)
        self._put = client.register_script(_PUT)
        self._delete = client.register_script(_DELETE)

    def get(self, key: str) -> bytes | None:
        value = self._get(keys=[self._values + key, *self._keys], args=[key, self._values, self._ttl_ms])
        return None if value is None else bytes(value)

    def get_many(self, keys: list[str]) -> list[bytes | None]:
        if len(keys) < 2:
            return [self.get(key) for key in keys]
        pipe = self.client.pipeline(transaction=False)
        for key in keys:
            self._get(keys=[self._values + key, *self._keys], args=[key, self._values, self._ttl_ms], client=pipe)
        return [None if value is None else bytes(value) for value in pipe.execute()]

    def put(self, key: str, value: bytes) -> None:
        value = bytes(value)
        self._put(keys=[self._values + key, *self._keys],
                  args=[key, self._values, value, _size(key, value), self._ttl_ms, self.max_entries, self.max_bytes])

    def delete(self, key: str) -> None:
        self._delete(keys=[self._values + key, *self._keys], args=[key, self._values])

    def stats(self) -> StoreStats:
        pipe = self.client.pipeline()
        pipe.zcard(self._keys[0])
        pipe.hmget(self._keys[2], "bytes", "evicted")
        entries, (size, evicted) = pipe.execute()
        return StoreStats(int(entries), int(size or 0), int(evicted or 0))

    def clear(self) -> None:
        members = self.client.zrange(self._keys[0], 0, -1)
        pipe = self.client.pipeline()
        for m in members:
            pipe.delete(self._values.encode() + m)
        pipe.delete(*self._keys)
        pipe.execute()

    def close(self) -> None:
        self.client.close()


__all__ = ["HistoryStore", "MemoryStore", "SQLiteStore", "RedisStore", "StoreStats"]
