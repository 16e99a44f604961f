"""The MCP gateway over streamable HTTP (issue 25), through the MCP SDK's own client.

Each gateway is a real ``toolsurface gateway --http`` process fronting the project's demo
ops server and ``mcp-server-time``; each client is the SDK's streamable-HTTP client and
``ClientSession``. A client lists, searches in English and Russian, loads, calls and is told
``list_changed``; a blocked tool is never shown; a missing or wrong bearer token is refused;
two sessions are independent; a gateway restarted mid-session resumes the session (same
client, same session id) with the same tool list, and a tampered snapshot starts fresh; a
client that initialises after an upstream came back finds it in the instructions.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the gateway needs the mcp extra")
pytest.importorskip("uvicorn", reason="the HTTP gateway needs uvicorn (the mcp extra)")
import httpx2
from gateway_procs import (
    INIT,
    Changes,
    GatewayProcess,
    client,
    names,
    text,
    write_config,
)

from toolsurface.cli import main

#: Engine-agnostic (tests/conftest.py): run by the native suite where the core is built.
pytestmark = pytest.mark.engine_agnostic

TOKEN = "s3cret-bearer-token-for-tests"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    """One gateway with a bearer token and a directory store, for the tests of one session."""
    tmp = tmp_path_factory.mktemp("gateway-http")
    write_config(tmp)
    extra = ["--token-env", "GW_TOKEN"]
    with GatewayProcess(tmp, store=str(tmp / "store"), extra=extra, env={"GW_TOKEN": TOKEN}) as gw:
        yield gw


def test_a_client_searches_loads_and_calls_over_http(gateway: GatewayProcess) -> None:
    async def run() -> tuple[list[list[str]], list[str], int]:
        changes = Changes()
        async with client(gateway.url, token=TOKEN, changes=changes) as session:
            first = names(await session.list_tools())
            found = await session.call_tool("ToolSearch", {"query": "restart a service"})
            second = names(await session.list_tools())
            ru = await session.call_tool("ToolSearch", {"query": "покажи дежурных по команде"})
            third = names(await session.list_tools())
            ran = await session.call_tool(
                "ops__restart_service", {"service": "api", "environment": "staging"}
            )
            now = await session.call_tool("time__get_current_time", {"timezone": "Etc/UTC"})
            texts = [text(found), text(ru), text(ran), text(now)]
            return [first, second, third], texts, changes.count

    lists, texts, changed = asyncio.run(run())
    first, second, third = lists
    assert first == ["ToolSearch"]  # every upstream is held back: only ToolSearch is listed
    assert "ops__restart_service" in second and second[0] == "ToolSearch"
    assert "ops__get_oncall_schedule" in third and third[: len(second)] == second
    assert changed >= 2  # each load told the client to list again, over HTTP too
    assert "ops__restart_service" in texts[0] and "ops__get_oncall_schedule" in texts[1]
    assert "Restarted api in staging" in texts[2]
    assert "Etc/UTC" in texts[3]  # a blind call of a held-back tool, forwarded upstream


def test_a_blocked_tool_is_never_shown(gateway: GatewayProcess) -> None:
    async def run() -> tuple[list[str], list[str]]:
        async with client(gateway.url, token=TOKEN) as session:
            found = await session.call_tool("ToolSearch", {"query": "rotate a secret credential"})
            chosen = await session.call_tool("ToolSearch", {"select": ["ops__rotate_secret"]})
            called = await session.call_tool("ops__rotate_secret", {"name": "db"})
            listed = names(await session.list_tools())
            stored = [p.read_text("utf-8") for p in (gateway.tmp / "store").glob("*.json")]
            return [text(found), text(chosen), text(called), json.dumps(listed)], stored

    out, stored = asyncio.run(run())
    assert all("rotate_secret" not in t for t in (out[0], out[3]))
    assert out[1].startswith("Unknown tool 'ops__rotate_secret'")
    assert "rotate" not in out[1].split("Nearest")[-1]  # never offered as a near name
    assert out[2].startswith("Unknown tool 'ops__rotate_secret'")  # blocked reads as unknown
    assert stored and not any("rotate_secret" in s for s in stored)


def test_two_sessions_are_independent(gateway: GatewayProcess) -> None:
    async def run() -> tuple[list[str], list[str], list[str]]:
        async with (
            client(gateway.url, token=TOKEN) as one,
            client(gateway.url, token=TOKEN) as two,
        ):
            await one.call_tool("ToolSearch", {"select": ["ops__list_tickets"]})
            loaded = names(await one.list_tools())
            other = names(await two.list_tools())
            await two.call_tool("ToolSearch", {"select": ["ops__get_service_health"]})
            return loaded, other, names(await one.list_tools())

    loaded, other, again = asyncio.run(run())
    assert loaded == ["ToolSearch", "ops__list_tickets"]
    assert other == ["ToolSearch"]  # the other session's load is not in this one
    assert again == loaded  # and this one's load is not in the first


def test_the_bearer_token_is_required(gateway: GatewayProcess) -> None:
    def post(headers: dict[str, str]) -> httpx2.Response:
        return httpx2.post(gateway.url, json=INIT, headers={**ACCEPT, **headers}, timeout=30)

    assert post({}).status_code == 401
    assert post({"Authorization": "Bearer wrong"}).status_code == 401
    assert post({"Authorization": TOKEN}).status_code == 401  # the scheme is part of it
    accepted = post({"Authorization": f"Bearer {TOKEN}"})
    assert accepted.status_code == 200 and accepted.headers.get("mcp-session-id")
    assert "<tool_catalogue>" in accepted.text  # the catalogue rides in the instructions
    assert '"listChanged":true' in accepted.text.replace(" ", "")


def test_what_a_client_sends_never_breaks_the_gateway(gateway: GatewayProcess) -> None:
    auth = {**ACCEPT, "Authorization": f"Bearer {TOKEN}"}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    no_session = httpx2.post(gateway.url, json=call, headers=auth, timeout=30)
    unknown = httpx2.post(
        gateway.url, json=call, headers={**auth, "Mcp-Session-Id": "never-issued"}, timeout=30
    )
    garbage = httpx2.post(gateway.url, content=b"\xff{not json", headers=auth, timeout=30)
    get = httpx2.get(gateway.url, headers=auth, timeout=30)
    get_unknown = httpx2.get(
        gateway.url, headers={**auth, "Mcp-Session-Id": "never-issued"}, timeout=30
    )
    assert no_session.status_code == 400 and "session" in no_session.text.lower()
    assert unknown.status_code == 404  # the client opens a new session, as MCP says
    assert garbage.status_code == 400
    assert get.status_code == 400  # a GET stream is a session's: none without its id
    assert get_unknown.status_code == 404

    async def still_serves() -> list[str]:
        async with client(gateway.url, token=TOKEN) as session:
            bad = await session.call_tool("ToolSearch", {"query": 42, "select": {"x": 1}})
            assert bad.is_error
            return names(await session.list_tools())

    assert asyncio.run(still_serves()) == ["ToolSearch"]


def test_a_request_id_mcp_does_not_allow_is_an_invalid_request_not_a_silent_202(
    gateway: GatewayProcess,
) -> None:
    """MCP: a request's id is a string or an integer, never null. The SDK's stateless
    transport took a request with any other id for a notification: 202, no answer, and a
    client waiting for one forever. Refused as JSON-RPC says (-32600, id null), with or
    without a session; a notification (no id) and a good id still pass."""
    auth = {**ACCEPT, "Authorization": f"Bearer {TOKEN}"}
    opened = httpx2.post(gateway.url, json=INIT, headers=auth, timeout=30)
    session = {**auth, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
    for bad in ({"a": 1}, 1.5, None, True, [2]):
        listed = {"jsonrpc": "2.0", "id": bad, "method": "tools/list"}
        for headers in (session, auth):
            message = listed if headers is session else {**INIT, "id": bad}
            answer = httpx2.post(gateway.url, json=message, headers=headers, timeout=30)
            assert answer.status_code == 400, (bad, answer.status_code, answer.text)
            error = answer.json()
            assert error["id"] is None and error["error"]["code"] == -32600
            assert "id" in error["error"]["message"]
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx2.post(gateway.url, json=done, headers=session, timeout=30).status_code == 202
    for good in (7, "seven"):
        listed = {"jsonrpc": "2.0", "id": good, "method": "tools/list"}
        answer = httpx2.post(gateway.url, json=listed, headers=session, timeout=30)
        assert answer.status_code == 200
        assert f'"id":{json.dumps(good)}' in answer.text.replace(" ", "")


def test_a_delete_ends_only_a_session_it_names_and_the_store_knows(
    gateway: GatewayProcess,
) -> None:
    """A DELETE without a session id, with a malformed one or an unknown one ends nothing and
    says so (400, 400, 404), as a request of such a session is answered; a known one ends."""
    auth = {**ACCEPT, "Authorization": f"Bearer {TOKEN}"}
    assert httpx2.delete(gateway.url, headers=auth, timeout=30).status_code == 400
    malformed = {**auth, "Mcp-Session-Id": "x" * 300}
    assert httpx2.delete(gateway.url, headers=malformed, timeout=30).status_code == 400
    unknown = {**auth, "Mcp-Session-Id": "never-issued"}
    assert httpx2.delete(gateway.url, headers=unknown, timeout=30).status_code == 404
    opened = httpx2.post(gateway.url, json=INIT, headers=auth, timeout=30)
    session = {**auth, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
    assert httpx2.delete(gateway.url, headers=session, timeout=30).status_code == 200
    assert httpx2.delete(gateway.url, headers=session, timeout=30).status_code == 404


def test_a_restarted_gateway_resumes_the_session_mid_session(tmp_path: Path) -> None:
    write_config(tmp_path)
    gw = GatewayProcess(tmp_path, store=str(tmp_path / "store"))

    async def run() -> tuple[list[str], list[str], str, list[str]]:
        gw.start()
        try:
            async with client(gw.url) as session, client(gw.url) as spoiled:
                await session.call_tool("ToolSearch", {"select": ["ops__list_tickets"]})
                await spoiled.call_tool("ToolSearch", {"select": ["ops__get_service_health"]})
                before = names(await session.list_tools())
                gw.stop()
                for path in (tmp_path / "store").glob("*.json"):  # swap the other's tool
                    stored = path.read_text("utf-8")
                    if "ops__get_service_health" in stored:
                        swapped = stored.replace("ops__get_service_health", "ops__scale_service")
                        path.write_text(swapped, "utf-8")
                gw.start()  # the same port: the clients do not know it restarted
                after = names(await session.list_tools())
                ran = await session.call_tool("ops__list_tickets", {})
                fresh = names(await spoiled.list_tools())
                return before, after, text(ran), fresh
        finally:
            gw.stop()

    before, after, ran, fresh = asyncio.run(run())
    assert before == ["ToolSearch", "ops__list_tickets"]
    assert after == before
    assert "OPS-1001" in ran  # the loaded tool runs on the restarted gateway
    assert fresh == ["ToolSearch"]  # the tampered snapshot was refused: the session starts fresh
    assert any("stored snapshot refused" in line for line in gw.lines)


def test_a_client_that_initialises_after_an_upstream_came_back_finds_it_in_the_catalogue(
    tmp_path: Path,
) -> None:
    flaky = Path(__file__).resolve().parents[1] / "mcp_servers" / "flaky_server.py"
    gate = tmp_path / "gate"
    gate.write_text("down", "utf-8")  # the weather server exits at once while this exists
    args = [str(flaky), str(tmp_path / "pid"), str(gate)]
    servers = {"weather": {"command": sys.executable, "args": args}}
    fast = {"retryBase": 0.05, "retryCap": 0.3, "pingInterval": 1, "connectTimeout": 10}
    config = {"mcpServers": servers, "toolsurface": fast}
    (tmp_path / "mcp.json").write_text(json.dumps(config), "utf-8")
    (tmp_path / "policy.json").write_text("{}", "utf-8")

    async def instructions(gw: GatewayProcess) -> str:
        async with client(gw.url) as session:
            result = session.initialize_result
            return (result.instructions if result is not None else None) or ""

    async def run(gw: GatewayProcess) -> tuple[str, str]:
        before = await instructions(gw)
        gate.unlink()
        for _ in range(600):  # the gateway logs the upstream's return
            if any("upstream 'weather'" in line and "is back" in line for line in gw.lines):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the weather upstream never came back")
        return before, await instructions(gw)

    with GatewayProcess(tmp_path) as gw:
        before, after = asyncio.run(run(gw))
    assert "weather" not in before
    assert "weather" in after and "weather__get_weather_forecast" in after


def test_unsafe_or_broken_http_settings_are_refused_with_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config, _ = write_config(tmp_path)
    monkeypatch.delenv("GW_NO_SUCH_VAR", raising=False)

    def refused(*argv: str) -> str:
        assert main(["gateway", "--config", str(config), *argv]) == 2
        return capsys.readouterr().err

    err = refused("--http", "0.0.0.0:0")
    assert "not a loopback address" in err and "--token-env" in err
    err = refused("--http", "127.0.0.1:0", "--token-env", "GW_NO_SUCH_VAR")
    assert "--token-env GW_NO_SUCH_VAR: the environment variable is not set" in err
    err = refused("--http", "127.0.0.1:http")
    assert "--http 127.0.0.1:http: the port must be a number" in err
    err = refused("--store", "ftp://somewhere")
    assert "unknown scheme" in err


def test_memory_holds_at_most_max_sessions_and_the_store_keeps_the_rest() -> None:
    from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
    from toolsurface.gateway.sessions import Sessions
    from toolsurface.gateway.store import MemoryStore

    registry = ToolRegistry([tool_search_tool()])
    for verb in ("list", "create", "close"):
        registry.register(Tool(name=f"gh__{verb}_issue", description=f"{verb} an issue."))
    registry.declare_group("gh", prefix="gh__", load="lazy")
    sessions = Sessions(
        lambda sid: ToolSurface(registry, session_id=sid), MemoryStore(), capacity=2
    )

    async def run() -> tuple[int, tuple[str, ...], tuple[str, ...]]:
        ids = [await sessions.issue() for _ in range(3)]
        async with sessions.use(ids[0]) as surface:
            surface.tool_search({"select": ["gh__close_issue"]})
        for sid in ids[1:]:  # two more sessions push the first out of memory
            async with sessions.use(sid) as surface:
                surface.plan()
        held = len(sessions)
        async with sessions.use(ids[0]) as surface:  # back from the store
            first = surface.plan().names
        async with sessions.use(ids[1]) as surface:
            second = surface.plan().names
        return held, first, second

    held, first, second = asyncio.run(run())
    assert held == 2
    assert first == ("ToolSearch", "gh__close_issue")
    assert second == ("ToolSearch",)


def test_a_store_that_does_not_answer_is_a_503_not_a_crash() -> None:
    from toolsurface import ToolRegistry, ToolSurface, tool_search_tool
    from toolsurface.gateway.http import SessionsMiddleware
    from toolsurface.gateway.sessions import Sessions
    from toolsurface.gateway.store import StoreError

    class Down:
        shared = True

        def load(self, session_id: str) -> str | None:
            raise StoreError("store redis://db:6379/0: cannot read a session (timed out)")

        def save(self, session_id: str, snapshot: str) -> None:
            raise StoreError("store redis://db:6379/0: cannot write a session (timed out)")

        def delete(self, session_id: str) -> None:
            raise StoreError("store redis://db:6379/0: cannot delete a session (timed out)")

    async def never(scope: object, receive: object, send: object) -> None:
        raise AssertionError("the request reached the MCP app")

    registry = ToolRegistry([tool_search_tool()])
    sessions = Sessions(lambda sid: ToolSurface(registry, session_id=sid), Down())
    app = SessionsMiddleware(never, sessions)

    async def run() -> list[int]:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            opened = await http.post("/mcp", json=INIT, headers=ACCEPT)
            headers = {**ACCEPT, "Mcp-Session-Id": "abc"}
            used = await http.post("/mcp", json=INIT, headers=headers)
            return [opened.status_code, used.status_code]

    assert asyncio.run(run()) == [503, 503]


def test_a_delete_of_a_session_the_store_forgot_still_closes_its_stream_here() -> None:
    """An expired or evicted session is over: its DELETE is a 404, and the GET stream this
    process holds for it is closed all the same (nothing else would close it)."""
    from toolsurface import ToolRegistry, ToolSurface, tool_search_tool
    from toolsurface.gateway.http import SessionsMiddleware
    from toolsurface.gateway.sessions import Sessions
    from toolsurface.gateway.store.memory import MemoryStore

    closed: list[str] = []

    class Streams:
        def close(self, session_id: str) -> None:
            closed.append(session_id)

    async def never(scope: object, receive: object, send: object) -> None:
        raise AssertionError("the request reached the MCP app")

    registry = ToolRegistry([tool_search_tool()])
    sessions = Sessions(lambda sid: ToolSurface(registry, session_id=sid), MemoryStore())
    app = SessionsMiddleware(never, sessions, streams=Streams())  # type: ignore[arg-type]

    async def run() -> int:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            gone = {**ACCEPT, "Mcp-Session-Id": "expired-session"}
            return (await http.delete("/mcp", headers=gone)).status_code

    assert asyncio.run(run()) == 404
    assert closed == ["expired-session"]


def test_a_body_nested_too_deeply_to_read_is_no_initialize_and_no_answer() -> None:
    """Past the parser's recursion a body is refused as any unreadable one (a 400 without a
    session; the SDK's -32700 with one), not a 500 with a traceback in the log."""
    from toolsurface.gateway.http import _is_initialize, _parsed
    from toolsurface.gateway.streams import EventStreams

    deep = b"[" * 100_000 + b"]" * 100_000
    body = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":' + deep + b"}"
    assert _is_initialize(_parsed(body)) is False
    assert _is_initialize(_parsed(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}'))
    assert (
        EventStreams().answer("s1", b'{"jsonrpc":"2.0","id":"x","result":' + deep + b"}") is False
    )
