"""The gateway's Redis store and two gateway processes sharing it (issues 25 and 40).

A real ``redis-server`` is started on a free port in a temporary directory (the tests are
skipped, naming ``redis-server``, only when the binary is absent). The store is round-tripped
directly; then two ``toolsurface gateway --http`` processes share it behind one address,
and a session opened on one continues on the other with the same tool list, each seeing
the other's changes on its next request. The faults and tampering the directory store is
held to, here in Redis: a snapshot tampered with, cut, replaced by garbage, emptied, made
other JSON or another type starts its session fresh; a tampered index neither stops writes
nor makes the cap delete another's key; a Redis that stalls or dies is a 503 for the
requests that need it, and the gateway serves again when it is back, without a restart.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the gateway needs the mcp extra")
redis = pytest.importorskip("redis", reason="the Redis store needs the redis package")
from gateway_procs import INIT, GatewayProcess, Router, client, names, text, write_config  # noqa: E402

from toolsurface.cli import main  # noqa: E402
from toolsurface.gateway.store import StoreError, open_store  # noqa: E402
from toolsurface.gateway.store.redis import RedisStore  # noqa: E402

#: Engine-agnostic (tests/conftest.py): run by the native suite where the core is built.
pytestmark = pytest.mark.engine_agnostic

REDIS_SERVER = shutil.which("redis-server")
needs_redis = pytest.mark.skipif(
    REDIS_SERVER is None, reason="redis-server is not installed (apt-get install redis-server)"
)


class RedisServer:
    """A real ``redis-server`` on one port, which a test may stall, stop and start again."""

    def __init__(self, tmp: Path) -> None:
        from gateway_procs import free_port

        self.tmp = tmp
        self.port = free_port()
        self.proc: subprocess.Popen[str] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        """Start it and wait for its "Ready to accept connections" line."""
        assert REDIS_SERVER is not None
        argv = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1"]
        argv += ["--dir", str(self.tmp), "--save", "", "--appendonly", "no"]
        argv += ["--protected-mode", "no"]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if "Ready to accept connections" in line:
                break
        else:
            proc.wait(timeout=10)
            pytest.fail("redis-server did not start:\n" + "".join(seen))
        self.proc = proc
        return self

    def stall(self) -> None:
        """Freeze the server (SIGSTOP): connections stay open and nothing answers."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        """Kill it (what it held is gone: no persistence)."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
            self.proc.wait(timeout=10)
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self.proc = None


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Redis on a free port, shared by the module's tests."""
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    try:
        yield server.url
    finally:
        server.stop()


@needs_redis
def test_the_redis_store_round_trips_under_namespaced_keys(redis_url: str) -> None:
    store = open_store(redis_url, ttl=120)
    assert isinstance(store, RedisStore)
    assert store.load("a session") is None
    store.save("a session", '{"snapshot": 1}')
    store.save("another", '{"snapshot": 2}')
    assert store.load("a session") == '{"snapshot": 1}'
    direct = redis.Redis.from_url(redis_url, decode_responses=True)
    digest = hashlib.sha256(b"a session").hexdigest()
    key = f"toolsurface:session:{digest}"
    assert direct.get(key) == '{"snapshot": 1}'
    assert 0 < direct.ttl(key) <= 120  # every write restarts the time to live
    # The sessions, and the index of their write times that caps them, all under toolsurface:.
    assert sorted(direct.keys("*")) == sorted(
        [key, store.key("another"), "toolsurface:session-index"]
    )
    store.delete("a session")
    assert store.load("a session") is None and store.load("another") == '{"snapshot": 2}'
    store.delete("another")
    store.close()


def test_an_unreachable_redis_is_a_clear_error() -> None:
    from gateway_procs import free_port

    store = RedisStore(f"redis://:hunter2@127.0.0.1:{free_port()}/0")
    with pytest.raises(StoreError, match=r"store redis://127\.0\.0\.1:\d+/0: Redis does not"):
        store.ping()
    with pytest.raises(StoreError) as caught:
        store.load("x")
    assert "hunter2" not in str(caught.value)  # a password in the URL is never shown


@needs_redis
def test_a_session_moves_between_two_gateway_processes_sharing_redis(
    tmp_path: Path, redis_url: str
) -> None:
    write_config(tmp_path)
    a = GatewayProcess(tmp_path, store=redis_url).spawn()
    b = GatewayProcess(tmp_path, store=redis_url).spawn()
    try:
        a.wait_ready()
        b.wait_ready()
        router = Router(a.port)

        async def run() -> dict[str, object]:
            seen: dict[str, object] = {}
            async with client(a.url, router=router) as session:
                await session.call_tool("ToolSearch", {"select": ["ops__list_tickets"]})
                seen["on_a"] = names(await session.list_tools())
                router.port = b.port  # the balancer sends the next request to B
                seen["on_b"] = names(await session.list_tools())
                seen["ran_on_b"] = text(await session.call_tool("ops__list_tickets", {}))
                await session.call_tool("ToolSearch", {"select": ["ops__get_service_health"]})
                seen["loaded_on_b"] = names(await session.list_tools())
                router.port = a.port  # A must see B's load on this next request
                seen["back_on_a"] = names(await session.list_tools())
                a.stop()  # A goes away mid-session; B carries on
                router.port = b.port
                seen["after_a_died"] = names(await session.list_tools())
            return seen

        seen = asyncio.run(run())
    finally:
        a.stop()
        b.stop()
    assert seen["on_a"] == ["ToolSearch", "ops__list_tickets"]
    assert seen["on_b"] == seen["on_a"]
    assert "OPS-1001" in str(seen["ran_on_b"])
    loaded = ["ToolSearch", "ops__list_tickets", "ops__get_service_health"]
    assert seen["loaded_on_b"] == loaded
    assert seen["back_on_a"] == loaded
    assert seen["after_a_died"] == loaded


@needs_redis
def test_a_snapshot_tampered_with_in_redis_starts_the_session_fresh(
    tmp_path: Path, redis_url: str
) -> None:
    write_config(tmp_path)
    direct = redis.Redis.from_url(redis_url, decode_responses=True)

    async def run(gw: GatewayProcess) -> tuple[list[str], list[str]]:
        async with client(gw.url) as session:
            await session.call_tool("ToolSearch", {"select": ["ops__list_tickets"]})
            before = names(await session.list_tools())
            for key in direct.keys("toolsurface:session:*"):
                value = direct.get(key)
                if value and "ops__list_tickets" in value:
                    direct.set(key, value.replace("ops__list_tickets", "ops__scale_service"))
            return before, names(await session.list_tools())

    with GatewayProcess(tmp_path, store=redis_url) as gw:
        before, after = asyncio.run(run(gw))
    assert before == ["ToolSearch", "ops__list_tickets"]
    assert after == ["ToolSearch"]  # refused, never the swapped-in tool
    assert any("stored snapshot refused" in line and "seal" in line for line in gw.lines)


@needs_redis
def test_a_truncated_or_garbage_value_in_redis_starts_the_session_fresh_never_a_500(
    tmp_path: Path, redis_url: str
) -> None:
    write_config(tmp_path)
    direct = redis.Redis.from_url(redis_url)  # bytes: garbage need not be UTF-8

    def spoil(how: str) -> int:
        spoiled = 0
        for key in direct.keys(b"toolsurface:session:*"):
            value = direct.get(key)
            if value and b"ops__list_tickets" in value:
                direct.set(key, value[: len(value) // 2] if how == "cut" else b"\xff\xfe\x00{")
                spoiled += 1
        return spoiled

    async def run(gw: GatewayProcess, how: str) -> tuple[int, list[str]]:
        async with client(gw.url) as session:
            await session.call_tool("ToolSearch", {"select": ["ops__list_tickets"]})
            spoiled = spoil(how)
            return spoiled, names(await session.list_tools())  # a 500 would raise here

    with GatewayProcess(tmp_path, store=redis_url) as gw:
        cut = asyncio.run(run(gw, "cut"))
        garbage = asyncio.run(run(gw, "garbage"))
    assert cut == garbage == (1, ["ToolSearch"])
    refused = [line for line in gw.lines if "stored snapshot refused, starting fresh" in line]
    assert len(refused) >= 2 and all("session " in line for line in refused)


@needs_redis
def test_the_redis_store_keeps_at_most_its_cap_dropping_the_least_recently_written(
    redis_url: str,
) -> None:
    store = RedisStore(redis_url, prefix="capped:", max_sessions=3)
    for i in range(3):
        store.save(f"s{i}", f'{{"n":{i}}}')
        time.sleep(0.01)
    store.save("s0", '{"n":"again"}')
    time.sleep(0.01)
    store.save("s3", '{"n":3}')
    assert store.load("s1") is None
    assert [store.load(s) for s in ("s0", "s2", "s3")] == ['{"n":"again"}', '{"n":2}', '{"n":3}']
    direct = redis.Redis.from_url(redis_url)
    assert len(direct.keys("capped:*")) == 3 and direct.zcard(store.index) == 3
    store.delete("s0")
    assert direct.zcard(store.index) == 2


@needs_redis
def test_a_redis_store_needs_a_mark_key(
    tmp_path: Path,
    redis_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config, _ = write_config(tmp_path)
    monkeypatch.delenv("TOOLSURFACE_MARK_KEY", raising=False)
    argv = ["gateway", "--config", str(config), "--store", redis_url, "--http", "127.0.0.1:0"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "must be sealed" in err and "TOOLSURFACE_MARK_KEY" in err


@needs_redis
def test_every_kind_of_broken_value_in_redis_starts_the_session_fresh_with_a_warning(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The directory store's breaks (cut, garbage, empty, other JSON), and Redis's own: types."""
    from test_gateway_store import _broken_sessions, break_and_resume

    store = RedisStore(redis_url, prefix="broken:")
    sessions, _ = _broken_sessions(store)
    direct = redis.Redis.from_url(redis_url)
    key = store.key("brokensession1")

    def truncate() -> None:
        direct.set(key, bytes(direct.get(key) or b"")[:25])

    def garbage() -> None:
        direct.set(key, b"\xff\xfe\x00not json at all")

    def empty() -> None:
        direct.set(key, b"")

    def other_json() -> None:
        direct.set(key, b'["a list", 1]')

    def a_list() -> None:
        direct.delete(key)
        direct.rpush(key, b"{}")

    def a_hash() -> None:
        direct.delete(key)
        direct.hset(key, "snapshot", "{}")

    break_and_resume(sessions, [truncate, garbage, empty, other_json, a_list, a_hash], caplog)
    assert direct.type(key) == b"string"  # the fresh session's write replaced the list


@needs_redis
def test_a_tampered_index_stops_no_write_and_the_cap_deletes_only_its_own_keys(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = RedisStore(redis_url, prefix="indexed:", max_sessions=2)
    direct = redis.Redis.from_url(redis_url)
    direct.set(store.index, b"not a sorted set")
    with caplog.at_level("WARNING", logger="toolsurface.gateway"):
        store.save("a", '{"n":"a"}')
    assert store.load("a") == '{"n":"a"}' and direct.type(store.index) == b"zset"
    assert any("index" in r.getMessage() and "rebuilt" in r.getMessage() for r in caplog.records)
    # Someone slips another application's key into the index, as its oldest entry.
    direct.set("precious:key", b"keep me")
    direct.zadd(store.index, {"precious:key": 0})
    time.sleep(0.01)
    store.save("b", '{"n":"b"}')  # over the cap: the slipped-in name is the oldest
    time.sleep(0.01)
    store.save("c", '{"n":"c"}')  # over again: "a" is now the oldest, and goes
    assert direct.get("precious:key") == b"keep me"  # dropped from the index, never deleted
    assert [store.load(s) for s in ("a", "b", "c")] == [None, '{"n":"b"}', '{"n":"c"}']
    assert direct.zcard(store.index) == 2
    direct.delete("precious:key")


ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@needs_redis
def test_a_redis_that_stalls_or_dies_is_a_503_and_the_gateway_serves_again_when_back(
    tmp_path: Path,
) -> None:
    import httpx2

    server = RedisServer(tmp_path).start()
    write_config(tmp_path)

    async def works(gw: GatewayProcess) -> list[str]:
        async with client(gw.url) as session:
            await session.call_tool("ToolSearch", {"select": ["ops__list_tickets"]})
            return names(await session.list_tools())

    def opened(gw: GatewayProcess) -> httpx2.Response:
        return httpx2.post(gw.url, json=INIT, headers=ACCEPT, timeout=120)

    loaded = ["ToolSearch", "ops__list_tickets"]
    try:
        with GatewayProcess(tmp_path, store=server.url) as gw:
            assert asyncio.run(works(gw)) == loaded
            server.stall()
            try:
                stalled = opened(gw)
            finally:
                server.resume()
            assert stalled.status_code == 503, stalled.text
            assert "session store does not answer" in stalled.text
            assert asyncio.run(works(gw)) == loaded  # back: served, no restart
            server.stop()
            dead = opened(gw)
            assert dead.status_code == 503 and "session store" in dead.text
            server.start()  # the same port, empty
            assert asyncio.run(works(gw)) == loaded
            assert gw._proc is not None and gw._proc.poll() is None  # never crashed
        logged = "\n".join(gw.lines)
        assert "redis://127.0.0.1" in logged  # the log names the store that failed
    finally:
        server.stop()
