"""The gateway as a whole MCP proxy (issue 40): resources, templates, prompts, completions.

Each test lists an upstream directly with the MCP SDK's own client, then through a real
``toolsurface gateway`` process, and compares: every resource, template and prompt the
upstream offers is there, named for its upstream (``library+memo://insights``,
``library__mcp-demo``), and reads, gets and completes alike. The upstreams are the
project's ``library_server.py`` (the lowlevel SDK server with everything beside tools)
and ``mcp-server-fetch`` from PyPI (its ``fetch`` prompt). A second copy of the library,
``vault``, is denied by the policy: none of its names is ever listed, and reading it
answers exactly what reading a name nobody offers answers.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

import toolsurface

mcp = pytest.importorskip("mcp", reason="the gateway needs the mcp extra")
import httpx2  # noqa: E402
from gateway_procs import GatewayProcess  # noqa: E402
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client, types  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

#: Engine-agnostic (tests/conftest.py): run by the native suite where the core is built.
pytestmark = pytest.mark.engine_agnostic

PACKAGE_PARENT = Path(toolsurface.__file__).resolve().parent.parent
LIBRARY = Path(__file__).resolve().parents[1] / "mcp_servers" / "library_server.py"
TIMEOUT = 60.0
FETCH = ["-m", "mcp_server_fetch"]


def _config(tmp: Path) -> None:
    servers: dict[str, Any] = {
        "library": {"command": sys.executable, "args": [str(LIBRARY)]},
        "vault": {"command": sys.executable, "args": [str(LIBRARY)]},
        "fetch": {"command": sys.executable, "args": FETCH},
    }
    (tmp / "mcp.json").write_text(json.dumps({"mcpServers": servers}), "utf-8")
    (tmp / "policy.json").write_text(json.dumps({"deny": ["vault__*"]}), "utf-8")


@asynccontextmanager
async def _session(command: str, args: list[str], handler: Any = None) -> AsyncIterator[Any]:
    # A child on this interpreter (the gateway) imports the toolsurface this test imported (a
    # checkout or a wheel); one on another (mcp-server-sqlite's, with mcp 1.x) keeps its own
    # packages: the wheel's site-packages on its path would give it this test's mcp 2.x.
    env = dict(os.environ)
    if command == sys.executable:
        env["PYTHONPATH"] = str(PACKAGE_PARENT)
    params = StdioServerParameters(command=command, args=args, env=env)
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
        async with (
            stdio_client(params, errlog=log) as (read, write),
            ClientSession(read, write, message_handler=handler) as session,
        ):
            await asyncio.wait_for(session.initialize(), TIMEOUT)
            yield session


def _gateway(tmp: Path, handler: Any = None) -> Any:
    args = ["-m", "toolsurface.cli", "gateway", "--config", str(tmp / "mcp.json")]
    args += ["--policy", str(tmp / "policy.json")]
    return _session(sys.executable, args, handler)


def _dump(model: Any) -> dict[str, Any]:
    data: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return data


def _resources(listed: Any) -> dict[str, dict[str, Any]]:
    return {r.uri: _dump(r) for r in listed.resources}


def test_resources_and_templates_are_those_of_the_upstream_named_for_it(tmp_path: Path) -> None:
    _config(tmp_path)

    async def run() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with _session(sys.executable, [str(LIBRARY)]) as direct:
            seen["resources"] = _resources(await direct.list_resources())
            seen["templates"] = [
                _dump(t) for t in (await direct.list_resource_templates()).resource_templates
            ]
            seen["reads"] = {
                uri: _dump(await direct.read_resource(uri))
                for uri in [*seen["resources"], "note://alpha"]
            }
        async with _gateway(tmp_path) as gateway:
            seen["g_resources"] = _resources(await gateway.list_resources())
            listed = await gateway.list_resource_templates()
            seen["g_templates"] = [_dump(t) for t in listed.resource_templates]
            seen["g_reads"] = {
                uri: _dump(await gateway.read_resource(uri))
                for uri in [*seen["g_resources"], "library+note://alpha"]
            }
            seen["caps"] = gateway.server_capabilities
            errors = {}
            for uri in ["vault+memo://insights", "nowhere+memo://insights", "memo://insights"]:
                with pytest.raises(MCPError) as caught:
                    await gateway.read_resource(uri)
                errors[uri] = (caught.value.code, caught.value.message.replace(uri, "URI"))
            seen["errors"] = errors
        return seen

    seen = asyncio.run(run())
    direct = seen["resources"]
    assert len(direct) == 2
    # Every resource the upstream lists, under its prefixed URI, otherwise unchanged.
    assert seen["g_resources"] == {
        f"library+{uri}": {**item, "uri": f"library+{uri}"} for uri, item in direct.items()
    }
    assert seen["g_templates"] == [
        {**t, "uriTemplate": f"library+{t['uriTemplate']}"} for t in seen["templates"]
    ]
    # Read as listed, and a template expanded as listed: the upstream's contents.
    for uri, read in seen["reads"].items():
        through = seen["g_reads"][f"library+{uri}"]
        assert through["contents"] == [
            {**c, "uri": f"library+{c['uri']}"} for c in read["contents"]
        ]
    # The denied upstream is never named, and reading it is reading nothing.
    assert not any("vault" in uri for uri in seen["g_resources"])
    assert not any("vault" in t["uriTemplate"] for t in seen["g_templates"])
    errors = seen["errors"]
    assert errors["vault+memo://insights"] == errors["nowhere+memo://insights"]
    assert errors["vault+memo://insights"] == errors["memo://insights"]
    assert errors["memo://insights"][0] == -32002
    caps = seen["caps"]
    assert caps.resources is not None and caps.resources.subscribe
    assert caps.prompts is not None and caps.completions is not None


def test_prompts_and_completions_are_those_of_each_upstream(tmp_path: Path) -> None:
    _config(tmp_path)

    async def run() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with _session(sys.executable, [str(LIBRARY)]) as direct:
            seen["library"] = [_dump(p) for p in (await direct.list_prompts()).prompts]
            got = await direct.get_prompt("mcp-demo", {"topic": "databases"})
            seen["get"] = _dump(got)
            ref = types.PromptReference(name="mcp-demo")
            seen["complete"] = _dump(await direct.complete(ref, {"name": "topic", "value": "d"}))
            tref = types.ResourceTemplateReference(uri="note://{name}")
            seen["tcomplete"] = _dump(await direct.complete(tref, {"name": "name", "value": "b"}))
        async with _session(sys.executable, FETCH) as direct:
            seen["fetch"] = [_dump(p) for p in (await direct.list_prompts()).prompts]
        async with _gateway(tmp_path) as gateway:
            seen["g_prompts"] = [_dump(p) for p in (await gateway.list_prompts()).prompts]
            got = await gateway.get_prompt("library__mcp-demo", {"topic": "databases"})
            seen["g_get"] = _dump(got)
            ref = types.PromptReference(name="library__mcp-demo")
            seen["g_complete"] = _dump(await gateway.complete(ref, {"name": "topic", "value": "d"}))
            tref = types.ResourceTemplateReference(uri="library+note://{name}")
            got = await gateway.complete(tref, {"name": "name", "value": "b"})
            seen["g_tcomplete"] = _dump(got)
            errors = {}
            for name in ["vault__mcp-demo", "nowhere__mcp-demo", "mcp-demo"]:
                with pytest.raises(MCPError) as caught:
                    await gateway.get_prompt(name, {"topic": "x"})
                errors[name] = (caught.value.code, caught.value.message.replace(name, "NAME"))
            seen["errors"] = errors
        return seen

    seen = asyncio.run(run())
    expected = [{**p, "name": f"library__{p['name']}"} for p in seen["library"]]
    expected += [{**p, "name": f"fetch__{p['name']}"} for p in seen["fetch"]]
    assert seen["fetch"]  # mcp-server-fetch offers its fetch prompt
    assert sorted(seen["g_prompts"], key=lambda p: p["name"]) == sorted(
        expected, key=lambda p: p["name"]
    )
    assert seen["g_get"] == seen["get"]
    assert seen["g_complete"] == seen["complete"] and seen["complete"]["completion"]["values"]
    assert seen["g_tcomplete"] == seen["tcomplete"]
    assert seen["tcomplete"]["completion"]["values"] == ["beta", "bravo"]
    assert not any("vault" in p["name"] for p in seen["g_prompts"])
    errors = seen["errors"]
    assert errors["vault__mcp-demo"] == errors["nowhere__mcp-demo"] == errors["mcp-demo"]


class _Updates:
    """A client message handler keeping every ``notifications/resources/updated`` URI."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self.arrived = asyncio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.uris.append(message.params.uri)
            self.arrived.set()


def test_a_subscribed_resource_update_reaches_the_client(tmp_path: Path) -> None:
    _config(tmp_path)

    async def run() -> tuple[list[str], str, str]:
        updates = _Updates()
        async with _gateway(tmp_path, updates) as gateway:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # resources/subscribe is 2025-era: still served
                await gateway.subscribe_resource("library+memo://insights")
            await gateway.call_tool("ToolSearch", {"select": ["library__update_memo"]})
            await gateway.call_tool("library__update_memo", {})
            await asyncio.wait_for(updates.arrived.wait(), TIMEOUT)
            read = await gateway.read_resource("library+memo://insights")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await gateway.unsubscribe_resource("library+memo://insights")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with pytest.raises(MCPError) as denied:
                    await gateway.subscribe_resource("vault+memo://insights")
            return updates.uris, read.contents[0].text, denied.value.message  # type: ignore[union-attr]

    uris, text, denied = asyncio.run(run())
    assert uris == ["library+memo://insights"]
    assert text == "Insight: the gateway forwards resources."
    assert "not found" in denied.lower()


MCP1_PYTHON = os.environ.get("TOOLSURFACE_MCP1_PYTHON", "")


def _has_sqlite() -> bool:
    if not MCP1_PYTHON or not Path(MCP1_PYTHON).exists():
        return False
    probe = subprocess.run([MCP1_PYTHON, "-c", "import mcp_server_sqlite"], check=False)
    return probe.returncode == 0


def test_mcp_server_sqlite_keeps_its_memo_and_prompt_through_the_gateway(tmp_path: Path) -> None:
    if not _has_sqlite():
        pytest.skip(
            "mcp-server-sqlite runs only on mcp 1.x and this project tests on mcp 2.x: set "
            "TOOLSURFACE_MCP1_PYTHON to a Python with 'mcp<2' and mcp-server-sqlite installed"
        )
    code = "from mcp_server_sqlite import main; main()"
    args = ["-c", code, "--db-path", str(tmp_path / "notes.db")]
    servers = {"sqlite": {"command": MCP1_PYTHON, "args": args}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}), "utf-8")
    (tmp_path / "policy.json").write_text("{}", "utf-8")

    async def run() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with _session(MCP1_PYTHON, args) as direct:
            seen["resources"] = _resources(await direct.list_resources())
            seen["prompts"] = [_dump(p) for p in (await direct.list_prompts()).prompts]
            seen["read"] = _dump(await direct.read_resource("memo://insights"))
            seen["get"] = _dump(await direct.get_prompt("mcp-demo", {"topic": "shipping"}))
        async with _gateway(tmp_path) as gateway:
            seen["g_resources"] = _resources(await gateway.list_resources())
            seen["g_prompts"] = [_dump(p) for p in (await gateway.list_prompts()).prompts]
            seen["g_read"] = _dump(await gateway.read_resource("sqlite+memo://insights"))
            got = await gateway.get_prompt("sqlite__mcp-demo", {"topic": "shipping"})
            seen["g_get"] = _dump(got)
        return seen

    seen = asyncio.run(run())
    assert "memo://insights" in seen["resources"]
    assert seen["g_resources"] == {
        f"sqlite+{uri}": {**item, "uri": f"sqlite+{uri}"} for uri, item in seen["resources"].items()
    }
    assert [p["name"] for p in seen["prompts"]] == ["mcp-demo"]
    assert seen["g_prompts"] == [{**p, "name": f"sqlite__{p['name']}"} for p in seen["prompts"]]
    contents = seen["read"]["contents"]
    assert seen["g_read"]["contents"] == [{**c, "uri": f"sqlite+{c['uri']}"} for c in contents]
    assert seen["g_get"] == seen["get"] and "shipping" in json.dumps(seen["get"])


class _Client:
    """A client's side of the server's requests: a model, a user, roots; logs and progress kept."""

    def __init__(self, answer: str = "4") -> None:
        self.answer = answer
        self.asked: list[tuple[str, dict[str, Any]]] = []
        self.logs: list[dict[str, Any]] = []
        self.progress: list[tuple[float, float | None, str | None]] = []

    async def sampling(self, context: Any, params: Any) -> types.CreateMessageResult:
        self.asked.append(("sampling", _dump(params)))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=self.answer),
            model="tiny-1",
        )

    async def elicitation(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(("elicitation", _dump(params)))
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def roots(self, context: Any) -> types.ListRootsResult:
        self.asked.append(("roots", {}))
        root = types.Root(uri="file:///home/ada/project", name="project")  # type: ignore[arg-type]
        return types.ListRootsResult(roots=[root])

    async def logging(self, params: Any) -> None:
        self.logs.append(_dump(params))

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))

    def session(self, read: Any, write: Any) -> ClientSession:
        return ClientSession(
            read,
            write,
            sampling_callback=self.sampling,
            elicitation_callback=self.elicitation,
            list_roots_callback=self.roots,
            logging_callback=self.logging,
        )


TALKERS = ["ask_model", "ask_user", "show_roots", "chatty"]


async def _talk(session: Any, client: _Client, prefix: str) -> list[str]:
    texts = []
    for name in TALKERS:
        result = await asyncio.wait_for(
            session.call_tool(f"{prefix}{name}", {}, progress_callback=client.on_progress),
            TIMEOUT,
        )
        texts.append("\n".join(c.text for c in result.content))
    return texts


@asynccontextmanager
async def _client_session(args: list[str], client: _Client) -> AsyncIterator[Any]:
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_PARENT)}
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
        async with (
            stdio_client(params, errlog=log) as (read, write),
            client.session(read, write) as session,
        ):
            await asyncio.wait_for(session.initialize(), TIMEOUT)
            yield session


def test_an_upstreams_requests_during_a_call_reach_the_client_that_made_it(tmp_path: Path) -> None:
    _config(tmp_path)
    gateway_args = ["-m", "toolsurface.cli", "gateway", "--config", str(tmp_path / "mcp.json")]
    gateway_args += ["--policy", str(tmp_path / "policy.json")]

    async def run() -> tuple[_Client, list[str], _Client, list[str]]:
        direct, through = _Client(), _Client()
        async with _client_session([str(LIBRARY)], direct) as session:
            direct_texts = await _talk(session, direct, "")
        async with _client_session(gateway_args, through) as session:
            names = [f"library__{n}" for n in TALKERS]
            await session.call_tool("ToolSearch", {"select": names})
            through_texts = await _talk(session, through, "library__")
        return direct, direct_texts, through, through_texts

    direct, direct_texts, through, through_texts = asyncio.run(run())
    assert direct_texts == [
        "the model said: 4 (tiny-1)",
        "elicitation: accept {'name': 'Ada'}",
        "roots: file:///home/ada/project",
        "done chatting",
    ]
    assert through_texts == direct_texts
    assert through.asked == direct.asked  # the same requests, asked of the client as they were
    assert [kind for kind, _ in direct.asked] == ["sampling", "elicitation", "roots"]
    assert through.logs == direct.logs and len(direct.logs) == 3
    assert (
        through.progress
        == direct.progress
        == [
            (1.0, 3.0, "step 0"),
            (2.0, 3.0, "step 1"),
            (3.0, 3.0, "step 2"),
        ]
    )


@asynccontextmanager
async def _http_session(url: str, client: _Client) -> AsyncIterator[Any]:
    timeout = httpx2.Timeout(30.0, read=60.0)
    async with (
        httpx2.AsyncClient(timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        client.session(read, write) as session,
    ):
        await asyncio.wait_for(session.initialize(), TIMEOUT)
        yield session


def test_over_http_an_upstreams_requests_reach_the_calling_session(tmp_path: Path) -> None:
    _config(tmp_path)

    async def run() -> tuple[_Client, list[str], _Client, list[str], list[str]]:
        direct, through = _Client(), _Client()
        async with _client_session([str(LIBRARY)], direct) as session:
            direct_texts = await _talk(session, direct, "")
        with GatewayProcess(tmp_path) as gateway:
            async with _http_session(gateway.url, through) as session:
                names = [f"library__{n}" for n in TALKERS]
                await session.call_tool("ToolSearch", {"select": names})
                through_texts = await _talk(session, through, "library__")
                listed = await session.list_resources()
                prompts = await session.list_prompts()
        uris = [r.uri for r in listed.resources] + [p.name for p in prompts.prompts]
        return direct, direct_texts, through, through_texts, uris

    direct, direct_texts, through, through_texts, uris = asyncio.run(run())
    # Sampling, elicitation and roots ride on the session's GET stream, answered by a POST.
    assert through_texts == direct_texts and direct_texts[-1] == "done chatting"
    assert through.asked == direct.asked and len(direct.asked) == 3
    assert through.logs == direct.logs and len(direct.logs) == 3
    assert through.progress == direct.progress and len(direct.progress) == 3
    assert "library+memo://insights" in uris and "library__mcp-demo" in uris


def test_two_sessions_sharing_an_upstream_each_get_only_their_own_progress(tmp_path: Path) -> None:
    _config(tmp_path)

    async def one(url: str, client: _Client, who: str) -> list[str]:
        async with _http_session(url, client) as session:
            await session.call_tool("ToolSearch", {"select": ["library__chatty"]})
            calls = [
                session.call_tool(
                    "library__chatty", {"who": who}, progress_callback=client.on_progress
                )
                for _ in range(3)
            ]
            results = await asyncio.wait_for(asyncio.gather(*calls), TIMEOUT)
            return ["\n".join(c.text for c in r.content) for r in results]

    async def run() -> tuple[list[_Client], list[list[str]]]:
        clients = [_Client(), _Client()]
        with GatewayProcess(tmp_path) as gateway:
            runs = (one(gateway.url, c, w) for c, w in zip(clients, "AB", strict=True))
            texts = await asyncio.gather(*runs)
        return clients, list(texts)

    clients, texts = asyncio.run(run())
    assert texts == [["done chatting"] * 3] * 2
    for client in clients:
        # Three calls, three steps each: every step of its own calls, none of the other's.
        assert sorted(client.progress) == sorted(
            [(float(i + 1), 3.0, f"step {i}") for i in range(3)] * 3
        )
    # A log message is never shown to another session: while both sessions' calls run, the
    # upstream's log lines cannot be told apart and are dropped (shown alone: tests above).
    for client, who in zip(clients, "AB", strict=True):
        assert all(log["data"].startswith(f"{who}: ") for log in client.logs)


class _Heard:
    """A client message handler keeping the method of every notification, in order."""

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
async def _listening(url: str, heard: _Heard) -> AsyncIterator[Any]:
    timeout = httpx2.Timeout(30.0, read=60.0)
    async with (
        httpx2.AsyncClient(timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, message_handler=heard) as session,
    ):
        await asyncio.wait_for(session.initialize(), TIMEOUT)
        yield session


TOOLS_CHANGED = "notifications/tools/list_changed"


def test_http_sessions_hear_of_an_upstream_going_and_coming_back_on_their_get_stream(
    tmp_path: Path,
) -> None:
    flaky = Path(__file__).resolve().parents[1] / "mcp_servers" / "flaky_server.py"
    gate, pidfile = tmp_path / "gate", tmp_path / "pid"
    servers = {
        "weather": {"command": sys.executable, "args": [str(flaky), str(pidfile), str(gate)]},
        "library": {"command": sys.executable, "args": [str(LIBRARY)]},
    }
    fast = {"retryBase": 0.05, "retryCap": 0.3, "pingInterval": 1, "connectTimeout": 10}
    config = {"mcpServers": servers, "toolsurface": fast}
    (tmp_path / "mcp.json").write_text(json.dumps(config), "utf-8")
    (tmp_path / "policy.json").write_text("{}", "utf-8")

    async def run(url: str) -> tuple[_Heard, _Heard, list[str], list[str]]:
        loaded, idle = _Heard(), _Heard()
        async with _listening(url, loaded) as session, _listening(url, idle) as quiet:
            idle_before = [t.name for t in (await quiet.list_tools()).tools]
            await session.call_tool("ToolSearch", {"select": ["weather__get_weather_forecast"]})
            await session.list_tools()
            before = loaded.methods.count(TOOLS_CHANGED)  # the load's own, on its response
            gate.write_text("down", "utf-8")
            os.kill(int(pidfile.read_text("utf-8")), signal.SIGKILL)
            # No request is made: the news can only come on the GET stream.
            await asyncio.wait_for(loaded.wait_for(TOOLS_CHANGED, before + 1), TIMEOUT)
            down = [t.name for t in (await session.list_tools()).tools]
            gate.unlink()
            await asyncio.wait_for(loaded.wait_for(TOOLS_CHANGED, before + 2), TIMEOUT)
            back = [t.name for t in (await session.list_tools()).tools]
            idle_after = [t.name for t in (await quiet.list_tools()).tools]
        assert idle_before == idle_after == ["ToolSearch"]  # the library keeps ToolSearch
        return loaded, idle, down, back

    with GatewayProcess(tmp_path) as gateway:
        _, idle, down, back = asyncio.run(run(gateway.url))
    assert down == ["ToolSearch"]
    assert back == ["ToolSearch", "weather__get_weather_forecast"]
    # The session with nothing of the upstream loaded: its list never moved, so it is never
    # told to list tools again (its resources and prompts lists may be: weather's come, go).
    assert TOOLS_CHANGED not in idle.methods


def test_http_subscriptions_are_told_on_the_get_stream(tmp_path: Path) -> None:
    _config(tmp_path)

    async def run(url: str) -> list[str]:
        heard = _Heard()
        async with _listening(url, heard) as session:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # resources/subscribe is 2025-era: still served
                await session.subscribe_resource("library+memo://insights")
            async with _listening(url, _Heard()) as other:  # another session makes the change
                await other.call_tool("ToolSearch", {"select": ["library__update_memo"]})
                await other.call_tool("library__update_memo", {})
            await asyncio.wait_for(heard.wait_for("notifications/resources/updated", 1), TIMEOUT)
        return heard.uris

    with GatewayProcess(tmp_path) as gateway:
        uris = asyncio.run(run(gateway.url))
    assert uris == ["library+memo://insights"]


def test_a_sessions_model_is_never_asked_for_another_sessions_call(tmp_path: Path) -> None:
    _config(tmp_path)

    async def one(url: str, client: _Client) -> list[str]:
        async with _http_session(url, client) as session:
            await session.call_tool("ToolSearch", {"select": ["library__ask_model"]})
            calls = [session.call_tool("library__ask_model", {}) for _ in range(4)]
            results = await asyncio.wait_for(asyncio.gather(*calls), TIMEOUT)
            return ["\n".join(c.text for c in r.content) for r in results]

    async def run() -> list[list[str]]:
        clients = [_Client("four"), _Client("vier")]
        with GatewayProcess(tmp_path) as gateway:
            return list(await asyncio.gather(*(one(gateway.url, c) for c in clients)))

    texts = asyncio.run(run())
    # Each call is answered by its own session's model, or (while both sessions' calls run
    # on the one upstream connection) refused with a reason: never by the other's model.
    for mine, theirs, answers in zip(("four", "vier"), ("vier", "four"), texts, strict=True):
        for text in answers:
            assert f"said: {theirs}" not in text
            assert f"said: {mine}" in text or "several client sessions" in text, text


def test_a_client_that_cancels_its_call_cancels_it_upstream(tmp_path: Path) -> None:
    _config(tmp_path)

    async def cancel(session: Any, name: str, marker: Path) -> str:
        call = asyncio.ensure_future(session.call_tool(name, {"marker": str(marker)}))
        await asyncio.sleep(1.0)  # the call is running upstream
        call.cancel()  # the SDK's client sends notifications/cancelled for it
        for _ in range(200):
            if marker.exists():
                return marker.read_text("utf-8")
            await asyncio.sleep(0.05)
        return "not cancelled"

    async def run() -> tuple[str, str]:
        async with _session(sys.executable, [str(LIBRARY)]) as direct:
            direct_seen = await cancel(direct, "slow", tmp_path / "direct")
        async with _gateway(tmp_path) as gateway:
            await gateway.call_tool("ToolSearch", {"select": ["library__slow"]})
            through_seen = await cancel(gateway, "library__slow", tmp_path / "through")
        return direct_seen, through_seen

    assert asyncio.run(run()) == ("cancelled", "cancelled")
