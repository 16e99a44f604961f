"""``toolsurface gateway --learn FILE``: the gateway learns from its sessions and keeps it.

The gateway runs as a process fronting the project's demo server, driven by the MCP SDK's
own client over stdio (the harness of ``test_gateway_upstreams``), one gateway process a
session (``--session NAME``). A request the model searched and then followed by calling
one of the tools found is taught (issue 24's learned hints, through
``ToolSurface(learn_from_usage=True)``), written to FILE, and read back by the next
gateway. What sessions teach ranks once three distinct sessions taught it, and then only
reorders the tools the request's own words find (issue 40): one session that teaches a
pair twenty times steers no other session's search. A blocked tool is never taught; a
broken FILE stops the gateway with an error naming it, before any upstream starts.
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

#: Engine-agnostic (tests/conftest.py): what is checked here is the gateway's learning
#: (sessions, the file, the policy), which is Python; the engines rank a learned request
#: alike (tests/retrieval/test_learned.py holds them to it), so each test runs once, on the
#: engine of the suite the split gives it: eight gateway processes a test are not run twice.
pytestmark = pytest.mark.engine_agnostic

ONCALL = "ops__get_oncall_schedule"
#: A request whose best words are another tool's: the tool is found, but third.
REQUEST = "show which engineer has the shift"
#: Other words of the same request, which find another tool first before anything is learned.
OTHER = "show the shift engineers"
ROLLBACK = "ops__rollback_deploy"


def _first_found(text: str) -> str:
    """The first tool a ToolSearch answer lists."""
    return text.splitlines()[1].removeprefix("- ").split("(", 1)[0]


def _demo(tmp_path: Path) -> None:
    demo = {"command": sys.executable, "args": [str(SERVERS / "demo_server.py")]}
    _write(tmp_path, {"ops": demo}, policy={"servers": {"ops": {"deny": ["page_oncall"]}}})


async def _search(tmp_path: Path, learn: Path, session: str, query: str) -> str:
    """A fresh session's ToolSearch answer for ``query``."""
    async with _gateway(tmp_path, "--learn", str(learn), "--session", session) as gw:
        return (await gw.call("ToolSearch", {"query": query}))[0]


def test_a_request_three_sessions_followed_is_kept_and_ranks_first_after_a_restart(
    tmp_path: Path,
) -> None:
    _demo(tmp_path)
    learn = tmp_path / "learned.json"

    async def follow(session: str) -> str:
        async with _gateway(tmp_path, "--learn", str(learn), "--session", session) as gw:
            found = (await gw.call("ToolSearch", {"query": REQUEST}))[0]
            assert ONCALL in found  # found, so the call that follows teaches
            refused = await gw.call("ops__page_oncall", {"team": "infra", "message": "hi"})
            assert refused[1]  # blocked: refused as unknown, and it teaches nothing
            ran = await gw.call(ONCALL, {"team": "infra"})
            assert not ran[1]
            return found

    async def run() -> tuple[str, str, str, str, str]:
        before = await follow("one")
        await follow("two")
        two = await _search(tmp_path, learn, "reader", REQUEST)
        await follow("three")
        again = await _search(tmp_path, learn, "reader", REQUEST)
        other = await _search(tmp_path, learn, "reader", OTHER)
        return before, two, again, other, learn.read_text("utf-8")

    before, two, again, other, kept = asyncio.run(run())
    assert _first_found(before) != ONCALL
    assert _first_found(two) != ONCALL  # two sessions of three: not yet
    assert _first_found(again) == ONCALL  # what three sessions taught, the next one knows
    assert _first_found(other) == ONCALL  # and for other words of the same request
    data = json.loads(kept)
    assert data["format"] == "toolsurface-learned"
    [row] = data["tools"][ONCALL]
    assert (row["query"], row["count"], len(row["sessions"]), row["host"]) == (
        REQUEST,
        3,
        3,
        False,
    )
    assert list(data["tools"]) == [ONCALL]  # the blocked tool called first: never taught


def test_one_session_pairing_a_request_with_a_destructive_tool_twenty_times_steers_no_one(
    tmp_path: Path,
) -> None:
    """The attack of issue 40: one session teaches a pair twenty times, then more sessions."""
    _demo(tmp_path)
    learn = tmp_path / "learned.json"
    victim = "who is on call for the payments team"
    bait = f"{victim}, then roll back the deploy"

    async def teach(session: str, times: int) -> None:
        async with _gateway(tmp_path, "--learn", str(learn), "--session", session) as gw:
            for _ in range(times):
                found = (await gw.call("ToolSearch", {"query": bait}))[0]
                assert ROLLBACK in found
                ran = await gw.call(ROLLBACK, {"service": "payments"})
                assert not ran[1]

    async def run() -> tuple[str, str, str, str]:
        before = await _search(tmp_path, learn, "victim", victim)
        await teach("attacker", 20)
        after_one = await _search(tmp_path, learn, "victim", victim)
        one = learn.read_text("utf-8")
        for i in range(4):  # more sessions, each its own: past the three a hint needs
            await teach(f"attacker {i}", 1)
        return before, after_one, one, await _search(tmp_path, learn, "victim", victim)

    before, after_one, one, after_many = asyncio.run(run())
    [row] = json.loads(one)["tools"][ROLLBACK]
    assert (row["count"], len(row["sessions"])) == (1, 1)  # twenty calls, counted once
    for answer in (after_one, after_many):
        assert _first_found(answer) == _first_found(before) == ONCALL
        assert ROLLBACK not in answer  # never lifted into a search its words do not reach


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


def test_an_old_files_unchecked_requests_are_reported_when_the_gateway_starts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from toolsurface.gateway.server import Gateway

    learn = tmp_path / "learned.json"
    old = {
        "format": "toolsurface-learned",
        "version": 1,
        "cap": 32,
        "clock": 1,
        "tools": {"ToolSearch": [{"query": "find a tool", "count": 1, "last": 1}]},
    }
    learn.write_text(json.dumps(old), "utf-8")
    with caplog.at_level("WARNING", logger="toolsurface.gateway"):
        Gateway([], learn=learn)
    said = [r.getMessage() for r in caplog.records]
    assert any("1 learned request(s)" in m and str(learn) in m for m in said), said
