"""An HTTP gateway operated from outside (issue 40 item 5): health, metrics, client tokens, logs.

Real ``toolsurface gateway --http`` processes fronting the demo server; the MCP SDK's own
streamable-HTTP client makes the sessions, plain ``httpx2`` reads ``/healthz``, ``/readyz``
and ``/metrics``. What an operator checks: liveness and readiness say what they claim (an
upstream that never starts makes a gateway unready, naming it); the metrics count the
sessions, searches and calls a client made, by upstream; each client's token carries its
own policy, a tool it may not see is never shown to it nor callable, another client's
session is not its to use, and a change to the tokens file takes effect without a restart;
``--log-format json`` writes one JSON object a line, an access line for each request.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the gateway needs the mcp extra")
pytest.importorskip("uvicorn", reason="the HTTP gateway needs uvicorn (the mcp extra)")
import httpx2
from gateway_procs import INIT, GatewayProcess, client, names, text, write_config

#: Engine-agnostic (tests/conftest.py): run by the native suite where the core is built.
pytestmark = pytest.mark.engine_agnostic

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-fedcba9876543210"
LIST = "ops__list_tickets"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _base(gw: GatewayProcess) -> str:
    return f"http://127.0.0.1:{gw.port}"


def _metric(text_: str, name: str, **labels: str) -> float:
    """One sample's value from the Prometheus text format (0 when absent)."""
    for line in text_.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        match = re.fullmatch(r"([a-z_]+)(?:\{(.*)\})? (\S+)", line)
        assert match, line
        got = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(2) or ""))
        if match.group(1) == name and got == labels:
            return float(match.group(3))
    return 0.0


def _wait_ready(gw: GatewayProcess) -> httpx2.Response:
    deadline = time.monotonic() + 60
    while True:
        answer = httpx2.get(f"{_base(gw)}/readyz", timeout=30)
        if answer.status_code == 200 or time.monotonic() > deadline:
            return answer
        time.sleep(0.1)


def test_health_readiness_and_metrics_count_what_a_client_did(tmp_path: Path) -> None:
    write_config(tmp_path)
    env = {"GW_TOKEN": "a-static-token-of-16+"}
    gw = GatewayProcess(tmp_path, store=str(tmp_path / "store"), env=env)
    gw.extra = ["--token-env", "GW_TOKEN"]
    with gw:
        health = httpx2.get(f"{_base(gw)}/healthz", timeout=30)
        assert (health.status_code, health.json()) == (200, {"status": "ok"})
        ready = _wait_ready(gw)
        assert ready.status_code == 200, ready.text
        # Without the token: ready, and the store's state, but no upstream named.
        assert ready.json() == {"ready": True, "store": "ok", "upstreams": {}}
        auth = {"Authorization": f"Bearer {env['GW_TOKEN']}"}
        named = httpx2.get(f"{_base(gw)}/readyz", headers=auth, timeout=30).json()
        assert named["upstreams"]["ops"] == "up"
        refused = httpx2.get(f"{_base(gw)}/healthz", headers={"Host": "evil.example"}, timeout=30)
        assert refused.status_code == 421  # the Host door holds for these paths too
        assert httpx2.get(f"{_base(gw)}/metrics", timeout=30).status_code == 401

        async def run() -> None:
            async with client(gw.url, token=env["GW_TOKEN"]) as session:
                await session.call_tool("ToolSearch", {"query": "list the open tickets"})
                await session.call_tool("ToolSearch", {"select": [LIST]})
                assert "OPS-1001" in text(await session.call_tool(LIST, {}))

        asyncio.run(run())
        auth = {"Authorization": f"Bearer {env['GW_TOKEN']}"}
        answer = httpx2.get(f"{_base(gw)}/metrics", headers=auth, timeout=30)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    got = answer.text
    assert _metric(got, "toolsurface_gateway_sessions_opened_total") == 1
    assert _metric(got, "toolsurface_gateway_searches_total") == 2
    assert _metric(got, "toolsurface_gateway_calls_total", upstream="ops", outcome="ok") == 1
    assert _metric(got, "toolsurface_gateway_call_seconds_count", upstream="ops") == 1
    assert _metric(got, "toolsurface_gateway_call_seconds_bucket", upstream="ops", le="+Inf") == 1
    assert _metric(got, "toolsurface_gateway_upstream_up", upstream="ops") == 1
    assert _metric(got, "toolsurface_gateway_http_requests_total", code="200") >= 4
    assert _metric(got, "toolsurface_gateway_errors_total", kind="auth") == 1


def test_a_gateway_whose_upstreams_are_all_down_is_live_but_not_ready(tmp_path: Path) -> None:
    write_config(tmp_path)
    broken = {"mcpServers": {"gone": {"command": sys.executable, "args": ["-c", "pass"]}}}
    (tmp_path / "mcp.json").write_text(json.dumps(broken), "utf-8")
    (tmp_path / "policy.json").write_text("{}", "utf-8")  # its sections name servers not here
    with GatewayProcess(tmp_path) as gw:
        assert httpx2.get(f"{_base(gw)}/healthz", timeout=30).status_code == 200
        ready = httpx2.get(f"{_base(gw)}/readyz", timeout=30)
    assert ready.status_code == 503
    assert ready.json() == {"ready": False, "store": "ok", "upstreams": {"gone": "down"}}


def _clients(path: Path, data: dict[str, Any]) -> None:
    """Write the tokens file, its modification time moved on past any coarse clock."""
    path.write_text(json.dumps({"clients": data}), "utf-8")
    later = time.time() + 5 + len(data)
    os.utime(path, (later, later))


def test_each_client_token_carries_its_own_policy_and_the_file_reloads_live(
    tmp_path: Path,
) -> None:
    write_config(tmp_path)
    tokens = tmp_path / "clients.json"
    bob_sha = hashlib.sha256(BOB.encode()).hexdigest()
    _clients(
        tokens,
        {
            "alice": {"token": ALICE, "upstreams": ["ops"], "deny": [LIST]},
            "bob": {"tokenSha256": bob_sha, "allow": ["ops__list_*"]},
        },
    )
    gw = GatewayProcess(tmp_path, store=str(tmp_path / "store"))
    gw.extra = ["--clients", str(tokens)]
    with gw:
        for token in (None, "wrong-token-0123456789"):
            headers = {**ACCEPT, **({"Authorization": f"Bearer {token}"} if token else {})}
            refused = httpx2.post(gw.url, json=INIT, headers=headers, timeout=30)
            assert refused.status_code == 401
        assert list((tmp_path / "store").glob("session-*")) == []  # nothing opened

        async def run() -> dict[str, Any]:
            seen: dict[str, Any] = {}
            async with client(gw.url, token=ALICE) as alice, client(gw.url, token=BOB) as bob:
                found = text(await alice.call_tool("ToolSearch", {"query": "list tickets"}))
                seen["alice_found"] = found
                picked = await alice.call_tool("ToolSearch", {"select": [LIST]})
                seen["alice_select"] = (picked.is_error, text(picked))
                called = await alice.call_tool(LIST, {})
                seen["alice_call"] = (called.is_error, text(called))
                seen["alice_tools"] = names(await alice.list_tools())
                await bob.call_tool("ToolSearch", {"select": [LIST]})
                seen["bob_call"] = text(await bob.call_tool(LIST, {}))
                restart = await bob.call_tool("ToolSearch", {"query": "restart a service"})
                seen["bob_restart"] = text(restart)
                # A session Alice opens: Bob's token on it finds nothing.
                opened = httpx2.post(
                    gw.url,
                    json=INIT,
                    headers={**ACCEPT, "Authorization": f"Bearer {ALICE}"},
                    timeout=30,
                )
                alice_id = opened.headers["mcp-session-id"]
                seen["alice_instructions"] = opened.text  # the catalogue block, for her
                stolen = httpx2.post(
                    gw.url,
                    json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"},
                    headers={
                        **ACCEPT,
                        "Authorization": f"Bearer {BOB}",
                        "Mcp-Session-Id": alice_id,
                    },
                    timeout=30,
                )
                seen["stolen"] = stolen.status_code
                # The file changes: Bob is gone, Alice may now list tickets.
                _clients(tokens, {"alice": {"token": ALICE, "upstreams": ["ops"]}})
                time.sleep(1.2)  # past the second between two looks at the file
                again = await alice.call_tool("ToolSearch", {"select": [LIST]})
                seen["alice_after"] = (again.is_error, text(again))
                seen["alice_call_after"] = text(await alice.call_tool(LIST, {}))
            gone = httpx2.post(
                gw.url, json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {BOB}"}, timeout=30
            )
            seen["bob_after"] = gone.status_code
            tokens.write_text("{not json", "utf-8")  # a broken file keeps the clients read before
            later = time.time() + 60
            os.utime(tokens, (later, later))
            time.sleep(1.2)
            async with client(gw.url, token=ALICE) as alice:
                seen["alice_kept"] = names(await alice.list_tools())
            return seen

        seen = asyncio.run(run())
    # Alice's policy: the tool is never found nor listed, and reads as unknown when named.
    assert LIST not in seen["alice_found"] and LIST not in seen["alice_tools"]
    assert "list_tickets" not in seen["alice_instructions"]
    assert seen["alice_select"][1].startswith(f"Unknown tool {LIST!r}")
    assert seen["alice_call"][0] and seen["alice_call"][1].startswith(f"Unknown tool {LIST!r}")
    assert "OPS-1001" in seen["bob_call"]
    assert "ops__restart_service" not in seen["bob_restart"]  # bob sees list tools only
    assert seen["stolen"] == 404
    assert seen["alice_after"][0] is False and "OPS-1001" in seen["alice_call_after"]
    assert seen["bob_after"] == 401
    assert seen["alice_kept"] == ["ToolSearch"]
    logged = "\n".join(gw.lines)
    assert "clients" in logged and "keeping the clients read before" in logged
    assert ALICE not in logged and BOB not in logged


def test_json_logs_are_one_object_a_line_with_an_access_line_per_request(tmp_path: Path) -> None:
    write_config(tmp_path)
    gw = GatewayProcess(tmp_path)
    gw.extra = ["--log-format", "json"]
    with gw:
        httpx2.get(f"{_base(gw)}/healthz", timeout=30)
        httpx2.post(gw.url, json=INIT, headers=ACCEPT, timeout=30)
        deadline = time.monotonic() + 30
        while sum('"path": "/mcp"' in line for line in gw.lines) < 1:
            assert time.monotonic() < deadline, gw.lines
            time.sleep(0.05)
    objects = [json.loads(line) for line in gw.lines if line.startswith("{")]
    assert objects and all({"time", "level", "logger", "message"} <= set(o) for o in objects)
    access = [o for o in objects if o["logger"] == "toolsurface.gateway.access"]
    paths = {(o["method"], o["path"], o["status"]) for o in access}
    assert ("GET", "/healthz", 200) in paths and ("POST", "/mcp", 200) in paths
    assert all(isinstance(o["ms"], float) for o in access)


def test_a_session_in_use_keeps_its_client_binding_past_the_store_ttl(tmp_path: Path) -> None:
    """The binding is written again as the session is used, so a TTL never orphans it."""
    from toolsurface.gateway.clients import ClientTokens
    from toolsurface.gateway.http import HostCheck
    from toolsurface.gateway.metrics import GatewayMetrics
    from toolsurface.gateway.ops import OpsMiddleware
    from toolsurface.gateway.store import MemoryStore

    tokens = tmp_path / "clients.json"
    _clients(tokens, {"alice": {"token": ALICE}, "bob": {"token": BOB}})

    class Gateway:
        store = MemoryStore(ttl=0.6)
        metrics = GatewayMetrics()

        class sessions:  # noqa: N801 - the attribute the middleware reads
            @staticmethod
            def forget_held() -> None: ...

            def __len__(self) -> int:
                return 0

            @staticmethod
            def follow_writes(follow: Any) -> None: ...

        def upstream_states(self) -> dict[str, bool]:
            return {}

    async def mcp(scope: Any, receive: Any, send: Any) -> None:
        """Stands for the session middleware: an initialize opens session "s1"."""
        opened = not any(k == b"mcp-session-id" for k, _ in scope["headers"])
        head = [(b"mcp-session-id", b"s1")] if opened else []
        await send({"type": "http.response.start", "status": 200, "headers": head})
        await send({"type": "http.response.body", "body": b"{}"})

    gateway = Gateway()

    def process() -> OpsMiddleware:
        """A gateway process's middleware: its own memory, the shared store."""
        return OpsMiddleware(
            mcp, gateway, hosts=HostCheck("127.0.0.1"), clients=ClientTokens(tokens)
        )

    async def run() -> list[int]:
        codes = []
        transport = httpx2.ASGITransport(app=process())
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            alice = {"Authorization": f"Bearer {ALICE}"}
            codes.append((await http.post("/mcp", json=INIT, headers=alice)).status_code)
            for _ in range(4):  # 1.6 s of use, past the 0.6 s TTL twice over
                await asyncio.sleep(0.4)
                used = await http.post("/mcp", json={}, headers={**alice, "Mcp-Session-Id": "s1"})
                codes.append(used.status_code)
        # Another process, which knows the binding only from the store.
        transport = httpx2.ASGITransport(app=process())
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            for token in (ALICE, BOB):
                headers = {"Authorization": f"Bearer {token}", "Mcp-Session-Id": "s1"}
                codes.append((await http.post("/mcp", json={}, headers=headers)).status_code)
        return codes

    assert asyncio.run(run()) == [200, 200, 200, 200, 200, 200, 404]


def test_an_ended_session_leaves_nothing_in_the_store_not_even_its_client(
    tmp_path: Path,
) -> None:
    # With a tokens file a session is bound to its client in the store: ending the session
    # ends the binding too (it held a store entry, counted against the store's cap, for good).
    write_config(tmp_path)
    tokens = tmp_path / "clients.json"
    _clients(tokens, {"alice": {"token": ALICE}})
    store = tmp_path / "store"
    gw = GatewayProcess(tmp_path, store=str(store))
    gw.extra = ["--clients", str(tokens)]
    with gw:
        auth = {**ACCEPT, "Authorization": f"Bearer {ALICE}"}
        opened = httpx2.post(gw.url, json=INIT, headers=auth, timeout=30)
        session = opened.headers["mcp-session-id"]
        assert len(list(store.glob("session-*.json"))) == 2  # the snapshot and the binding
        ended = httpx2.delete(gw.url, headers={**auth, "Mcp-Session-Id": session}, timeout=30)
        assert ended.status_code == 200
        assert list(store.glob("session-*.json")) == []
        listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        again = httpx2.post(
            gw.url, json=listed, headers={**auth, "Mcp-Session-Id": session}, timeout=30
        )
        assert again.status_code == 404


def test_a_store_over_its_cap_drops_a_live_session_no_sooner_than_its_client(
    tmp_path: Path,
) -> None:
    """A session bound to its client keeps two store entries, its snapshot and the binding,
    and a store over its cap drops the least recently written first. The binding was
    written once, when the session opened: a session whose snapshot was written since (a
    tool loaded) lost its binding before its snapshot, and a second gateway process, which
    reads the binding from the store, refused the live session with 404. The binding is
    now written again after the snapshot, so the two go together."""
    write_config(tmp_path)
    tokens = tmp_path / "clients.json"
    _clients(tokens, {"alice": {"token": ALICE}, "bob": {"token": BOB}})
    store = tmp_path / "store"
    flags = ["--clients", str(tokens), "--store-max-sessions", "5"]
    alice = {**ACCEPT, "Authorization": f"Bearer {ALICE}"}
    bob = {**ACCEPT, "Authorization": f"Bearer {BOB}"}

    def post(gw: GatewayProcess, message: dict[str, Any], headers: dict[str, str]) -> Any:
        time.sleep(0.05)  # apart on the store's clock, which orders its entries
        return httpx2.post(gw.url, json=message, headers=headers, timeout=30)

    with GatewayProcess(tmp_path, store=str(store), extra=flags) as first:
        opened = post(first, INIT, alice)
        session = {**alice, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert post(first, done, session).status_code == 202
        assert post(first, INIT, bob).status_code == 200  # four entries: two sessions
        select = {"name": "ToolSearch", "arguments": {"select": [LIST]}}
        loaded = post(
            first, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": select}, session
        )
        assert loaded.status_code == 200 and LIST in loaded.text
        assert post(first, INIT, bob).status_code == 200  # six: the store drops one
        assert len(list(store.glob("session-*.json"))) == 5
    with GatewayProcess(tmp_path, store=str(store), extra=flags) as second:
        listed = post(second, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, session)
    assert listed.status_code == 200, listed.text
    assert LIST in listed.text  # the session's loaded tool, resumed from its snapshot
