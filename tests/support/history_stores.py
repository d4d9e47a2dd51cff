"""Helpers for the history keeper's tests: a real ``redis-server`` on loopback, and the three stores.

:func:`redis_server` starts Debian's ``redis-server`` on a free port with its files in a temporary directory (no
persistence), waits until it answers, and stops it (by its own pid) at the end. ``.ci/run`` installs the package;
where the binary is missing the Redis tests skip, except under CI (``CI`` set), where they fail.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

import pytest

from toolwire.history import MemoryStore, RedisStore, SQLiteStore


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """``(host, port)`` of a redis-server started for this test session."""
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is not installed (.ci/run installs Debian's redis-server)")
        pytest.skip("redis-server is not installed (apt-get install -y redis-server)")
    redis = pytest.importorskip("redis")
    folder = tmp_path_factory.mktemp("redis")
    port = _free_port()
    process = subprocess.Popen([binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(folder),
                                "--save", "", "--appendonly", "no", "--protected-mode", "yes"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(host="127.0.0.1", port=port)
    try:
        for _ in range(200):  # up to ~10 s for the server to accept connections
            try:
                if client.ping():
                    break
            except redis.ConnectionError:
                time.sleep(0.05)
        else:
            pytest.fail("redis-server did not start")
        yield "127.0.0.1", port
    finally:
        client.close()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


_PREFIXES = iter(range(1 << 30))


def redis_store(server, **bounds) -> RedisStore:
    """A RedisStore with a fresh key prefix on the test server (each test sees an empty store)."""
    import redis

    host, port = server
    return RedisStore(redis.Redis(host=host, port=port), prefix=f"{{tw-test-{os.getpid()}-{next(_PREFIXES)}}}",
                      **bounds)


STORES = ("memory", "sqlite", "redis")


def make_store(kind: str, request, tmp_path, **bounds):
    """A fresh store of ``kind`` (the Redis one on the session's server)."""
    if kind == "memory":
        return MemoryStore(**bounds)
    if kind == "sqlite":
        return SQLiteStore(tmp_path / "history.db", **bounds)
    return redis_store(request.getfixturevalue("redis_server"), **bounds)
