"""``toolsurface gateway --learn FILE``: the gateway learns from its sessions and keeps it.

The gateway runs as a process fronting the project's demo server, driven by the MCP SDK's
own client over stdio (the harness of ``test_gateway_upstreams``). A request the model
searched and then followed by calling one of the tools found is taught (issue 24's learned
hints, through ``ToolSurface(learn_from_usage=True)``), written to FILE, and read back by the
next gateway, which then ranks that tool first for the same words and for other words of
the same request; a blocked tool is never taught; a broken FILE stops the gateway with an
error naming it, before any upstream starts.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the gateway needs the mcp extra")
from test_gateway_upstreams import SERVERS, _gateway, _write

from toolsurface.cli import main

ONCALL = "ops__get_oncall_schedule"
#: A request whose words are not the description's: the tool is found, but third.
REQUEST = "дежурный на сегодня"
#: Other words of the same request, which find another tool first before anything is learned.
OTHER = "нужен сегодняшний дежурный"


def _first_found(text: str) -> str:
    """The first tool a ToolSearch answer lists."""
    return text.splitlines()[1].removeprefix("- ").split("(", 1)[0]


def test_a_followed_search_is_learned_kept_and_ranks_first_after_a_restart(
    tmp_path: Path,
) -> None:
    demo = {"command": sys.executable, "args": [str(SERVERS / "demo_server.py")]}
    _write(tmp_path, {"ops": demo}, policy={"servers": {"ops": {"deny": ["page_oncall"]}}})
    learn = tmp_path / "learned.json"

    async def run() -> tuple[str, str, str, str]:
        async with _gateway(tmp_path, "--learn", str(learn)) as gw:
            before = (await gw.call("ToolSearch", {"query": REQUEST}))[0]
            assert ONCALL in before  # found, so the call that follows teaches
            refused = await gw.call("ops__page_oncall", {"team": "infra", "message": "hi"})
            assert refused[1]  # blocked: refused as unknown, and it teaches nothing
            ran = await gw.call(ONCALL, {"team": "infra"})
            assert not ran[1]
        async with _gateway(tmp_path, "--learn", str(learn)) as gw:
            again = (await gw.call("ToolSearch", {"query": REQUEST}))[0]
            other = (await gw.call("ToolSearch", {"query": OTHER}))[0]
        return before, again, other, learn.read_text("utf-8")

    before, again, other, kept = asyncio.run(run())
    assert _first_found(before) != ONCALL
    assert _first_found(again) == ONCALL  # what the first gateway learned, the next one knows
    assert _first_found(other) == ONCALL  # and for other words of the same request
    data = json.loads(kept)
    assert data["format"] == "toolsurface-learned"
    assert [r["query"] for r in data["tools"][ONCALL]] == [REQUEST]
    assert list(data["tools"]) == [ONCALL]  # the blocked tool called first: never taught


def test_without_learn_nothing_is_written_and_nothing_learned(tmp_path: Path) -> None:
    _write(
        tmp_path, {"ops": {"command": sys.executable, "args": [str(SERVERS / "demo_server.py")]}}
    )

    async def run() -> tuple[str, str]:
        async with _gateway(tmp_path) as gw:
            await gw.call("ToolSearch", {"query": REQUEST})
            await gw.call(ONCALL, {"team": "infra"})
            again = (await gw.call("ToolSearch", {"query": REQUEST}))[0]
            return again, (await gw.call("ToolSearch", {"query": OTHER}))[0]

    again, other = asyncio.run(run())
    assert _first_found(again) != ONCALL
    assert _first_found(other) != ONCALL
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gateway.log", "mcp.json", "policy.json"]


def test_a_broken_learn_file_stops_the_gateway_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(
        tmp_path, {"ops": {"command": sys.executable, "args": [str(SERVERS / "demo_server.py")]}}
    )
    learn = tmp_path / "learned.json"
    learn.write_text('{"format": "toolsurface-learned", "version": 1, "tools": 3}', "utf-8")
    args = ["gateway", "--config", str(tmp_path / "mcp.json"), "--learn", str(learn)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert str(learn) in err and "tools" in err
