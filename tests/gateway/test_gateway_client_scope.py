"""A client's token scopes everything it meets through the gateway, not only its tools.

Real ``toolsurface gateway --http --clients FILE`` processes fronting real upstreams (the
project's ``library_server.py`` twice, as ``library`` and ``vault``; ``flaky_server.py``,
killed and brought back); the clients are the MCP SDK's own streamable-HTTP client. Alice's
token admits the ``library`` upstream only, Bob's every upstream. Each door is attacked
through Alice, with Bob as the control that shows the thing is there to be leaked:

- listings (resources, templates, prompts) never name ``vault``'s;
- a read, a ``prompts/get``, a completion or a subscription of ``vault``'s answers exactly
  what one of an upstream nobody offers answers;
- the GET stream carries no news of an upstream she does not see, and news that re-plans
  her session (an upstream going and coming back) never opens another upstream's tools
  to her ToolSearch;
- a resource update reaches her no more once the tokens file takes the upstream from her;
- ``/metrics`` and ``/readyz`` name no upstream her token does not see.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the gateway needs the mcp extra")
pytest.importorskip("uvicorn", reason="the HTTP gateway needs uvicorn (the mcp extra)")
import httpx2
from gateway_procs import GatewayProcess
from mcp import ClientSession, MCPError, types
from mcp.client.streamable_http import streamable_http_client

#: Engine-agnostic (tests/conftest.py): run by the native suite where the core is built.
pytestmark = pytest.mark.engine_agnostic

SERVERS = Path(__file__).resolve().parents[1] / "mcp_servers"
LIBRARY = SERVERS / "library_server.py"
FLAKY = SERVERS / "flaky_server.py"
ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-fedcba9876543210"
TIMEOUT = 60.0
RESOURCES_CHANGED = "notifications/resources/list_changed"
PROMPTS_CHANGED = "notifications/prompts/list_changed"
UPDATED = "notifications/resources/updated"
TOOLS_CHANGED = "notifications/tools/list_changed"


def _clients(path: Path, data: dict[str, Any]) -> None:
    """Write the tokens file, its modification time moved on past any coarse clock."""
    path.write_text(json.dumps({"clients": data}), "utf-8")
    later = time.time() + 5 + len(data) + len(json.dumps(data))
    os.utime(path, (later, later))


def _setup(tmp: Path, servers: dict[str, Any], fast: bool = False) -> GatewayProcess:
    config: dict[str, Any] = {"mcpServers": servers}
    if fast:
        config["toolsurface"] = {
            "retryBase": 0.05,
            "retryCap": 0.3,
            "pingInterval": 1,
            "connectTimeout": 10,
        }
    (tmp / "mcp.json").write_text(json.dumps(config), "utf-8")
    (tmp / "policy.json").write_text("{}", "utf-8")
    tokens = tmp / "clients.json"
    _clients(tokens, {"alice": {"token": ALICE, "upstreams": ["library"]}, "bob": {"token": BOB}})
    return GatewayProcess(tmp, extra=["--clients", str(tokens)])


def _library_and_vault() -> dict[str, Any]:
    return {
        "library": {"command": sys.executable, "args": [str(LIBRARY)]},
        "vault": {"command": sys.executable, "args": [str(LIBRARY)]},
    }


class _Heard:
    """A client message handler keeping every notification's method (and updated URIs)."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self.uris: list[str] = []

    async def __call__(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str):
            self.methods.append(method)
        if isinstance(message, types.ResourceUpdatedNotification):
            self.uris.append(message.params.uri)

    async def wait_for(self, method: str, count: int) -> None:
        while self.methods.count(method) < count:
            await asyncio.sleep(0.05)


@asynccontextmanager
async def _client(url: str, token: str, heard: _Heard | None = None) -> AsyncIterator[Any]:
    timeout = httpx2.Timeout(30.0, read=60.0)
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, message_handler=heard) as session,
    ):
        await asyncio.wait_for(session.initialize(), TIMEOUT)
        yield session


async def _error(call: Any) -> str:
    """The message of the MCP error a request answers (it must fail)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # resources/subscribe is 2025-era: still served
        with pytest.raises(MCPError) as refused:
            await call
    return refused.value.message


async def _doors(session: Any, upstream: str) -> dict[str, Any]:
    """What a session meets of ``upstream``'s resources, templates, prompts and completions."""
    seen: dict[str, Any] = {
        "resources": [r.uri for r in (await session.list_resources()).resources],
        "templates": [
            t.uri_template for t in (await session.list_resource_templates()).resource_templates
        ],
        "prompts": [p.name for p in (await session.list_prompts()).prompts],
    }
    memo, template, prompt = (
        f"{upstream}+memo://insights",
        f"{upstream}+note://{{name}}",
        (f"{upstream}__mcp-demo"),
    )
    try:
        seen["read"] = (await session.read_resource(memo)).contents[0].text
    except MCPError as exc:
        seen["read"] = exc.message.replace(upstream, "UPSTREAM")
    try:
        got = await session.get_prompt(prompt, {"topic": "dns"})
        seen["prompt"] = got.messages[0].content.text
    except MCPError as exc:
        seen["prompt"] = exc.message.replace(upstream, "UPSTREAM")
    try:
        ref = types.PromptReference(type="ref/prompt", name=prompt)
        seen["complete"] = (
            await session.complete(ref, {"name": "topic", "value": "d"})
        ).completion.values
    except MCPError as exc:
        seen["complete"] = exc.message.replace(upstream, "UPSTREAM")
    try:
        tref = types.ResourceTemplateReference(type="ref/resource", uri=template)
        done = await session.complete(tref, {"name": "name", "value": "b"})
        seen["complete_template"] = done.completion.values
    except MCPError as exc:
        seen["complete_template"] = exc.message.replace(upstream, "UPSTREAM")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await session.subscribe_resource(memo)
        seen["subscribe"] = "subscribed"
    except MCPError as exc:
        seen["subscribe"] = exc.message.replace(upstream, "UPSTREAM")
    return seen


def test_an_upstream_a_token_does_not_admit_is_never_listed_read_got_or_completed(
    tmp_path: Path,
) -> None:
    async def run(url: str) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        async with _client(url, ALICE) as alice, _client(url, BOB) as bob:
            out["bob_vault"] = await _doors(bob, "vault")
            out["alice_vault"] = await _doors(alice, "vault")
            out["alice_nowhere"] = await _doors(alice, "nowhere")
            out["alice_library"] = await _doors(alice, "library")
        return out

    with _setup(tmp_path, _library_and_vault()) as gateway:
        seen = asyncio.run(run(gateway.url))
    bob, alice, nowhere = seen["bob_vault"], seen["alice_vault"], seen["alice_nowhere"]
    # The control: Bob meets vault's things, so there is something for Alice to be shown.
    assert "vault+memo://insights" in bob["resources"]
    assert "vault+note://{name}" in bob["templates"]
    assert "vault__mcp-demo" in bob["prompts"]
    assert bob["read"] == "No insights yet." and bob["prompt"] == "Let us explore dns."
    assert bob["complete"] == ["databases", "deployments", "dns"]
    assert bob["complete_template"] == ["beta", "bravo"] and bob["subscribe"] == "subscribed"
    # Alice: listed nowhere, and each request answers what a name nobody offers answers.
    for listing in ("resources", "templates", "prompts"):
        assert not any("vault" in item for item in alice[listing]), alice[listing]
        assert alice[listing] == seen["alice_library"][listing]
    for door in ("read", "prompt", "complete", "complete_template", "subscribe"):
        assert alice[door] == nowhere[door], door
        assert isinstance(alice[door], str) and "UPSTREAM" in alice[door], door
    # Her own upstream still answers her in full.
    assert seen["alice_library"]["read"] == "No insights yet."
    assert seen["alice_library"]["subscribe"] == "subscribed"


def test_the_get_stream_carries_no_news_of_an_upstream_the_token_does_not_admit(
    tmp_path: Path,
) -> None:
    gate, pidfile = tmp_path / "gate", tmp_path / "pid"
    servers = {
        "weather": {"command": sys.executable, "args": [str(FLAKY), str(pidfile), str(gate)]},
        "library": {"command": sys.executable, "args": [str(LIBRARY)]},
    }

    async def run(url: str) -> dict[str, Any]:
        alice_heard, bob_heard = _Heard(), _Heard()
        async with (
            _client(url, ALICE, alice_heard) as alice,
            _client(url, BOB, bob_heard) as bob,
        ):
            await alice.call_tool("ToolSearch", {"select": ["library__update_memo"]})
            await alice.list_tools()
            await bob.call_tool("ToolSearch", {"select": ["weather__get_weather_forecast"]})
            await bob.list_tools()
            alice_before = list(alice_heard.methods)
            bob_tools = bob_heard.methods.count(TOOLS_CHANGED)  # the load's own, on its response
            gate.write_text("down", "utf-8")
            os.kill(int(pidfile.read_text("utf-8")), signal.SIGKILL)
            # Bob hears of weather going, on his GET stream (the control).
            await asyncio.wait_for(bob_heard.wait_for(RESOURCES_CHANGED, 1), TIMEOUT)
            gate.unlink()
            await asyncio.wait_for(bob_heard.wait_for(RESOURCES_CHANGED, 2), TIMEOUT)
            await asyncio.wait_for(bob_heard.wait_for(TOOLS_CHANGED, bob_tools + 2), TIMEOUT)
            await asyncio.sleep(1.0)  # anything sent to Alice with it has arrived by now
            found = await alice.call_tool("ToolSearch", {"query": "weather forecast for a city"})
            picked = await alice.call_tool(
                "ToolSearch", {"select": ["weather__get_weather_forecast"]}
            )
            called = await alice.call_tool("weather__get_weather_forecast", {"city": "Oslo"})
            return {
                "alice_new": alice_heard.methods[len(alice_before) :],
                "bob": bob_heard.methods,
                "found": "\n".join(c.text for c in found.content),
                "picked": "\n".join(c.text for c in picked.content),
                "called": (called.is_error, "\n".join(c.text for c in called.content)),
                "tools": [t.name for t in (await alice.list_tools()).tools],
            }

    with _setup(tmp_path, servers, fast=True) as gateway:
        seen = asyncio.run(run(gateway.url))
    assert seen["bob"].count(RESOURCES_CHANGED) >= 2 and PROMPTS_CHANGED in seen["bob"]
    # Her session was planned again for the news: still under her token's policy.
    assert "weather__" not in seen["found"]
    assert seen["picked"].startswith("Unknown tool 'weather__get_weather_forecast'")
    assert seen["called"][0] and "Forecast" not in seen["called"][1]
    assert seen["tools"] == ["ToolSearch", "library__update_memo"]
    # Weather went and came back: Alice's lists did not move, and she was told nothing.
    assert seen["alice_new"] == []


def test_a_resource_update_stops_reaching_a_client_the_tokens_file_narrowed(
    tmp_path: Path,
) -> None:
    tokens = tmp_path / "clients.json"

    async def run(url: str) -> tuple[list[str], list[str], list[str]]:
        alice_heard, bob_heard = _Heard(), _Heard()
        async with (
            _client(url, ALICE, alice_heard) as alice,
            _client(url, BOB, bob_heard) as bob,
        ):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await alice.subscribe_resource("library+memo://insights")
                await bob.subscribe_resource("library+memo://insights")
            await bob.call_tool("ToolSearch", {"select": ["library__update_memo"]})
            await bob.call_tool("library__update_memo", {})
            await asyncio.wait_for(alice_heard.wait_for(UPDATED, 1), TIMEOUT)
            await asyncio.wait_for(bob_heard.wait_for(UPDATED, 1), TIMEOUT)
            # The file now gives Alice the vault only.
            _clients(
                tokens, {"alice": {"token": ALICE, "upstreams": ["vault"]}, "bob": {"token": BOB}}
            )
            await asyncio.sleep(1.2)  # past the second between two looks at the file
            await bob.call_tool("library__update_memo", {})
            await asyncio.wait_for(bob_heard.wait_for(UPDATED, 2), TIMEOUT)
            await asyncio.sleep(1.0)
            listed = [r.uri for r in (await alice.list_resources()).resources]
        return alice_heard.uris, bob_heard.uris, listed

    with _setup(tmp_path, _library_and_vault()) as gateway:
        alice_uris, bob_uris, listed = asyncio.run(run(gateway.url))
    assert bob_uris == ["library+memo://insights"] * 2
    assert alice_uris == ["library+memo://insights"]  # the first only: then not hers
    assert listed and all(uri.startswith("vault+") for uri in listed)


def test_metrics_and_readiness_name_only_the_upstreams_a_token_admits(tmp_path: Path) -> None:
    async def run(url: str) -> None:
        async with _client(url, ALICE) as alice, _client(url, BOB) as bob:
            await alice.read_resource("library+memo://insights")
            await bob.read_resource("vault+memo://insights")
            await alice.call_tool("ToolSearch", {"select": ["library__update_memo"]})
            await alice.call_tool("library__update_memo", {})
            await bob.call_tool("ToolSearch", {"select": ["vault__update_memo"]})
            await bob.call_tool("vault__update_memo", {})

    with _setup(tmp_path, _library_and_vault()) as gateway:
        asyncio.run(run(gateway.url))
        base = f"http://127.0.0.1:{gateway.port}"

        def get(path: str, token: str | None) -> httpx2.Response:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            return httpx2.get(f"{base}{path}", headers=headers, timeout=30)

        alice_metrics, bob_metrics = get("/metrics", ALICE).text, get("/metrics", BOB).text
        nobody_metrics = get("/metrics", None)
        ready = {
            who: get("/readyz", token).json()
            for who, token in (("alice", ALICE), ("bob", BOB), ("nobody", None))
        }
    # Bob, who sees both, finds both counted: the forwarded reads and the calls, by upstream.
    for upstream in ("library", "vault"):
        assert f'toolsurface_gateway_upstream_up{{upstream="{upstream}"}} 1' in bob_metrics
        assert (
            f'toolsurface_gateway_forwarded_total{{upstream="{upstream}",'
            'method="resources/read",outcome="ok"} 1'
        ) in bob_metrics
        assert f'toolsurface_gateway_calls_total{{upstream="{upstream}",outcome="ok"}} 1' in (
            bob_metrics
        )
    assert 'upstream="library"' in alice_metrics
    assert "vault" not in alice_metrics
    assert nobody_metrics.status_code == 401
    assert ready["bob"]["upstreams"] == {"library": "up", "vault": "up"}
    assert ready["alice"]["upstreams"] == {"library": "up"}
    # Without a token: ready or not, but no upstream named.
    assert ready["nobody"]["ready"] is True and ready["nobody"]["upstreams"] == {}


def test_an_upstream_whose_every_tool_a_client_is_denied_is_not_named_to_it(
    tmp_path: Path,
) -> None:
    # Carol's token lists no upstreams, but her policy denies every tool of ``payroll`` (a
    # server of tools only): the name of that upstream is as much hers to learn as its tools'.
    # Bob, with no policy, is the control: the upstream is there to be named.
    demo = SERVERS / "demo_server.py"
    servers = {
        "library": {"command": sys.executable, "args": [str(LIBRARY)]},
        "payroll": {"command": sys.executable, "args": [str(demo)]},
    }
    gateway = _setup(tmp_path, servers)
    carol = "carol-token-00112233445566778899"
    _clients(
        tmp_path / "clients.json",
        {
            "carol": {"token": carol, "servers": {"payroll": {"deny": ["*"]}}},
            "bob": {"token": BOB},
        },
    )
    with gateway:
        base = f"http://127.0.0.1:{gateway.port}"

        def get(path: str, token: str) -> httpx2.Response:
            return httpx2.get(f"{base}{path}", headers={"Authorization": f"Bearer {token}"})

        carol_ready, bob_ready = get("/readyz", carol).json(), get("/readyz", BOB).json()
        carol_metrics, bob_metrics = get("/metrics", carol).text, get("/metrics", BOB).text
    assert bob_ready["upstreams"] == {"library": "up", "payroll": "up"}
    assert 'upstream="payroll"' in bob_metrics
    assert carol_ready["upstreams"] == {"library": "up"}
    assert carol_ready["ready"] is True
    assert "payroll" not in carol_metrics and 'upstream="library"' in carol_metrics
