"""The gateway's Redis store and two gateway processes sharing it (issue 25).

A real ``redis-server`` is started on a free port in a temporary directory (the tests are
skipped, naming ``redis-server``, only when the binary is absent). The store is round-tripped
directly; then two ``toolsurface gateway --http`` processes share it behind one address,
and a session opened on one continues on the other with the same tool list, each seeing
the other's changes on its next request; a snapshot tampered with in Redis starts fresh.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the gateway needs the mcp extra")
redis = pytest.importorskip("redis", reason="the Redis store needs the redis package")
from gateway_procs import GatewayProcess, Router, client, names, text, write_config  # noqa: E402

from toolsurface.cli import main  # noqa: E402
from toolsurface.gateway.store import StoreError, open_store  # noqa: E402
from toolsurface.gateway.store.redis import RedisStore  # noqa: E402

REDIS_SERVER = shutil.which("redis-server")
needs_redis = pytest.mark.skipif(
    REDIS_SERVER is None, reason="redis-server is not installed (apt-get install redis-server)"
)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Redis on a free port, ready when it says so on its stdout."""
    from gateway_procs import free_port

    assert REDIS_SERVER is not None
    tmp = tmp_path_factory.mktemp("redis")
    port = free_port()
    argv = [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp)]
    argv += ["--save", "", "--appendonly", "no", "--protected-mode", "no"]
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
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


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
