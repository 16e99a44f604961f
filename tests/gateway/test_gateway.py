"""The MCP gateway (issue 25), tested through the MCP SDK's own client over stdio.

The gateway runs as a real process (``toolsurface gateway``) fronting real servers: the
project's demo ops server and ``mcp-server-time`` from PyPI. The client lists, searches in
English and Russian, loads, calls, sees ``tools/list_changed``, never sees a blocked tool,
and a gateway restarted mid-session lists the same tools.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the gateway needs the mcp extra")
from gateway_procs import Changes  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

from toolsurface.gateway.config import (  # noqa: E402
    GatewayConfigError,
    parse_policy,
    read_config,
    read_policy,
)
from toolsurface.gateway.upstreams import RESULT_MAX_BLOCKS  # noqa: E402

DEMO_SERVER = Path(__file__).resolve().parents[1] / "mcp_servers" / "demo_server.py"
TIMEOUT = 60.0


def _config(tmp: Path) -> Path:
    servers: dict[str, Any] = {"ops": {"command": sys.executable, "args": [str(DEMO_SERVER)]}}
    try:
        import mcp_server_time  # noqa: F401

        args = ["-m", "mcp_server_time", "--local-timezone", "Etc/UTC"]
        servers["time"] = {"command": sys.executable, "args": args}
    except ImportError:  # pragma: no cover - a test dependency
        pass
    path = tmp / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), "utf-8")
    policy = tmp / "policy.json"
    policy.write_text(json.dumps({"servers": {"ops": {"deny": ["rotate_secret"]}}}), "utf-8")
    return path


@asynccontextmanager
async def _gateway(tmp: Path, changes: Changes) -> AsyncIterator[ClientSession]:
    args = [
        "-m",
        "toolsurface.cli",
        "gateway",
        "--config",
        str(tmp / "mcp.json"),
        "--policy",
        str(tmp / "policy.json"),
        "--store",
        str(tmp / "store"),
    ]
    params = StdioServerParameters(command=sys.executable, args=args)
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
        async with (
            stdio_client(params, errlog=log) as (read, write),
            ClientSession(read, write, message_handler=changes) as session,
        ):
            await asyncio.wait_for(session.initialize(), TIMEOUT)
            yield session


def _names(listed: Any) -> list[str]:
    return [t.name for t in listed.tools]


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def test_a_client_searches_loads_and_calls_through_the_gateway(tmp_path: Path) -> None:
    _config(tmp_path)

    async def run() -> tuple[list[list[str]], list[str], int]:
        changes = Changes()
        async with _gateway(tmp_path, changes) as session:
            first = _names(await session.list_tools())
            found = await session.call_tool("ToolSearch", {"query": "restart a service"})
            second = _names(await session.list_tools())
            ru = await session.call_tool("ToolSearch", {"query": "покажи дежурных по команде"})
            third = _names(await session.list_tools())
            ran = await session.call_tool(
                "ops__restart_service", {"service": "api", "environment": "staging"}
            )
            blocked = await session.call_tool("ToolSearch", {"select": ["ops__rotate_secret"]})
            called = await session.call_tool("ops__rotate_secret", {"name": "db"})
            texts = [_text(found), _text(ru), _text(ran), _text(blocked), _text(called)]
            return [first, second, third], texts, changes.count

    lists, texts, changed = asyncio.run(run())
    first, second, third = lists
    assert first == ["ToolSearch"]  # every upstream is held back: only ToolSearch is listed
    assert "ops__restart_service" in second and second[0] == "ToolSearch"
    assert "ops__get_oncall_schedule" in third
    assert changed >= 2  # each load told the client to list again
    assert "restart" in texts[2].lower() and "api" in texts[2]
    assert all("rotate_secret" not in n for n in third)
    assert (
        "Unknown tool 'ops__rotate_secret'" in texts[3]
        and "rotate" not in texts[3].split("Nearest")[-1]
    )
    assert texts[4].startswith("Unknown tool 'ops__rotate_secret'")  # a blocked tool is unknown


def test_a_restarted_gateway_resumes_the_session_with_the_same_tools(tmp_path: Path) -> None:
    _config(tmp_path)

    async def first_run() -> list[str]:
        async with _gateway(tmp_path, Changes()) as session:
            await session.call_tool("ToolSearch", {"select": ["ops__list_tickets"]})
            return _names(await session.list_tools())

    async def second_run() -> tuple[list[str], str | None]:
        async with _gateway(tmp_path, Changes()) as session:
            return _names(await session.list_tools()), None

    before = asyncio.run(first_run())
    after, _ = asyncio.run(second_run())
    assert "ops__list_tickets" in before and after == before


def test_the_instructions_carry_the_catalogue(tmp_path: Path) -> None:
    _config(tmp_path)

    async def run() -> str:
        async with _gateway(tmp_path, Changes()) as session:
            init = session.initialize_result if hasattr(session, "initialize_result") else None
            if init is None:  # the SDK keeps it only on newer sessions: ask again
                init = await session.initialize()
            return init.instructions or ""

    instructions = asyncio.run(run())
    assert "<tool_catalogue>" in instructions and "- ops:" in instructions


def test_config_and_policy_errors_name_the_place(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"mcpServers": {"x": {"args": []}}}), "utf-8")
    with pytest.raises(GatewayConfigError, match=r"mcpServers\.x\.command"):
        read_config(bad)
    bad.write_text(json.dumps({"mcpServers": {"x": {"url": "ftp://h"}}}), "utf-8")
    with pytest.raises(GatewayConfigError, match=r"mcpServers\.x\.url: must be an http"):
        read_config(bad)
    bad.write_text(json.dumps({"alow": []}), "utf-8")
    with pytest.raises(GatewayConfigError, match="unknown field 'alow'"):
        read_policy(bad)


def test_a_policy_or_client_naming_no_server_of_the_config_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A misspelt ``servers.<name>`` would apply its deny to nothing; the gateway refuses to
    start, naming the section and the config's servers (a disabled one counts as known)."""
    from toolsurface.cli import main
    from toolsurface.gateway.clients import read_clients

    config = tmp_path / "mcp.json"
    servers = {
        "ops": {"command": sys.executable, "args": [str(DEMO_SERVER)]},
        "old": {"command": "nothing", "disabled": True},
    }
    config.write_text(json.dumps({"mcpServers": servers}), "utf-8")
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"servers": {"opps": {"deny": ["*"]}}}), "utf-8")
    assert main(["gateway", "--config", str(config), "--policy", str(policy)]) == 2
    err = capsys.readouterr().err
    assert "servers: 'opps' is no server of the config (its servers: old, ops)" in err
    tokens = tmp_path / "clients.json"
    alice = {"token": "0123456789abcdefgh", "upstreams": ["nope"]}
    tokens.write_text(json.dumps({"clients": {"alice": alice}}), "utf-8")
    with pytest.raises(GatewayConfigError, match=r"clients\.alice\.upstreams: 'nope' is no"):
        read_clients(tokens, {"ops", "old"})
    alice = {"token": "0123456789abcdefgh", "servers": {"old": {"deny": ["x"]}}}
    tokens.write_text(json.dumps({"clients": {"alice": alice}}), "utf-8")
    assert len(read_clients(tokens, {"ops", "old"})) == 1
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, "utf-8")
    with pytest.raises(GatewayConfigError, match=r"policy .*deep\.json: JSON nested too deeply"):
        read_policy(deep)


def _owner(name: str) -> tuple[str, str] | None:
    upstream, _, local = name.partition("__")
    return (upstream, local) if local else None


CLOSED: list[tuple[dict[str, Any], set[str]]] = [
    ({}, set()),
    ({"deny": ["payroll__*"]}, {"payroll"}),
    ({"deny": ["pay*"]}, {"payroll"}),
    ({"deny": ["*"]}, {"payroll", "library"}),
    ({"deny": ["payroll__get_*"]}, set()),  # not every name: its other tools pass
    ({"allow": ["library__*"]}, {"payroll"}),
    ({"allow": ["library__*", "*__search"]}, set()),  # "payroll__search" would pass
    ({"allow": ["lib*"]}, {"payroll"}),
    ({"servers": {"payroll": {"deny": ["*"]}}}, {"payroll"}),
    ({"servers": {"payroll": {"deny": ["get_*"]}}}, set()),
]


@pytest.mark.parametrize(("policy", "closed"), CLOSED)
def test_a_policy_says_which_upstreams_it_closes_whole(
    policy: dict[str, Any], closed: set[str]
) -> None:
    # What /readyz and /metrics leave unnamed for a client: an upstream it can meet
    # nothing of (tools, prompts, URIs all start "upstream__").
    read = parse_policy(policy, "test")
    assert {u for u in ("payroll", "library") if read.closes(u)} == closed
    for upstream in closed:
        for local in ("get_salary", "search", "memo://x"):
            assert not read.admits(f"{upstream}__{local}", _owner)


def test_a_result_of_too_many_content_blocks_is_a_tool_error_naming_its_count(
    tmp_path: Path,
) -> None:
    # An upstream that floods the gateway with blocks: reading each would hold every other
    # client; the call is answered with its count instead, and the gateway serves on.
    flood = Path(__file__).resolve().parents[1] / "mcp_servers" / "flood_server.py"
    servers = {
        "ops": {"command": sys.executable, "args": [str(DEMO_SERVER)]},
        "flood": {"command": sys.executable, "args": [str(flood)]},
    }
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}), "utf-8")
    (tmp_path / "policy.json").write_text("{}", "utf-8")

    async def run() -> tuple[Any, Any, Any]:
        async with _gateway(tmp_path, Changes()) as session:
            await session.call_tool("ToolSearch", {"select": ["flood__flood", "ops__list_tickets"]})
            too_many = await session.call_tool("flood__flood", {"blocks": RESULT_MAX_BLOCKS + 1})
            at_most = await session.call_tool("flood__flood", {"blocks": 3})
            after = await session.call_tool("ops__list_tickets", {})
            return too_many, at_most, after

    too_many, at_most, after = asyncio.run(run())
    assert too_many.is_error
    assert f"answered {RESULT_MAX_BLOCKS + 1:,} content blocks" in _text(too_many)
    assert [c.text for c in at_most.content] == ["line 0", "line 1", "line 2"]
    assert not at_most.is_error and not after.is_error
